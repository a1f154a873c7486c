// SPDX-License-Identifier: Apache-2.0
#include "api/inference_statistics.h"

#include <algorithm>

namespace ferry {
namespace {

uint64_t Nanos(double us) {
  return static_cast<uint64_t>(std::max(0.0, us) * 1e3);
}

}  // namespace

InferenceStatistics SummarizeStatistics(const ModelVersionStatistics& stats) {
  const BatcherStatsSnapshot& s = stats.stats;
  InferenceStatistics out;
  out.name = stats.name;
  out.version = stats.version;
  if (stats.last_inference != absl::InfinitePast()) {
    out.last_inference_ms = static_cast<uint64_t>(
        std::max<int64_t>(0, absl::ToUnixMillis(stats.last_inference)));
  }
  double success_us = 0;
  double queue_us = 0;
  for (const LevelStatsSnapshot& level : s.levels) {
    out.inference_count += level.rows_succeeded;
    out.success.count += level.requests_succeeded;
    success_us += level.end_to_end_us.sum;
    out.fail.count += level.requests_failed +
                      level.rejected(RejectReason::kQueueFull) +
                      level.rejected(RejectReason::kInvalidInput);
    out.queue.count += level.queue_time_us.count;
    queue_us += level.queue_time_us.sum;
  }
  out.success.ns = Nanos(success_us);
  out.queue.ns = Nanos(queue_us);
  out.execution_count = s.batches;
  out.compute_infer.count = s.compute_time_us.count;
  out.compute_infer.ns = Nanos(s.compute_time_us.sum);
  return out;
}

}  // namespace ferry
