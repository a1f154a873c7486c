// SPDX-License-Identifier: Apache-2.0
#include "jobs/progress_rate.h"

#include "gtest/gtest.h"

namespace ferry {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1'800'000'000);

absl::Time At(double seconds) {
  return kStart + absl::Milliseconds(static_cast<int64_t>(seconds * 1000));
}

TEST(ProgressRateTest, UnknownUntilObservationsASecondApart) {
  ProgressRate rate;
  EXPECT_FALSE(rate.PerSecond().has_value());
  rate.Observe(At(0), 0);
  EXPECT_FALSE(rate.PerSecond().has_value());
  rate.Observe(At(0), 10);  // same instant: no time has passed
  EXPECT_FALSE(rate.PerSecond().has_value());
  rate.Observe(At(0.9), 10);  // polls close together say little
  EXPECT_FALSE(rate.PerSecond().has_value());
  rate.Observe(At(2), 1000);
  ASSERT_TRUE(rate.PerSecond().has_value());
  EXPECT_DOUBLE_EQ(*rate.PerSecond(), 500);
}

TEST(ProgressRateTest, FollowsTheRecentRateOverTheWindow) {
  ProgressRate rate(absl::Seconds(10));
  // 100 records/s for 60 s, then 1000 records/s for 30 s.
  int64_t done = 0;
  for (int s = 0; s <= 60; ++s) rate.Observe(At(s), done = 100 * s);
  EXPECT_DOUBLE_EQ(*rate.PerSecond(), 100);
  for (int s = 61; s <= 90; ++s) rate.Observe(At(s), done += 1000);
  // The window holds only the last ten seconds (plus the one before).
  EXPECT_DOUBLE_EQ(*rate.PerSecond(), 1000);
}

TEST(ProgressRateTest, FrequentPollsReplaceTheNewestObservation) {
  ProgressRate rate(absl::Seconds(60));
  rate.Observe(At(0), 0);
  rate.Observe(At(1), 100);
  for (int i = 1; i <= 400; ++i) rate.Observe(At(1 + i * 0.001), 100 + i);
  // 500 records in 1.4 s, whatever the number of polls in between.
  EXPECT_NEAR(*rate.PerSecond(), 500 / 1.4, 1e-9);
}

TEST(ProgressRateTest, StalledJobHasRateZeroAndNoEta) {
  ProgressRate rate;
  rate.Observe(At(0), 50);
  rate.Observe(At(5), 50);
  EXPECT_DOUBLE_EQ(*rate.PerSecond(), 0);
  EXPECT_FALSE(EtaSeconds(100, rate.PerSecond()).has_value());
}

TEST(ProgressRateTest, EtaIsRemainingOverRate) {
  EXPECT_DOUBLE_EQ(*EtaSeconds(1000, 250.0), 4);
  EXPECT_DOUBLE_EQ(*EtaSeconds(0, 250.0), 0);
  EXPECT_FALSE(EtaSeconds(1000, std::nullopt).has_value());
}

}  // namespace
}  // namespace ferry
