// SPDX-License-Identifier: Apache-2.0
#include "batching/batch_stats.h"

#include <cmath>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ferry {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

TEST(HistogramTest, ValueEqualToBoundGoesToThatBucket) {
  Histogram h(std::vector<double>{1, 2, 5});
  h.Observe(1);     // le=1
  h.Observe(1.5);   // le=2
  h.Observe(2);     // le=2
  h.Observe(5);     // le=5
  h.Observe(5.01);  // +Inf
  h.Observe(-3);    // le=1: below the first bound
  HistogramSnapshot s = h.Snapshot();
  EXPECT_THAT(s.bounds, ElementsAre(1, 2, 5));
  EXPECT_THAT(s.counts, ElementsAre(2, 2, 1, 1));
  EXPECT_EQ(s.count, 6u);
  EXPECT_DOUBLE_EQ(s.sum, 1 + 1.5 + 2 + 5 + 5.01 - 3);
  EXPECT_THAT(s.Cumulative(), ElementsAre(2, 4, 5, 6));
}

TEST(HistogramTest, NanIsIgnoredAndInfinityGoesToInfBucket) {
  Histogram h(std::vector<double>{1});
  h.Observe(std::nan(""));
  h.Observe(INFINITY);
  HistogramSnapshot s = h.Snapshot();
  EXPECT_THAT(s.counts, ElementsAre(0, 1));
  EXPECT_EQ(s.count, 1u);
}

TEST(HistogramTest, EmptyBoundsCountEverythingInInf) {
  Histogram h(std::vector<double>{});
  h.Observe(3);
  h.Observe(4);
  HistogramSnapshot s = h.Snapshot();
  EXPECT_THAT(s.counts, ElementsAre(2));
  EXPECT_DOUBLE_EQ(s.Mean(), 3.5);
  EXPECT_TRUE(std::isnan(s.Quantile(0.5)));
}

TEST(HistogramTest, QuantileInterpolatesInsideTheBucket) {
  Histogram h(std::vector<double>{10, 20, 40});
  for (int i = 0; i < 10; ++i) h.Observe(5);   // (0, 10]
  for (int i = 0; i < 10; ++i) h.Observe(15);  // (10, 20]
  for (int i = 0; i < 20; ++i) h.Observe(30);  // (20, 40]
  HistogramSnapshot s = h.Snapshot();
  // Rank 0.5·40 = 20: the end of the second bucket.
  EXPECT_DOUBLE_EQ(s.Quantile(0.5), 20);
  // Rank 0.25·40 = 10: the end of the first bucket, which starts at 0.
  EXPECT_DOUBLE_EQ(s.Quantile(0.25), 10);
  // Rank 5: halfway through the first bucket.
  EXPECT_DOUBLE_EQ(s.Quantile(0.125), 5);
  // Rank 30: halfway through (20, 40].
  EXPECT_DOUBLE_EQ(s.Quantile(0.75), 30);
  EXPECT_DOUBLE_EQ(s.Quantile(1.0), 40);
  EXPECT_DOUBLE_EQ(s.Quantile(2.0), 40);  // clamped to 1
  EXPECT_DOUBLE_EQ(s.Quantile(0.0), 0);   // start of the first non-empty bucket
}

TEST(HistogramTest, QuantileSkipsEmptyLeadingBuckets) {
  Histogram h(std::vector<double>{1, 2, 4});
  h.Observe(3);
  h.Observe(3);
  HistogramSnapshot s = h.Snapshot();
  EXPECT_DOUBLE_EQ(s.Quantile(0.0), 2);
  EXPECT_DOUBLE_EQ(s.Quantile(0.5), 3);
}

TEST(HistogramTest, QuantileInInfBucketIsHighestFiniteBound) {
  Histogram h(std::vector<double>{1, 2});
  h.Observe(0.5);
  h.Observe(100);
  h.Observe(200);
  HistogramSnapshot s = h.Snapshot();
  EXPECT_DOUBLE_EQ(s.Quantile(0.99), 2);
}

TEST(HistogramTest, QuantileOfEmptyHistogramIsNan) {
  Histogram h(std::vector<double>{1, 2});
  EXPECT_TRUE(std::isnan(h.Snapshot().Quantile(0.5)));
  EXPECT_EQ(h.Snapshot().Mean(), 0);
}

