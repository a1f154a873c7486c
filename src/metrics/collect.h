// SPDX-License-Identifier: Apache-2.0
// CollectMetrics: reads a ModelManager into a MetricsSnapshot for
// RenderPrometheus: the batcher statistics of every serving version
// (ModelManager::Statistics) and the state of every known model version
// (ModelManager::List). Kept apart from the renderer so that the renderer
// depends on the batcher's statistics only. Called by the /metrics handler per
// scrape; safe for concurrent use (the manager is).
#ifndef FERRY_METRICS_COLLECT_H_
#define FERRY_METRICS_COLLECT_H_

#include "metrics/metrics_snapshot.h"
#include "repository/model_manager.h"

namespace ferry {

// Models and versions come in the manager's order (by name, then version). A
// model with no version (its config failed, or its first load is running) gets
// one state entry with version "": UNAVAILABLE when the repository gives a
// reason, LOADING otherwise.
MetricsSnapshot CollectMetrics(const ModelManager& manager);

}  // namespace ferry

#endif  // FERRY_METRICS_COLLECT_H_
