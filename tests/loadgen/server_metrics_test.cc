// SPDX-License-Identifier: Apache-2.0
#include "loadgen/server_metrics.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ferry {
namespace {

using ::testing::HasSubstr;

TEST(ParsePrometheusTextTest, NamesLabelsValuesAndComments) {
  auto samples = ParsePrometheusText(
      "# HELP ferry_execution_total Batches.\n"
      "# TYPE ferry_execution_total counter\n"
      "ferry_execution_total{model=\"m\",version=\"1\"} 12\n"
      "up 1 1700000000000\n"
      "odd{path=\"a\\\"b\\\\c\",x=\"\"} 2.5e3\n"
      "h_bucket{le=\"+Inf\"} +Inf\n"
      "\n");
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 4u);
  EXPECT_EQ((*samples)[0].name, "ferry_execution_total");
  EXPECT_EQ((*samples)[0].labels.at("model"), "m");
  EXPECT_EQ((*samples)[0].value, 12);
  EXPECT_EQ((*samples)[1].name, "up");
  EXPECT_EQ((*samples)[1].value, 1);  // the timestamp is not the value
  EXPECT_EQ((*samples)[2].labels.at("path"), "a\"b\\c");
  EXPECT_EQ((*samples)[2].labels.at("x"), "");
  EXPECT_EQ((*samples)[2].value, 2500);
  EXPECT_TRUE(std::isinf((*samples)[3].value));
}

TEST(ParsePrometheusTextTest, ErrorsNameTheLine) {
  auto r = ParsePrometheusText("a 1\nb{x=\"1\" 2\n");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("line 2"));
  r = ParsePrometheusText("a one\n");
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("'one'"));
  r = ParsePrometheusText("a{x} 1\n");
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("line 1"));
}

TEST(SumSamplesTest, MatchesEveryGivenLabel) {
  auto s = ParsePrometheusText(
      "n{model=\"a\",priority=\"1\"} 1\n"
      "n{model=\"a\",priority=\"offline\"} 2\n"
      "n{model=\"b\",priority=\"1\"} 4\n"
      "other{model=\"a\"} 8\n");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(SumSamples(*s, "n", {{"model", "a"}}), 3);
  EXPECT_EQ(SumSamples(*s, "n", {{"model", "a"}, {"priority", "1"}}), 1);
  EXPECT_EQ(SumSamples(*s, "n", {}), 7);
  EXPECT_EQ(SumSamples(*s, "n", {{"model", "c"}}), 0);
}

TEST(ComputeServerSplitTest, DeltasBetweenScrapesForOneModel) {
  auto before = ParsePrometheusText(
      "ferry_queue_duration_seconds_sum{model=\"m\",priority=\"1\"} 1.0\n"
      "ferry_queue_duration_seconds_count{model=\"m\",priority=\"1\"} 100\n"
      "ferry_compute_duration_seconds_sum{model=\"m\",version=\"1\"} 2.0\n"
      "ferry_compute_duration_seconds_count{model=\"m\",version=\"1\"} 10\n"
      "ferry_execution_total{model=\"m\",version=\"1\"} 10\n"
      "ferry_inference_rows_total{model=\"m\",version=\"1\"} 100\n"
      "ferry_execution_total{model=\"other\",version=\"1\"} 999\n"
      "ferry_padding_elements_total{model=\"m\",version=\"1\"} 10\n"
      "ferry_batch_elements_total{model=\"m\",version=\"1\"} 100\n");
  auto after = ParsePrometheusText(
      "ferry_queue_duration_seconds_sum{model=\"m\",priority=\"1\"} 1.5\n"
      "ferry_queue_duration_seconds_count{model=\"m\",priority=\"1\"} 1100\n"
      "ferry_compute_duration_seconds_sum{model=\"m\",version=\"1\"} 2.2\n"
      "ferry_compute_duration_seconds_count{model=\"m\",version=\"1\"} 110\n"
      "ferry_execution_total{model=\"m\",version=\"1\"} 110\n"
      "ferry_inference_rows_total{model=\"m\",version=\"1\"} 1100\n"
      "ferry_execution_total{model=\"other\",version=\"1\"} 5000\n"
      "ferry_padding_elements_total{model=\"m\",version=\"1\"} 110\n"
      "ferry_batch_elements_total{model=\"m\",version=\"1\"} 500\n");
  ASSERT_TRUE(before.ok() && after.ok());
  const ServerSplit s = ComputeServerSplit(*before, *after, "m");
  EXPECT_EQ(s.requests, 1000);
  EXPECT_EQ(s.batches, 100);
  EXPECT_NEAR(s.avg_queue_us, 500, 1e-6);     // 0.5 s over 1000 requests
  EXPECT_NEAR(s.avg_compute_us, 2000, 1e-6);  // 0.2 s over 100 batches
  EXPECT_NEAR(s.avg_batch_rows, 10, 1e-9);
  EXPECT_NEAR(s.padding_waste, 0.25, 1e-9);  // 100 of 400 new elements
  const ServerSplit none = ComputeServerSplit(*before, *before, "m");
  EXPECT_EQ(none.batches, 0);
  EXPECT_EQ(none.avg_batch_rows, 0);
}

}  // namespace
}  // namespace ferry