TEST(HistogramTest, ExponentialBucketsMultiplyByFactor) {
  EXPECT_THAT(Histogram::ExponentialBuckets(10, 2, 5),
              ElementsAre(10, 20, 40, 80, 160));
  EXPECT_THAT(Histogram::ExponentialBuckets(1, 10, 1), ElementsAre(1));
  std::vector<double> b = Histogram::ExponentialBuckets(0.5, 1.5, 30);
  ASSERT_EQ(b.size(), 30u);
  EXPECT_DOUBLE_EQ(b.back(), 0.5 * std::pow(1.5, 29));
}

TEST(HistogramTest, BatchSizeBucketsArePowersOfTwoPlusMax) {
  EXPECT_THAT(Histogram::BatchSizeBuckets(32), ElementsAre(1, 2, 4, 8, 16, 32));
  EXPECT_THAT(Histogram::BatchSizeBuckets(48),
              ElementsAre(1, 2, 4, 8, 16, 32, 48));
  EXPECT_THAT(Histogram::BatchSizeBuckets(3), ElementsAre(1, 2, 3));
  EXPECT_THAT(Histogram::BatchSizeBuckets(1), ElementsAre(1));
  EXPECT_THAT(Histogram::BatchSizeBuckets(0), ElementsAre(1));
}

TEST(HistogramTest, LatencyBucketsSpanTenMicrosToSixtySeconds) {
  const auto& b = Histogram::kLatencyBucketsUs;
  EXPECT_EQ(b.front(), 10);
  EXPECT_EQ(b.back(), 60e6);
  for (size_t i = 1; i < b.size(); ++i) {
    EXPECT_LT(b[i - 1], b[i]);
    EXPECT_LE(b[i] / b[i - 1], 2.5);
  }
  Histogram h(b);  // valid bounds: does not abort
  h.Observe(1234);
  EXPECT_EQ(h.Snapshot().counts[7], 1u);  // (1000, 2500]
}

TEST(HistogramDeathTest, RejectsUnsortedBounds) {
  EXPECT_DEATH(Histogram(std::vector<double>{1, 3, 2}), "ascend");
  EXPECT_DEATH(Histogram(std::vector<double>{1, 1}), "ascend");
  EXPECT_DEATH(Histogram(std::vector<double>{1, INFINITY}), "finite");
}

TEST(HistogramTest, ConcurrentObserveCountsExactly) {
  Histogram h(std::vector<double>{1, 2, 3, 4, 5, 6, 7});
  constexpr int kThreads = 8;
  constexpr int kPerThread = 100000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&h, t] {
      // Thread t observes t + 1 (an exact bound), so bucket t gets every one of
      // them.
      for (int i = 0; i < kPerThread; ++i) h.Observe(t + 1);
    });
  }
  for (std::thread& t : threads) t.join();
  HistogramSnapshot s = h.Snapshot();
  EXPECT_EQ(s.count, uint64_t{kThreads} * kPerThread);
  std::vector<uint64_t> want(kThreads, kPerThread);
  EXPECT_THAT(s.counts, ElementsAreArray(want));
  // Integer-valued sums below 2^53 add exactly in any order.
  EXPECT_EQ(s.sum, 36.0 * kPerThread);
}

TEST(BatcherStatsTest, StartsEmpty) {
  BatcherStats stats(/*priority_levels=*/2, /*max_batch_size=*/8);
  BatcherStatsSnapshot s = stats.Snapshot();
  ASSERT_EQ(s.levels.size(), 2u);
  EXPECT_EQ(s.levels[1].requests_enqueued, 0u);
  EXPECT_EQ(s.levels[1].queue_time_us.count, 0u);
  EXPECT_EQ(s.batches, 0u);
  EXPECT_EQ(s.padding_waste(), 0);
  EXPECT_EQ(s.average_batch_rows(), 0);
  EXPECT_THAT(s.batch_size_rows.bounds, ElementsAre(1, 2, 4, 8));
  EXPECT_EQ(s.compute_time_us.bounds.size(),
            Histogram::kLatencyBucketsUs.size());
}

