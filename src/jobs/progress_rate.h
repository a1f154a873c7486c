// SPDX-License-Identifier: Apache-2.0
// ProgressRate: a job's records per second over a sliding window of recent
// observations of its records-done count, and the ETA that follows.
//
// Not thread-safe; JobRunner keeps one per running job under its lock.
#ifndef FERRY_JOBS_PROGRESS_RATE_H_
#define FERRY_JOBS_PROGRESS_RATE_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

#include "absl/time/time.h"

namespace ferry {

class ProgressRate {
 public:
  explicit ProgressRate(absl::Duration window = absl::Seconds(60))
      : window_(window) {}

  // Records that `done` records were finished at `now` (times never go back).
  void Observe(absl::Time now, int64_t done);

  // Records per second between the oldest observation still spanning the
  // window and the newest; nullopt until they are a second apart.
  std::optional<double> PerSecond() const;

 private:
  absl::Duration window_;
  std::deque<std::pair<absl::Time, int64_t>> samples_;
};

// Seconds until `remaining` records are done at `per_second`; nullopt when the
// rate is unknown or zero.
std::optional<double> EtaSeconds(int64_t remaining,
                                 std::optional<double> per_second);

}  // namespace ferry

#endif  // FERRY_JOBS_PROGRESS_RATE_H_
