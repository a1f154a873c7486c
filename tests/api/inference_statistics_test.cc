// SPDX-License-Identifier: Apache-2.0
#include "api/inference_statistics.h"

#include "gtest/gtest.h"

namespace ferry {
namespace {

TEST(InferenceStatisticsTest, SumsLevelsIntoTritonsShape) {
  ModelVersionStatistics in;
  in.name = "m";
  in.version = 3;
  in.last_inference = absl::FromUnixMillis(1'700'000'000'123);
  in.stats.levels.resize(2);
  in.stats.levels[0].requests_succeeded = 4;
  in.stats.levels[0].rows_succeeded = 10;
  in.stats.levels[0].end_to_end_us.sum = 1.5;
  in.stats.levels[0].requests_failed = 1;
  in.stats.levels[0].queue_time_us = {{}, {}, 5, 2.0};
  in.stats.levels[1].requests_succeeded = 1;
  in.stats.levels[1].rows_succeeded = 2;
  in.stats.levels[1].rejections[static_cast<size_t>(RejectReason::kQueueFull)] =
      2;
  in.stats.levels[1]
      .rejections[static_cast<size_t>(RejectReason::kInvalidInput)] = 1;
  // A timeout is already in requests_failed; it must not count twice.
  in.stats.levels[1].rejections[static_cast<size_t>(RejectReason::kTimeout)] =
      7;
  in.stats.batches = 6;
  in.stats.compute_time_us = {{}, {}, 6, 30.0};

  const InferenceStatistics s = SummarizeStatistics(in);
  EXPECT_EQ(s.name, "m");
  EXPECT_EQ(s.version, 3);
  EXPECT_EQ(s.last_inference_ms, 1'700'000'000'123u);
  EXPECT_EQ(s.inference_count, 12u);
  EXPECT_EQ(s.execution_count, 6u);
  EXPECT_EQ(s.success.count, 5u);
  EXPECT_EQ(s.success.ns, 1500u);
  EXPECT_EQ(s.fail.count, 1u + 2u + 1u);
  EXPECT_EQ(s.queue.count, 5u);
  EXPECT_EQ(s.queue.ns, 2000u);
  EXPECT_EQ(s.compute_infer.count, 6u);
  EXPECT_EQ(s.compute_infer.ns, 30000u);
}

TEST(InferenceStatisticsTest, NeverUsedModelHasZeroLastInference) {
  ModelVersionStatistics in;
  EXPECT_EQ(SummarizeStatistics(in).last_inference_ms, 0u);
}

}  // namespace
}  // namespace ferry