TEST(BatcherStatsTest, RecordsRequestLifecyclePerLevel) {
  BatcherStats stats(/*priority_levels=*/2, /*max_batch_size=*/16);
  stats.RecordEnqueued(0, 3);
  stats.RecordEnqueued(0, 5);
  stats.RecordEnqueued(1, 7);
  stats.SetQueueDepth(0, 2, 8);
  stats.SetQueueDepth(1, 1, 7);
  stats.RecordQueueTime(0, absl::Microseconds(200));
  stats.RecordQueueTime(0, absl::Microseconds(400));
  stats.RecordDispatched(DispatchReason::kPreferredSize, 8, 0, 80);
  stats.SetQueueDepth(0, 0, 0);
  stats.RecordComputeTime(absl::Milliseconds(2), 8);
  stats.RecordCompleted(0, 3, /*ok=*/true, absl::Milliseconds(3));
  stats.RecordCompleted(0, 5, /*ok=*/false, absl::Milliseconds(4));

  BatcherStatsSnapshot s = stats.Snapshot();
  const LevelStatsSnapshot& l0 = s.levels[0];
  EXPECT_EQ(l0.requests_enqueued, 2u);
  EXPECT_EQ(l0.rows_enqueued, 8u);
  EXPECT_EQ(l0.requests_succeeded, 1u);
  EXPECT_EQ(l0.rows_succeeded, 3u);
  EXPECT_EQ(l0.requests_failed, 1u);
  EXPECT_EQ(l0.rows_failed, 5u);
  EXPECT_EQ(l0.queue_depth_requests, 0);
  EXPECT_EQ(l0.queue_depth_rows, 0);
  EXPECT_EQ(l0.queue_time_us.count, 2u);
  EXPECT_DOUBLE_EQ(l0.queue_time_us.sum, 600);
  EXPECT_EQ(l0.end_to_end_us.count, 1u);  // successes only
  EXPECT_DOUBLE_EQ(l0.end_to_end_us.sum, 3000);

  const LevelStatsSnapshot& l1 = s.levels[1];
  EXPECT_EQ(l1.requests_enqueued, 1u);
  EXPECT_EQ(l1.rows_enqueued, 7u);
  EXPECT_EQ(l1.queue_depth_requests, 1);
  EXPECT_EQ(l1.queue_depth_rows, 7);
  EXPECT_EQ(l1.queue_time_us.count, 0u);

  EXPECT_EQ(s.batches, 1u);
  EXPECT_EQ(s.rows_executed, 8u);
  EXPECT_EQ(s.dispatched(DispatchReason::kPreferredSize), 1u);
  EXPECT_EQ(s.batch_size_rows.count, 1u);
  EXPECT_EQ(s.batch_size_rows.counts[3], 1u);  // le=8
  EXPECT_EQ(s.compute_time_us.count, 1u);
  EXPECT_DOUBLE_EQ(s.compute_time_us.sum, 2000);
  EXPECT_EQ(s.compute_rows, 8u);
}

TEST(BatcherStatsTest, CountsRejectionReasonsPerLevel) {
  BatcherStats stats(/*priority_levels=*/3, /*max_batch_size=*/8);
  stats.RecordRejected(0, RejectReason::kQueueFull, 2);
  stats.RecordRejected(0, RejectReason::kQueueFull, 1);
  stats.RecordRejected(2, RejectReason::kTimeout, 4);
  stats.RecordRejected(2, RejectReason::kDeadlineInfeasible, 1);
  stats.RecordRejected(1, RejectReason::kEngineError, 6);

  BatcherStatsSnapshot s = stats.Snapshot();
  EXPECT_EQ(s.levels[0].rejected(RejectReason::kQueueFull), 2u);
  EXPECT_EQ(s.levels[0].rejected(RejectReason::kTimeout), 0u);
  EXPECT_EQ(s.levels[0].rows_rejected, 3u);
  EXPECT_EQ(s.levels[0].timeouts, 0u);

  EXPECT_EQ(s.levels[1].rejected(RejectReason::kEngineError), 1u);
  EXPECT_EQ(s.levels[1].rejected(RejectReason::kQueueFull), 0u);
  EXPECT_EQ(s.levels[1].rows_rejected, 6u);

  EXPECT_EQ(s.levels[2].rejected(RejectReason::kTimeout), 1u);
  EXPECT_EQ(s.levels[2].rejected(RejectReason::kDeadlineInfeasible), 1u);
  EXPECT_EQ(s.levels[2].timeouts,
            1u);  // kDeadlineInfeasible is not a queue timeout
  EXPECT_EQ(s.levels[2].rows_rejected, 5u);
}

