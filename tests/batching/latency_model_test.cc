// SPDX-License-Identifier: Apache-2.0
#include "batching/latency_model.h"

#include <atomic>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace ferry {
namespace {

double PredictUs(const LatencyModel& model, int64_t rows) {
  std::optional<absl::Duration> d = model.Predict(rows);
  EXPECT_TRUE(d.has_value()) << "no prediction for rows=" << rows;
  return d.has_value() ? absl::ToDoubleMicroseconds(*d) : -1;
}

// compute = base_us + per_row_us · rows, for rows cycling through 1..max_rows.
void FeedLinear(LatencyModel& model, int samples, double base_us,
                double per_row_us, int max_rows = 32) {
  for (int i = 0; i < samples; ++i) {
    const int64_t rows = 1 + (i * 7) % max_rows;
    model.Observe(rows, absl::Microseconds(base_us + per_row_us * rows));
  }
}

TEST(LatencyModelTest, NoPredictionBeforeMinSamples) {
  LatencyModel model({.decay = 0.95, .min_samples = 3});
  EXPECT_FALSE(model.Predict(8).has_value());
  model.Observe(4, absl::Milliseconds(1));
  model.Observe(8, absl::Milliseconds(2));
  EXPECT_FALSE(model.Predict(8).has_value());
  EXPECT_FALSE(model.CurrentFit().has_value());
  model.Observe(16, absl::Milliseconds(3));
  EXPECT_TRUE(model.Predict(8).has_value());
}

TEST(LatencyModelTest, IgnoresSamplesWithoutInformation) {
  LatencyModel model({.decay = 0.95, .min_samples = 1});
  model.Observe(0, absl::Milliseconds(1));
  model.Observe(-3, absl::Milliseconds(1));
  model.Observe(4, absl::Milliseconds(-1));
  model.Observe(4, absl::InfiniteDuration());
  EXPECT_FALSE(model.Predict(4).has_value());
}

TEST(LatencyModelTest, RecoversExactLinearModel) {
  LatencyModel model;
  FeedLinear(model, 200, /*base_us=*/1000, /*per_row_us=*/10);
  std::optional<LatencyModel::Fit> fit = model.CurrentFit();
  ASSERT_TRUE(fit.has_value());
  EXPECT_FALSE(fit->proportional);
  EXPECT_NEAR(fit->intercept_us, 1000, 10);
  EXPECT_NEAR(fit->slope_us_per_row, 10, 0.1);
  for (int64_t rows : {1, 8, 32, 64, 256}) {
    const double want = 1000 + 10.0 * rows;
    EXPECT_NEAR(PredictUs(model, rows), want, 0.01 * want) << "rows=" << rows;
  }
}

TEST(LatencyModelTest, RecoversLinearModelFromFewSamples) {
  LatencyModel model({.decay = 0.95, .min_samples = 3});
  model.Observe(1, absl::Microseconds(550));
  model.Observe(10, absl::Microseconds(1000));
  model.Observe(20, absl::Microseconds(1500));
  EXPECT_NEAR(PredictUs(model, 40), 500 + 50 * 40, 0.01 * 2500);
}

TEST(LatencyModelTest, FitsNoisyDataWithinTolerance) {
  LatencyModel model;
  std::mt19937 rng(42);
  std::uniform_int_distribution<int64_t> rows_dist(1, 64);
  std::normal_distribution<double> noise_us(0, 100);
  for (int i = 0; i < 500; ++i) {
    const int64_t rows = rows_dist(rng);
    const double us = 2000 + 50.0 * rows + noise_us(rng);
    model.Observe(rows, absl::Microseconds(us));
  }
  for (int64_t rows : {1, 16, 32, 64}) {
    const double want = 2000 + 50.0 * rows;
    EXPECT_NEAR(PredictUs(model, rows), want, 0.05 * want) << "rows=" << rows;
  }
}

TEST(LatencyModelTest, FollowsDriftWithinFiftySamples) {
  LatencyModel model;  // decay 0.95
  FeedLinear(model, 200, /*base_us=*/1000, /*per_row_us=*/10);
  EXPECT_NEAR(PredictUs(model, 16), 1160, 0.01 * 1160);
  // The engine slows down: 4 ms more per batch.
  FeedLinear(model, 50, /*base_us=*/5000, /*per_row_us=*/10);
  for (int64_t rows : {1, 16, 32}) {
    const double want = 5000 + 10.0 * rows;
    EXPECT_NEAR(PredictUs(model, rows), want, 0.10 * want) << "rows=" << rows;
  }
  // ...and keeps converging.
  FeedLinear(model, 150, /*base_us=*/5000, /*per_row_us=*/10);
  EXPECT_NEAR(PredictUs(model, 16), 5160, 0.01 * 5160);
}

TEST(LatencyModelTest, NoDecayIsPlainLeastSquares) {
  LatencyModel model({.decay = 1.0, .min_samples = 1});
  // Points (1, 100), (2, 300), (3, 200): least squares gives b = 50, a = 100.
  model.Observe(1, absl::Microseconds(100));
  model.Observe(2, absl::Microseconds(300));
  model.Observe(3, absl::Microseconds(200));
  std::optional<LatencyModel::Fit> fit = model.CurrentFit();
  ASSERT_TRUE(fit.has_value());
  EXPECT_NEAR(fit->slope_us_per_row, 50, 1e-9);
  EXPECT_NEAR(fit->intercept_us, 100, 1e-9);
}

TEST(LatencyModelTest, SingleRowSizeFallsBackToProportionalEstimate) {
  LatencyModel model;
  for (int i = 0; i < 20; ++i) model.Observe(32, absl::Milliseconds(4));
  std::optional<LatencyModel::Fit> fit = model.CurrentFit();
  ASSERT_TRUE(fit.has_value());
  EXPECT_TRUE(fit->proportional);
  EXPECT_NEAR(fit->mean_rows, 32, 1e-9);
  EXPECT_NEAR(fit->mean_compute_us, 4000, 1e-6);
  // At or below the mean: the mean itself (a smaller batch is not assumed
  // cheaper).
  EXPECT_NEAR(PredictUs(model, 32), 4000, 1e-6);
  EXPECT_NEAR(PredictUs(model, 1), 4000, 1e-6);
  EXPECT_NEAR(PredictUs(model, 0), 4000, 1e-6);
  // Above it: in proportion to the rows.
  EXPECT_NEAR(PredictUs(model, 64), 8000, 1e-6);
}

TEST(LatencyModelTest, NearlyConstantRowsStillFallBack) {
  LatencyModel model;
  for (int i = 0; i < 40; ++i) {
    // Mostly 100 rows, now and then 101, with a time that would give a wild
    // slope.
    const int64_t rows = i % 10 == 0 ? 101 : 100;
    model.Observe(rows, absl::Microseconds(rows == 101 ? 9000 : 5000));
  }
  std::optional<LatencyModel::Fit> fit = model.CurrentFit();
  ASSERT_TRUE(fit.has_value());
  EXPECT_TRUE(fit->proportional);
}

TEST(LatencyModelTest, SlopeIsClampedAtZero) {
  LatencyModel model({.decay = 1.0, .min_samples = 1});
  // Bigger batches look faster: the fit must not predict less time for more
  // rows.
  for (int i = 0; i < 10; ++i) {
    model.Observe(1, absl::Microseconds(2000));
    model.Observe(10, absl::Microseconds(1000));
  }
  std::optional<LatencyModel::Fit> fit = model.CurrentFit();
  ASSERT_TRUE(fit.has_value());
  EXPECT_EQ(fit->slope_us_per_row, 0);
  EXPECT_NEAR(fit->intercept_us, 1500, 1e-6);
  EXPECT_NEAR(PredictUs(model, 1000), 1500, 1e-6);
}

TEST(LatencyModelTest, InterceptIsClampedAtZero) {
  LatencyModel model({.decay = 1.0, .min_samples = 1});
  // An unconstrained fit would give a = -100 us; through the origin b = Σxy /
  // Σxx.
  model.Observe(10, absl::Microseconds(900));
  model.Observe(20, absl::Microseconds(1900));
  std::optional<LatencyModel::Fit> fit = model.CurrentFit();
  ASSERT_TRUE(fit.has_value());
  EXPECT_EQ(fit->intercept_us, 0);
  const double slope = (10 * 900 + 20 * 1900) / (10.0 * 10 + 20.0 * 20);
  EXPECT_NEAR(fit->slope_us_per_row, slope, 1e-9);
  EXPECT_NEAR(PredictUs(model, 0), 0, 1e-9);
  EXPECT_GE(PredictUs(model, 1), 0);
}

TEST(LatencyModelTest, ConcurrentObserveAndPredictStaySane) {
  LatencyModel model;
  constexpr int kSamplesPerWriter = 20000;
  std::atomic<int> writers_done{0};
  std::atomic<int64_t> bad_predictions{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < kSamplesPerWriter; ++i) {
        const int64_t rows = 1 + (i * 5 + w) % 64;
        model.Observe(rows, absl::Microseconds(1000 + 10.0 * rows));
      }
      writers_done.fetch_add(1);
    });
  }
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&] {
      while (writers_done.load() < 2) {
        std::optional<absl::Duration> d = model.Predict(16);
        if (d.has_value() &&
            (*d < absl::Microseconds(1000) || *d > absl::Microseconds(2000))) {
          bad_predictions.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(bad_predictions.load(), 0);
  std::optional<LatencyModel::Fit> fit = model.CurrentFit();
  ASSERT_TRUE(fit.has_value());
  EXPECT_EQ(fit->samples, 2 * kSamplesPerWriter);
  EXPECT_NEAR(PredictUs(model, 16), 1160, 0.01 * 1160);
}

}  // namespace
}  // namespace ferry
