// SPDX-License-Identifier: Apache-2.0
#include "metrics/prometheus_text.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "batching/batch_stats.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/promtool_check.h"

namespace ferry {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Not;

HistogramSnapshot MakeHistogram(std::vector<double> bounds,
                                std::vector<uint64_t> counts, double sum) {
  HistogramSnapshot h;
  h.bounds = std::move(bounds);
  h.counts = std::move(counts);
  for (uint64_t c : h.counts) h.count += c;
  h.sum = sum;
  return h;
}

// One model version with `levels` empty priority levels and empty histograms
// of one bucket each.
ModelMetrics EmptyModel(std::string name, int64_t version, int levels) {
  ModelMetrics m;
  m.model = std::move(name);
  m.version = version;
  m.stats.levels.resize(levels);
  for (LevelStatsSnapshot& l : m.stats.levels) {
    l.queue_time_us = MakeHistogram({10}, {0, 0}, 0);
    l.end_to_end_us = MakeHistogram({10}, {0, 0}, 0);
  }
  m.stats.batch_size_rows = MakeHistogram({1}, {0, 0}, 0);
  m.stats.compute_time_us = MakeHistogram({10}, {0, 0}, 0);
  return m;
}

// What a busy server looks like: real BatcherStats with several models,
// versions and priority levels, every histogram non-empty.
MetricsSnapshot RealisticSnapshot() {
  MetricsSnapshot snapshot;
  struct Spec {
    std::string model;
    int64_t version;
    int levels;
    int max_batch_size;
  };
  const Spec specs[] = {{"fraud", 1, 2, 64},
                        {"fraud", 2, 2, 64},
                        {"resnet50", 3, 1, 8},
                        {"bert \"base\"\\uncased", 1, 3, 32}};
  int seed = 1;
  for (const Spec& spec : specs) {
    BatcherStats stats(spec.levels, spec.max_batch_size);
    for (int level = 0; level < spec.levels; ++level) {
      for (int i = 0; i < 20 + 7 * seed; ++i) {
        stats.RecordEnqueued(level, 1 + i % 4);
        stats.RecordQueueTime(level, absl::Microseconds(37 * i * seed));
        stats.RecordCompleted(level, 1 + i % 4, i % 9 != 0,
                              absl::Microseconds(900 * i + 13 * seed));
      }
      stats.RecordRejected(level, RejectReason::kQueueFull, 3);
      stats.RecordRejected(level, RejectReason::kTimeout, 1);
      stats.SetQueueDepth(level, level + seed, 4 * (level + seed));
    }
    for (int b = 0; b < 10 + seed; ++b) {
      const int rows = 1 + (b * 7) % spec.max_batch_size;
      stats.RecordDispatched(
          b % 3 == 0 ? DispatchReason::kDelayExpired : DispatchReason::kFull,
          rows, b, 100 * rows);
      stats.RecordComputeTime(absl::Microseconds(1500 * rows + 3 * b), rows);
    }
    snapshot.models.push_back({spec.model, spec.version, stats.Snapshot()});
    ++seed;
  }
  snapshot.states = {{"fraud", "1", "READY"},
                     {"fraud", "2", "READY"},
                     {"resnet50", "2", "UNLOADED"},
                     {"resnet50", "3", "READY"},
                     {"bert \"base\"\\uncased", "1", "LOADING"},
                     {"broken\nmodel", "", "UNAVAILABLE"}};
  return snapshot;
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

TEST(RenderPrometheusTest, CounterHasHelpTypeAndOneSamplePerLevel) {
  MetricsSnapshot snapshot;
  snapshot.models.push_back(EmptyModel("m", 3, 2));
  snapshot.models[0].stats.levels[0].requests_succeeded = 5;
  snapshot.models[0].stats.levels[1].requests_succeeded = 7;
  EXPECT_THAT(
      RenderPrometheus(snapshot),
      HasSubstr("# HELP ferry_request_success_total Accepted requests answered "
                "successfully.\n"
                "# TYPE ferry_request_success_total counter\n"
                "ferry_request_success_total{model=\"m\",version=\"3\","
                "priority=\"1\"} 5\n"
                "ferry_request_success_total{model=\"m\",version=\"3\","
                "priority=\"2\"} 7\n"
                "# HELP "));
}

TEST(RenderPrometheusTest, OfflineLevelIsLabelledOffline) {
  MetricsSnapshot snapshot;
  snapshot.models.push_back(EmptyModel("m", 1, 2));
  snapshot.models[0].stats.offline_level = 1;
  snapshot.models[0].stats.levels[1].requests_succeeded = 9;
  EXPECT_THAT(RenderPrometheus(snapshot),
              HasSubstr("ferry_request_success_total{model=\"m\",version="
                        "\"1\",priority=\"offline\"} 9\n"));
}

TEST(RenderPrometheusTest, HistogramBucketsAreCumulativeAndInSeconds) {
  MetricsSnapshot snapshot;
  snapshot.models.push_back(EmptyModel("m", 3, 1));
  snapshot.models[0].stats.levels[0].queue_time_us =
      MakeHistogram({10, 100, 2.5e6}, {1, 2, 0, 1}, 2500123);
  EXPECT_THAT(
      RenderPrometheus(snapshot),
      HasSubstr("# TYPE ferry_queue_duration_seconds histogram\n"
                "ferry_queue_duration_seconds_bucket{model=\"m\",version=\"3\","
                "priority=\"1\",le=\"1e-05\"} 1\n"
                "ferry_queue_duration_seconds_bucket{model=\"m\",version=\"3\","
                "priority=\"1\",le=\"0.0001\"} 3\n"
                "ferry_queue_duration_seconds_bucket{model=\"m\",version=\"3\","
                "priority=\"1\",le=\"2.5\"} 3\n"
                "ferry_queue_duration_seconds_bucket{model=\"m\",version=\"3\","
                "priority=\"1\",le=\"+Inf\"} 4\n"
                "ferry_queue_duration_seconds_sum{model=\"m\",version=\"3\","
                "priority=\"1\"} 2.500123\n"
                "ferry_queue_duration_seconds_count{model=\"m\",version=\"3\","
                "priority=\"1\"} 4\n"));
}

TEST(RenderPrometheusTest, LatencyBucketsOfTheBatcherBecomeSeconds) {
  BatcherStats stats(1, 8);
  stats.RecordComputeTime(absl::Microseconds(30), 1);
  stats.RecordComputeTime(absl::Seconds(2), 8);
  MetricsSnapshot snapshot;
  snapshot.models.push_back({"m", 1, stats.Snapshot()});
  const std::string text = RenderPrometheus(snapshot);
  std::vector<std::string> les;
  for (const std::string& line : Lines(text)) {
    if (!absl::StartsWith(line, "ferry_compute_duration_seconds_bucket{"))
      continue;
    const size_t at = line.find("le=\"") + 4;
    les.push_back(line.substr(at, line.find('"', at) - at));
  }
  EXPECT_THAT(
      les, ElementsAreArray({"1e-05",  "2.5e-05", "5e-05",  "0.0001", "0.00025",
                             "0.0005", "0.001",   "0.0025", "0.005",  "0.01",
                             "0.025",  "0.05",    "0.1",    "0.25",   "0.5",
                             "1",      "2.5",     "5",      "10",     "25",
                             "60",     "+Inf"}));
  EXPECT_THAT(text, HasSubstr("ferry_compute_duration_seconds_sum{model=\"m\","
                              "version=\"1\"} 2.00003\n"));
  EXPECT_THAT(text,
              HasSubstr("ferry_compute_duration_seconds_bucket{model=\"m\","
                        "version=\"1\",le=\"5e-05\"} 1\n"));
  EXPECT_THAT(text,
              HasSubstr("ferry_compute_duration_seconds_bucket{model=\"m\","
                        "version=\"1\",le=\"2.5\"} 2\n"));
}

TEST(RenderPrometheusTest, BatchSizeBucketsAreRowsWithIntegerBounds) {
  MetricsSnapshot snapshot;
  snapshot.models.push_back(EmptyModel("m", 1, 1));
  snapshot.models[0].stats.batch_size_rows =
      MakeHistogram(Histogram::BatchSizeBuckets(6), {2, 0, 3, 1, 0}, 25);
  EXPECT_THAT(
      RenderPrometheus(snapshot),
      HasSubstr("# TYPE ferry_batch_size_rows histogram\n"
                "ferry_batch_size_rows_bucket{model=\"m\",version=\"1\","
                "le=\"1\"} 2\n"
                "ferry_batch_size_rows_bucket{model=\"m\",version=\"1\","
                "le=\"2\"} 2\n"
                "ferry_batch_size_rows_bucket{model=\"m\",version=\"1\","
                "le=\"4\"} 5\n"
                "ferry_batch_size_rows_bucket{model=\"m\",version=\"1\","
                "le=\"6\"} 6\n"
                "ferry_batch_size_rows_bucket{model=\"m\",version=\"1\","
                "le=\"+Inf\"} 6\n"
                "ferry_batch_size_rows_sum{model=\"m\",version=\"1\"} "
                "25\n"
                "ferry_batch_size_rows_count{model=\"m\",version=\"1\"} "
                "6\n"));
}

TEST(RenderPrometheusTest, RejectionsAndDispatchesCarryEveryReason) {
  MetricsSnapshot snapshot;
  snapshot.models.push_back(EmptyModel("m", 1, 1));
  snapshot.models[0].stats.levels[0].rejections[static_cast<size_t>(
      RejectReason::kQueueFull)] = 2;
  snapshot.models[0]
      .stats.dispatch_reasons[static_cast<size_t>(DispatchReason::kDrain)] = 4;
  const std::string text = RenderPrometheus(snapshot);
  EXPECT_THAT(text, HasSubstr("ferry_rejected_requests_total{model=\"m\","
                              "version=\"1\",priority=\"1\","
                              "reason=\"queue_full\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("ferry_dispatch_total{model=\"m\",version=\"1\","
                              "reason=\"drain\"} 4\n"));
  for (RejectReason reason : kAllRejectReasons) {
    EXPECT_THAT(text, HasSubstr(absl::StrCat("priority=\"1\",reason=\"",
                                             ToString(reason), "\"}")));
  }
  for (DispatchReason reason : kAllDispatchReasons) {
    EXPECT_THAT(text, HasSubstr(absl::StrCat("ferry_dispatch_total{model=\"m\","
                                             "version=\"1\",reason=\"",
                                             ToString(reason), "\"}")));
  }
}

TEST(RenderPrometheusTest, LabelValuesAreEscaped) {
  MetricsSnapshot snapshot;
  snapshot.models.push_back(EmptyModel("a\"b\\c\nd", 1, 1));
  snapshot.models[0].stats.batches = 9;
  const std::string text = RenderPrometheus(snapshot);
  EXPECT_THAT(text, HasSubstr("ferry_execution_total{model=\"a\\\"b\\\\c\\nd\","
                              "version=\"1\"} 9\n"));
  EXPECT_THAT(text, Not(HasSubstr("c\nd")));
}

TEST(RenderPrometheusTest, ModelStateIsAStateSetWithOneCurrentState) {
  MetricsSnapshot snapshot;
  snapshot.states = {{"m", "2", "READY"}, {"bad", "", "UNAVAILABLE"}};
  EXPECT_EQ(
      RenderPrometheus(snapshot),
      "# HELP ferry_model_state State of a model version: 1 for its "
      "current state (LOADING, READY, UNAVAILABLE, UNLOADED), 0 for the "
      "others; version is empty for a model with none.\n"
      "# TYPE ferry_model_state gauge\n"
      "ferry_model_state{model=\"m\",version=\"2\",state=\"LOADING\"} 0\n"
      "ferry_model_state{model=\"m\",version=\"2\",state=\"READY\"} 1\n"
      "ferry_model_state{model=\"m\",version=\"2\",state=\"UNAVAILABLE\"} "
      "0\n"
      "ferry_model_state{model=\"m\",version=\"2\",state=\"UNLOADED\"} 0\n"
      "ferry_model_state{model=\"bad\",version=\"\",state=\"LOADING\"} 0\n"
      "ferry_model_state{model=\"bad\",version=\"\",state=\"READY\"} 0\n"
      "ferry_model_state{model=\"bad\",version=\"\",state="
      "\"UNAVAILABLE\"} 1\n"
      "ferry_model_state{model=\"bad\",version=\"\",state=\"UNLOADED\"} "
      "0\n");
}

TEST(RenderPrometheusTest, EmptySnapshotRendersNothing) {
  EXPECT_EQ(RenderPrometheus(MetricsSnapshot{}), "");
}

// Every family's HELP and TYPE come once, right before all its samples; no
// series repeats.
TEST(RenderPrometheusTest, EachFamilyOnceWithItsSeriesTogether) {
  const std::string text = RenderPrometheus(RealisticSnapshot());
  std::vector<std::string> families;
  std::map<std::string, std::string> types;
  std::set<std::string> series;
  std::string current;
  std::string pending_help;
  for (const std::string& line : Lines(text)) {
    if (absl::StartsWith(line, "# HELP ")) {
      pending_help = std::vector<std::string>(absl::StrSplit(line, ' '))[2];
      continue;
    }
    if (absl::StartsWith(line, "# TYPE ")) {
      const std::vector<std::string> parts = absl::StrSplit(line, ' ');
      ASSERT_EQ(parts.size(), 4u) << line;
      EXPECT_EQ(parts[2], pending_help) << "HELP must precede " << line;
      current = parts[2];
      EXPECT_TRUE(types.emplace(current, parts[3]).second)
          << "family repeated: " << current;
      families.push_back(current);
      continue;
    }
    ASSERT_FALSE(current.empty()) << "sample before any TYPE: " << line;
    const std::string key = line.substr(0, line.rfind(' '));
    EXPECT_TRUE(series.insert(key).second) << "series repeated: " << key;
    const std::string name = key.substr(0, key.find('{'));
    if (types[current] == "histogram") {
      EXPECT_TRUE(name == current + "_bucket" || name == current + "_sum" ||
                  name == current + "_count")
          << name << " is outside its family " << current;
    } else {
      EXPECT_EQ(name, current);
    }
  }
  EXPECT_THAT(
      families,
      ElementsAreArray(
          {"ferry_model_state", "ferry_enqueued_requests_total",
           "ferry_request_success_total", "ferry_request_failure_total",
           "ferry_rejected_requests_total", "ferry_queue_timeouts_total",
           "ferry_queue_depth_requests", "ferry_queue_depth_rows",
           "ferry_queue_duration_seconds", "ferry_request_duration_seconds",
           "ferry_execution_total", "ferry_inference_rows_total",
           "ferry_dispatch_total", "ferry_batch_size_rows",
           "ferry_compute_duration_seconds", "ferry_padding_elements_total",
           "ferry_batch_elements_total"}));
}

TEST(RenderPrometheusTest, PromtoolAcceptsARealisticSnapshotWithoutLint) {
  const std::string text = RenderPrometheus(RealisticSnapshot());
  ASSERT_THAT(text, HasSubstr("version=\"2\",priority=\"2\""));
  absl::StatusOr<testing::PromtoolResult> result =
      testing::PromtoolCheckMetrics(text);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 0) << result->output << "\n---\n" << text;
  EXPECT_EQ(result->output, "") << text;
}

// The check above means something only if promtool does flag what Ferry must
// avoid: microsecond units and a counter without _total.
TEST(RenderPrometheusTest, PromtoolFlagsNonBaseUnitsAndBadCounterNames) {
  absl::StatusOr<testing::PromtoolResult> result =
      testing::PromtoolCheckMetrics(
          "# HELP ferry_queue_duration_us Time.\n"
          "# TYPE ferry_queue_duration_us counter\n"
          "ferry_queue_duration_us 3\n");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_NE(result->exit_code, 0);
  EXPECT_THAT(result->output, HasSubstr("ferry_queue_duration_us"));
}

}  // namespace
}  // namespace ferry
