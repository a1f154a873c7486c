// SPDX-License-Identifier: Apache-2.0
#include "jobs/retry.h"

#include "gtest/gtest.h"

namespace ferry {
namespace {

TEST(RetryBackoffTest, DoublesFromOneSecondWithoutJitter) {
  BackoffOptions o;
  EXPECT_EQ(RetryBackoff(1, o, 0), absl::Seconds(1));
  EXPECT_EQ(RetryBackoff(2, o, 0), absl::Seconds(2));
  EXPECT_EQ(RetryBackoff(3, o, 0), absl::Seconds(4));
  EXPECT_EQ(RetryBackoff(4, o, 0), absl::Seconds(8));
}

TEST(RetryBackoffTest, CapsAtMaxEvenForHugeAttemptCounts) {
  BackoffOptions o;
  o.max = absl::Seconds(30);
  EXPECT_EQ(RetryBackoff(6, o, 0), absl::Seconds(30));
  EXPECT_EQ(RetryBackoff(1000000, o, 0), absl::Seconds(30));
}

TEST(RetryBackoffTest, JitterStaysWithinItsFraction) {
  BackoffOptions o;
  o.jitter = 0.1;
  EXPECT_EQ(RetryBackoff(2, o, 1.0), absl::Milliseconds(2200));
  EXPECT_EQ(RetryBackoff(2, o, -1.0), absl::Milliseconds(1800));
  EXPECT_EQ(RetryBackoff(2, o, 7.0), absl::Milliseconds(2200));  // clamped
}

TEST(IsTransientFailureTest, EngineAndCapacityErrorsAreTransient) {
  EXPECT_TRUE(IsTransientFailure(absl::InternalError("engine")));
  EXPECT_TRUE(IsTransientFailure(absl::UnavailableError("queue full")));
  EXPECT_TRUE(IsTransientFailure(absl::DeadlineExceededError("timeout")));
  EXPECT_FALSE(IsTransientFailure(absl::InvalidArgumentError("shape")));
  EXPECT_FALSE(IsTransientFailure(absl::NotFoundError("model")));
  EXPECT_FALSE(IsTransientFailure(absl::OkStatus()));
}

}  // namespace
}  // namespace ferry
