// SPDX-License-Identifier: Apache-2.0
#include "loadgen/arrivals.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ferry {
namespace {

TEST(ArrivalScheduleTest, ConstantIsEvenlySpaced) {
  ArrivalOptions o;
  o.rate = 200;
  o.pattern = ArrivalPattern::kConstant;
  ArrivalSchedule s(o);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_NEAR(absl::ToDoubleSeconds(s.Next()), i / 200.0, 1e-9);
  }
}

TEST(ArrivalScheduleTest, PoissonHasTheMeanRateAndExponentialGaps) {
  ArrivalOptions o;
  o.rate = 1000;
  o.seed = 42;
  ArrivalSchedule s(o);
  const int n = 100000;
  double last = 0;
  int short_gaps = 0;  // gaps under the mean: 1 - 1/e of them
  absl::Duration prev = absl::ZeroDuration();
  for (int i = 0; i < n; ++i) {
    const absl::Duration t = s.Next();
    ASSERT_GE(t, prev);
    if (absl::ToDoubleSeconds(t - prev) < 1.0 / o.rate) ++short_gaps;
    prev = t;
    last = absl::ToDoubleSeconds(t);
  }
  EXPECT_NEAR(n / last, 1000, 1000 * 0.02);
  EXPECT_NEAR(static_cast<double>(short_gaps) / n, 1 - std::exp(-1.0), 0.01);
}

TEST(ArrivalScheduleTest, BurstyIsSilentWhileOffAndKeepsTheMeanRate) {
  ArrivalOptions o;
  o.rate = 500;
  o.pattern = ArrivalPattern::kBursty;
  o.burst_on = absl::Milliseconds(100);
  o.burst_off = absl::Milliseconds(400);
  ArrivalSchedule s(o);
  const int n = 50000;
  double last = 0;
  for (int i = 0; i < n; ++i) {
    last = absl::ToDoubleSeconds(s.Next());
    const double in_period = std::fmod(last, 0.5);
    ASSERT_LT(in_period, 0.1 + 1e-9) << "an arrival at " << last;
  }
  EXPECT_NEAR(n / last, 500, 500 * 0.03);
}

TEST(ArrivalScheduleTest, SameSeedSameSchedule) {
  ArrivalOptions o;
  o.seed = 9;
  ArrivalSchedule a(o), b(o);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.Next(), b.Next());
}

TEST(ParseArrivalPatternTest, AcceptsTheThreeAndNamesTheFlag) {
  ArrivalOptions o;
  EXPECT_TRUE(ParseArrivalPattern("constant", &o).ok());
  EXPECT_EQ(o.pattern, ArrivalPattern::kConstant);
  EXPECT_TRUE(ParseArrivalPattern("bursty:50/150", &o).ok());
  EXPECT_EQ(o.pattern, ArrivalPattern::kBursty);
  EXPECT_EQ(o.burst_on, absl::Milliseconds(50));
  EXPECT_EQ(o.burst_off, absl::Milliseconds(150));
  EXPECT_TRUE(ParseArrivalPattern("poisson", &o).ok());
  EXPECT_EQ(o.pattern, ArrivalPattern::kPoisson);
  for (const char* bad : {"gauss", "bursty:", "bursty:0/10", "bursty:10",
                          "bursty:a/b", "bursty:10/-1"}) {
    absl::Status st = ParseArrivalPattern(bad, &o);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(st.message()), ::testing::HasSubstr("--arrivals"));
  }
}

}  // namespace
}  // namespace ferry
