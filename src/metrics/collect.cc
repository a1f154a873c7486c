// SPDX-License-Identifier: Apache-2.0
#include "metrics/collect.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace ferry {

MetricsSnapshot CollectMetrics(const ModelManager& manager) {
  MetricsSnapshot snapshot;
  // Without a model name Statistics cannot fail (NOT_FOUND needs a name).
  absl::StatusOr<std::vector<ModelVersionStatistics>> stats =
      manager.Statistics();
  if (stats.ok()) {
    snapshot.models.reserve(stats->size());
    for (ModelVersionStatistics& s : *stats) {
      snapshot.models.push_back(
          {std::move(s.name), s.version, std::move(s.stats)});
    }
  }
  for (const ModelStatus& status : manager.List()) {
    if (status.versions.empty()) {
      snapshot.states.push_back(
          {status.name, "", status.reason.empty() ? "LOADING" : "UNAVAILABLE"});
      continue;
    }
    for (const ModelVersionStatus& v : status.versions) {
      snapshot.states.push_back({status.name, absl::StrCat(v.version),
                                 std::string(ToString(v.state))});
    }
  }
  return snapshot;
}

}  // namespace ferry
