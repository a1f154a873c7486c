// SPDX-License-Identifier: Apache-2.0
#include "jobs/progress_rate.h"

#include <algorithm>

namespace ferry {
namespace {

// Observations closer together than this replace each other: frequent polls
// neither grow the window's memory nor make its rate jumpy.
constexpr absl::Duration kMinSpacing = absl::Milliseconds(500);
// A rate over less time than this says more about when the polls fell than
// about the job (two polls a millisecond apart read "0 records/s").
constexpr absl::Duration kMinSpan = absl::Seconds(1);

}  // namespace

void ProgressRate::Observe(absl::Time now, int64_t done) {
  if (samples_.size() >= 2 &&
      now - samples_[samples_.size() - 2].first < kMinSpacing) {
    samples_.back() = {now, done};
  } else {
    samples_.emplace_back(now, done);
  }
  // Keep one observation at or before the window's start, so the rate spans
  // the whole window once there is that much history.
  while (samples_.size() > 2 && samples_[1].first <= now - window_) {
    samples_.pop_front();
  }
}

std::optional<double> ProgressRate::PerSecond() const {
  if (samples_.size() < 2) return std::nullopt;
  const absl::Duration span = samples_.back().first - samples_.front().first;
  if (span < kMinSpan) return std::nullopt;
  const double seconds = absl::ToDoubleSeconds(span);
  const int64_t records =
      std::max<int64_t>(0, samples_.back().second - samples_.front().second);
  return static_cast<double>(records) / seconds;
}

std::optional<double> EtaSeconds(int64_t remaining,
                                 std::optional<double> per_second) {
  if (!per_second || *per_second <= 0) return std::nullopt;
  return static_cast<double>(std::max<int64_t>(0, remaining)) / *per_second;
}

}  // namespace ferry
