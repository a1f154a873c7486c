// SPDX-License-Identifier: Apache-2.0
// MetricsSnapshot: everything Ferry exports as metrics, read at one moment.
// CollectMetrics (collect.h) builds it from a ModelManager; RenderPrometheus
// (prometheus_text.h) turns it into text for /metrics. Tests build it by hand.
// Plain values, no behaviour: copy it, move it, read it from any thread.
#ifndef FERRY_METRICS_METRICS_SNAPSHOT_H_
#define FERRY_METRICS_METRICS_SNAPSHOT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "batching/batch_stats.h"

namespace ferry {

// The batcher statistics of one serving model version.
struct ModelMetrics {
  std::string model;
  int64_t version = 0;
  BatcherStatsSnapshot stats;
};

// The state of one model version as the repository reports it.
struct ModelStateMetric {
  std::string model;
  std::string version;  // "" when the model has no version (bad config, ...)
  std::string state;    // READY, UNAVAILABLE, LOADING or UNLOADED
};

struct MetricsSnapshot {
  // Each (model, version) at most once: a repeated one would repeat series,
  // which Prometheus rejects.
  std::vector<ModelMetrics> models;
  // Each (model, version) at most once, for the same reason.
  std::vector<ModelStateMetric> states;
  // Later: offline job metrics.
};

}  // namespace ferry

#endif  // FERRY_METRICS_METRICS_SNAPSHOT_H_