TEST(BatcherStatsTest, CountsDispatchReasonsAndPaddingWaste) {
  BatcherStats stats(/*priority_levels=*/1, /*max_batch_size=*/32);
  stats.RecordDispatched(DispatchReason::kFull, 32, 100, 1000);
  stats.RecordDispatched(DispatchReason::kDelayExpired, 5, 50, 500);
  stats.RecordDispatched(DispatchReason::kDelayExpired, 3, 0, 300);
  stats.RecordDispatched(DispatchReason::kDrain, 1, 0, 100);

  BatcherStatsSnapshot s = stats.Snapshot();
  EXPECT_EQ(s.batches, 4u);
  EXPECT_EQ(s.rows_executed, 41u);
  EXPECT_DOUBLE_EQ(s.average_batch_rows(), 41.0 / 4);
  EXPECT_EQ(s.dispatched(DispatchReason::kFull), 1u);
  EXPECT_EQ(s.dispatched(DispatchReason::kDelayExpired), 2u);
  EXPECT_EQ(s.dispatched(DispatchReason::kDrain), 1u);
  EXPECT_EQ(s.dispatched(DispatchReason::kDeadline), 0u);
  EXPECT_EQ(s.padded_elements, 150u);
  EXPECT_EQ(s.total_elements, 1900u);
  EXPECT_DOUBLE_EQ(s.padding_waste(), 150.0 / 1900);
  // Buckets 1, 2, 4, 8, 16, 32: sizes 1 (le=1), 3 (le=4), 5 (le=8), 32 (le=32).
  EXPECT_THAT(s.batch_size_rows.counts, ElementsAre(1, 0, 1, 1, 0, 1, 0));
}

TEST(BatcherStatsTest, NegativeValuesCountAsZero) {
  BatcherStats stats(/*priority_levels=*/1, /*max_batch_size=*/8);
  stats.RecordEnqueued(0, -5);
  stats.RecordQueueTime(0, absl::Microseconds(-10));
  BatcherStatsSnapshot s = stats.Snapshot();
  EXPECT_EQ(s.levels[0].requests_enqueued, 1u);
  EXPECT_EQ(s.levels[0].rows_enqueued, 0u);
  EXPECT_EQ(s.levels[0].queue_time_us.counts[0], 1u);
  EXPECT_EQ(s.levels[0].queue_time_us.sum, 0);
}

TEST(BatcherStatsDeathTest, LevelOutOfRangeAborts) {
  BatcherStats stats(/*priority_levels=*/2, /*max_batch_size=*/8);
  EXPECT_DEATH(stats.RecordEnqueued(2, 1), "out of range");
  EXPECT_DEATH(stats.RecordEnqueued(-1, 1), "out of range");
  EXPECT_DEATH(BatcherStats(0, 8), "priority_levels");
}

TEST(BatcherStatsTest, ConcurrentRecordingFromManyThreadsIsExact) {
  BatcherStats stats(/*priority_levels=*/2, /*max_batch_size=*/8);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&stats, t] {
      const int level = t % 2;
      for (int i = 0; i < kPerThread; ++i) {
        stats.RecordEnqueued(level, 2);
        stats.RecordQueueTime(level, absl::Microseconds(100));
        stats.RecordDispatched(DispatchReason::kFull, 8, 1, 10);
        stats.RecordComputeTime(absl::Microseconds(500), 8);
        stats.RecordCompleted(level, 2, i % 4 != 0, absl::Microseconds(700));
        stats.SetQueueDepth(level, i, 2 * i);
      }
    });
  }
  std::thread reader([&stats] {
    uint64_t last_batches = 0;
    for (int i = 0; i < 200; ++i) {
      BatcherStatsSnapshot s = stats.Snapshot();
      EXPECT_GE(s.batches, last_batches);  // counters only grow
      last_batches = s.batches;
    }
  });
  for (std::thread& t : threads) t.join();
  reader.join();
  BatcherStatsSnapshot s = stats.Snapshot();
  for (int level = 0; level < 2; ++level) {
    const LevelStatsSnapshot& l = s.levels[level];
    EXPECT_EQ(l.requests_enqueued, 2u * kPerThread);
    EXPECT_EQ(l.rows_enqueued, 4u * kPerThread);
    EXPECT_EQ(l.queue_time_us.count, 2u * kPerThread);
    EXPECT_EQ(l.requests_succeeded + l.requests_failed, 2u * kPerThread);
    EXPECT_EQ(l.requests_failed, 2u * kPerThread / 4);
    EXPECT_EQ(l.end_to_end_us.count, l.requests_succeeded);
  }
  EXPECT_EQ(s.batches, uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(s.dispatched(DispatchReason::kFull), s.batches);
  EXPECT_EQ(s.batch_size_rows.count, s.batches);
  EXPECT_EQ(s.compute_time_us.count, s.batches);
  EXPECT_DOUBLE_EQ(s.padding_waste(), 0.1);
}

}  // namespace
}  // namespace ferry
