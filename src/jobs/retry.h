// SPDX-License-Identifier: Apache-2.0
// Retry rules of offline jobs: which failures are worth another attempt, and
// how long to wait before it (exponential backoff with jitter). Pure functions,
// so the schedule is testable without a clock.
#ifndef FERRY_JOBS_RETRY_H_
#define FERRY_JOBS_RETRY_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ferry {

struct BackoffOptions {
  absl::Duration initial = absl::Seconds(1);
  double multiplier = 2.0;
  absl::Duration max = absl::Minutes(5);
  // The delay is scaled by (1 + jitter * u), u uniform in [-1, 1], so records
  // that failed together do not retry in lockstep.
  double jitter = 0.1;
};

// The wait after the `failures`-th failed attempt (1-based):
// initial * multiplier^(failures-1), capped at max, then jittered by `u`
// (in [-1, 1]; 0 gives the plain schedule 1 s, 2 s, 4 s, ...).
absl::Duration RetryBackoff(int failures, const BackoffOptions& options,
                            double u);

// Transient: the same request may succeed later (the engine failed, the queue
// was full, the model is reloading, a queue timeout). Permanent: retrying
// cannot help (the record itself is wrong, the model does not exist).
bool IsTransientFailure(const absl::Status& status);

}  // namespace ferry

#endif  // FERRY_JOBS_RETRY_H_
