// SPDX-License-Identifier: Apache-2.0
#include "metrics/prometheus_text.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "batching/reasons.h"
#include "metrics/text_format.h"

namespace ferry {
namespace {

constexpr double kMicrosPerSecond = 1e6;
constexpr double kUnscaled = 1;

constexpr absl::string_view kKnownStates[] = {"LOADING", "READY", "UNAVAILABLE",
                                              "UNLOADED"};

struct LevelCounter {
  const char* name;
  const char* help;
  uint64_t LevelStatsSnapshot::*field;
};

// Appends `name`_bucket (cumulative, "+Inf" last), _sum and _count, dividing
// bounds and sum by `divisor` (1e6 turns microseconds into seconds).
void AppendHistogram(std::string* out, absl::string_view name,
                     std::vector<MetricLabel> labels,
                     const HistogramSnapshot& histogram, double divisor) {
  const std::string bucket = absl::StrCat(name, "_bucket");
  labels.push_back({"le", ""});
  uint64_t running = 0;
  for (size_t i = 0; i < histogram.bounds.size(); ++i) {
    if (i < histogram.counts.size()) running += histogram.counts[i];
    const std::string le = FormatMetricValue(histogram.bounds[i] / divisor);
    labels.back().value = le;
    AppendSample(out, bucket, labels, running);
  }
  labels.back().value = "+Inf";
  AppendSample(out, bucket, labels, histogram.count);
  labels.pop_back();
  AppendSample(out, absl::StrCat(name, "_sum"), labels,
               histogram.sum / divisor);
  AppendSample(out, absl::StrCat(name, "_count"), labels, histogram.count);
}

class Renderer {
 public:
  explicit Renderer(const MetricsSnapshot& snapshot) : snapshot_(snapshot) {}

  std::string Render() {
    ModelStates();
    LevelFamilies();
    ModelFamilies();
    return std::move(out_);
  }

 private:
  // Calls emit(labels, model) for every model version, after the family's
  // header; nothing at all when there are no models.
  template <typename Emit>
  void PerModel(absl::string_view name, absl::string_view type,
                absl::string_view help, Emit emit) {
    if (snapshot_.models.empty()) return;
    AppendFamilyHeader(&out_, name, type, help);
    for (const ModelMetrics& m : snapshot_.models) {
      const std::string version = absl::StrCat(m.version);
      emit(std::vector<MetricLabel>{{"model", m.model}, {"version", version}},
           m.stats);
    }
  }

  // Calls emit(labels, level) for every priority level of every model version.
  template <typename Emit>
  void PerLevel(absl::string_view name, absl::string_view type,
                absl::string_view help, Emit emit) {
    if (!HasLevels()) return;
    AppendFamilyHeader(&out_, name, type, help);
    for (const ModelMetrics& m : snapshot_.models) {
      const std::string version = absl::StrCat(m.version);
      for (size_t i = 0; i < m.stats.levels.size(); ++i) {
        const std::string priority =
            static_cast<int>(i) == m.stats.offline_level
                ? std::string("offline")
                : absl::StrCat(i + 1);
        emit(std::vector<MetricLabel>{{"model", m.model},
                                      {"version", version},
                                      {"priority", priority}},
             m.stats.levels[i]);
      }
    }
  }

  bool HasLevels() const {
    for (const ModelMetrics& m : snapshot_.models) {
      if (!m.stats.levels.empty()) return true;
    }
    return false;
  }

  void ModelStates() {
    if (snapshot_.states.empty()) return;
    constexpr absl::string_view kName = "ferry_model_state";
    AppendFamilyHeader(&out_, kName, "gauge",
                       "State of a model version: 1 for its current state "
                       "(LOADING, READY, UNAVAILABLE, UNLOADED), 0 for the "
                       "others; version is empty for a model with none.");
    for (const ModelStateMetric& s : snapshot_.states) {
      bool known = false;
      for (absl::string_view state : kKnownStates) {
        const bool current = s.state == state;
        known = known || current;
        AppendSample(
            &out_, kName,
            {{"model", s.model}, {"version", s.version}, {"state", state}},
            uint64_t{current ? 1u : 0u});
      }
      if (!known) {
        AppendSample(
            &out_, kName,
            {{"model", s.model}, {"version", s.version}, {"state", s.state}},
            uint64_t{1});
      }
    }
  }

