// SPDX-License-Identifier: Apache-2.0
#include "loadgen/latency_stats.h"

#include <algorithm>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace ferry {
namespace {

TEST(PercentileTest, NearestRankOnOneToOneHundred) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  EXPECT_EQ(Percentile(v, 0.50), 50);
  EXPECT_EQ(Percentile(v, 0.90), 90);
  EXPECT_EQ(Percentile(v, 0.99), 99);  // not 100: 0.99 * 100 is not rounded up
  EXPECT_EQ(Percentile(v, 0.999), 100);
  EXPECT_EQ(Percentile(v, 1.0), 100);
  EXPECT_EQ(Percentile(v, 0.001), 1);
}

TEST(PercentileTest, SmallAndEmptySets) {
  EXPECT_EQ(Percentile({}, 0.5), 0);
  EXPECT_EQ(Percentile({7}, 0.5), 7);
  EXPECT_EQ(Percentile({7}, 0.999), 7);
  // Two samples: the median is the lower one (rank ceil(1.0) = 1).
  EXPECT_EQ(Percentile({1, 9}, 0.5), 1);
  EXPECT_EQ(Percentile({1, 9}, 0.51), 9);
}

TEST(SummarizeTest, KnownDataInAnyOrder) {
  std::vector<double> v;
  for (int i = 1000; i >= 1; --i) v.push_back(i);  // descending
  std::shuffle(v.begin(), v.end(), std::mt19937(3));
  const LatencySummary s = Summarize(&v);
  EXPECT_EQ(s.count, 1000);
  EXPECT_DOUBLE_EQ(s.mean_us, 500.5);
  EXPECT_EQ(s.p50_us, 500);
  EXPECT_EQ(s.p90_us, 900);
  EXPECT_EQ(s.p99_us, 990);
  EXPECT_EQ(s.p999_us, 999);
  EXPECT_EQ(s.max_us, 1000);
  std::vector<double> none;
  EXPECT_EQ(Summarize(&none).count, 0);
}

TEST(LatencyRecorderTest, TakeHandsOverEverythingSinceTheLastTake) {
  LatencyRecorder r;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&r] {
      for (int i = 0; i < 1000; ++i) {
        r.RecordSuccess(10, 2);
        if (i % 100 == 0) r.RecordError("http 503");
      }
    });
  }
  for (auto& t : threads) t.join();
  WindowSamples w = r.Take();
  EXPECT_EQ(w.latencies_us.size(), 4000u);
  EXPECT_EQ(w.rows, 8000);
  EXPECT_EQ(w.errors["http 503"], 40);
  w = r.Take();
  EXPECT_TRUE(w.latencies_us.empty());
  EXPECT_TRUE(w.errors.empty());
  EXPECT_EQ(w.rows, 0);
}

}  // namespace
}  // namespace ferry
