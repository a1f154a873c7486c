// SPDX-License-Identifier: Apache-2.0
#include "jobs/retry.h"

#include <algorithm>
#include <cmath>

namespace ferry {

absl::Duration RetryBackoff(int failures, const BackoffOptions& options,
                            double u) {
  const int n = std::max(failures, 1) - 1;
  // Multiply step by step so a large `failures` saturates at max instead of
  // overflowing.
  absl::Duration d = options.initial;
  for (int i = 0; i < n && d < options.max; ++i) d = d * options.multiplier;
  d = std::min(d, options.max);
  const double scale = 1.0 + options.jitter * std::clamp(u, -1.0, 1.0);
  return std::max(absl::ZeroDuration(), d * scale);
}

bool IsTransientFailure(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kDataLoss:
      return true;
    default:
      return false;
  }
}

}  // namespace ferry