  void LevelFamilies() {
    static constexpr LevelCounter kCounters[] = {
        {"ferry_enqueued_requests_total",
         "Requests the batcher accepted into its queue.",
         &LevelStatsSnapshot::requests_enqueued},
        {"ferry_request_success_total",
         "Accepted requests answered successfully.",
         &LevelStatsSnapshot::requests_succeeded},
        {"ferry_request_failure_total",
         "Accepted requests answered with an error, whatever the reason.",
         &LevelStatsSnapshot::requests_failed},
    };
    for (const LevelCounter& c : kCounters) {
      PerLevel(c.name, "counter", c.help,
               [&](const std::vector<MetricLabel>& labels,
                   const LevelStatsSnapshot& level) {
                 AppendSample(&out_, c.name, labels, level.*c.field);
               });
    }
    PerLevel(
        "ferry_rejected_requests_total", "counter",
        "Requests turned away, at admission or from the queue, by reason.",
        [&](std::vector<MetricLabel> labels, const LevelStatsSnapshot& level) {
          labels.push_back({"reason", ""});
          for (RejectReason reason : kAllRejectReasons) {
            labels.back().value = ToString(reason);
            AppendSample(&out_, "ferry_rejected_requests_total", labels,
                         level.rejected(reason));
          }
        });
    PerLevel("ferry_queue_timeouts_total", "counter",
             "Requests whose queue timeout fired (REJECT or DELAY action).",
             [&](const std::vector<MetricLabel>& labels,
                 const LevelStatsSnapshot& level) {
               AppendSample(&out_, "ferry_queue_timeouts_total", labels,
                            level.timeouts);
             });
    PerLevel("ferry_queue_depth_requests", "gauge", "Requests queued now.",
             [&](const std::vector<MetricLabel>& labels,
                 const LevelStatsSnapshot& level) {
               AppendSample(&out_, "ferry_queue_depth_requests", labels,
                            level.queue_depth_requests);
             });
    PerLevel("ferry_queue_depth_rows", "gauge", "Rows queued now.",
             [&](const std::vector<MetricLabel>& labels,
                 const LevelStatsSnapshot& level) {
               AppendSample(&out_, "ferry_queue_depth_rows", labels,
                            level.queue_depth_rows);
             });
    PerLevel("ferry_queue_duration_seconds", "histogram",
             "Time from enqueue to dispatch, per request.",
             [&](const std::vector<MetricLabel>& labels,
                 const LevelStatsSnapshot& level) {
               AppendHistogram(&out_, "ferry_queue_duration_seconds", labels,
                               level.queue_time_us, kMicrosPerSecond);
             });
    PerLevel("ferry_request_duration_seconds", "histogram",
             "Time from enqueue to response, per successful request.",
             [&](const std::vector<MetricLabel>& labels,
                 const LevelStatsSnapshot& level) {
               AppendHistogram(&out_, "ferry_request_duration_seconds", labels,
                               level.end_to_end_us, kMicrosPerSecond);
             });
  }

  void ModelFamilies() {
    PerModel("ferry_execution_total", "counter", "Batches run by the engine.",
             [&](const std::vector<MetricLabel>& labels,
                 const BatcherStatsSnapshot& stats) {
               AppendSample(&out_, "ferry_execution_total", labels,
                            stats.batches);
             });
    PerModel("ferry_inference_rows_total", "counter",
             "Rows in the batches run by the engine.",
             [&](const std::vector<MetricLabel>& labels,
                 const BatcherStatsSnapshot& stats) {
               AppendSample(&out_, "ferry_inference_rows_total", labels,
                            stats.rows_executed);
             });
    PerModel("ferry_dispatch_total", "counter",
             "Batches dispatched, by the reason the batcher sent them.",
             [&](std::vector<MetricLabel> labels,
                 const BatcherStatsSnapshot& stats) {
               labels.push_back({"reason", ""});
               for (DispatchReason reason : kAllDispatchReasons) {
                 labels.back().value = ToString(reason);
                 AppendSample(&out_, "ferry_dispatch_total", labels,
                              stats.dispatched(reason));
               }
             });
    PerModel("ferry_batch_size_rows", "histogram", "Rows per batch.",
             [&](const std::vector<MetricLabel>& labels,
                 const BatcherStatsSnapshot& stats) {
               AppendHistogram(&out_, "ferry_batch_size_rows", labels,
                               stats.batch_size_rows, kUnscaled);
             });
    PerModel("ferry_compute_duration_seconds", "histogram",
             "Engine time per batch.",
             [&](const std::vector<MetricLabel>& labels,
                 const BatcherStatsSnapshot& stats) {
               AppendHistogram(&out_, "ferry_compute_duration_seconds", labels,
                               stats.compute_time_us, kMicrosPerSecond);
             });
    PerModel("ferry_padding_elements_total", "counter",
             "Tensor elements added to batches as padding.",
             [&](const std::vector<MetricLabel>& labels,
                 const BatcherStatsSnapshot& stats) {
               AppendSample(&out_, "ferry_padding_elements_total", labels,
                            stats.padded_elements);
             });
    PerModel("ferry_batch_elements_total", "counter",
             "Tensor elements of batch inputs, padding included.",
             [&](const std::vector<MetricLabel>& labels,
                 const BatcherStatsSnapshot& stats) {
               AppendSample(&out_, "ferry_batch_elements_total", labels,
                            stats.total_elements);
             });
  }

  const MetricsSnapshot& snapshot_;
  std::string out_;
};

}  // namespace

std::string RenderPrometheus(const MetricsSnapshot& snapshot) {
  return Renderer(snapshot).Render();
}

}  // namespace ferry
