// SPDX-License-Identifier: Apache-2.0
#include "core/clock.h"

#include <atomic>
#include <cstring>
#include <new>
#include <thread>

#include "gtest/gtest.h"

namespace ferry {
namespace {

TEST(FakeClockTest, MovesOnlyWhenAdvanced) {
  FakeClock clock;
  const absl::Time t0 = clock.Now();
  EXPECT_EQ(clock.Now(), t0);
  clock.Advance(absl::Milliseconds(5));
  EXPECT_EQ(clock.Now(), t0 + absl::Milliseconds(5));
  clock.SetTime(t0);
  EXPECT_EQ(clock.Now(), t0);
}

TEST(FakeClockTest, WaitUntilPastDeadlineReturnsAtOnce) {
  FakeClock clock;
  Mutex mu;
  CondVar cv;
  MutexLock lock(&mu);
  EXPECT_TRUE(clock.WaitUntil(&mu, &cv, clock.Now()));
}

TEST(FakeClockTest, WaiterWakesWhenTimeReachesItsDeadline) {
  FakeClock clock;
  Mutex mu;
  CondVar cv;
  const absl::Time deadline = clock.Now() + absl::Milliseconds(10);
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    MutexLock lock(&mu);
    while (!clock.WaitUntil(&mu, &cv, deadline)) {
    }
    done = true;
  });
  clock.BlockUntilWaiters(1);
  clock.Advance(absl::Milliseconds(9));
  // The waiter re-checks and parks again: the deadline has not passed.
  clock.BlockUntilWaiters(1);
  EXPECT_FALSE(done.load());
  clock.Advance(absl::Milliseconds(1));
  waiter.join();
  EXPECT_TRUE(done.load());
}

TEST(FakeClockTest, SignalWakesWaiterBeforeDeadline) {
  FakeClock clock;
  Mutex mu;
  CondVar cv;
  bool flag = false;
  std::thread waiter([&] {
    MutexLock lock(&mu);
    while (!flag) {
      EXPECT_FALSE(clock.WaitUntil(&mu, &cv, absl::InfiniteFuture()));
    }
  });
  clock.BlockUntilWaiters(1);
  {
    MutexLock lock(&mu);
    flag = true;
    cv.Signal();
  }
  waiter.join();
  EXPECT_EQ(clock.num_waiters(), 0);
}

// A waiter may destroy its mutex and condition variable as soon as WaitUntil
// returns, while Advance() on another thread is still waking waiters. Here the
// destroyed objects are overwritten with garbage at once: an Advance that
// still touched them would lock a corrupt mutex (EINVAL, an exception).
TEST(FakeClockTest, WaiterMayDestroyItsMutexWhileAdvanceRuns) {
  FakeClock clock;
  struct Slot {
    Mutex mu;
    CondVar cv;
  };
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    alignas(Slot) unsigned char storage[sizeof(Slot)];
    for (int i = 0; i < 2000; ++i) {
      Slot* slot = new (storage) Slot;
      {
        MutexLock lock(&slot->mu);
        clock.WaitUntil(&slot->mu, &slot->cv, clock.Now() + absl::Hours(1));
      }
      slot->~Slot();
      std::memset(storage, 0xA5, sizeof(storage));
    }
    done = true;
  });
  while (!done.load()) clock.Advance(absl::Microseconds(1));
  waiter.join();
  EXPECT_EQ(clock.num_waiters(), 0);
}

TEST(FakeClockTest, SleepUntilReturnsWhenAdvancedPast) {
  FakeClock clock;
  const absl::Time wake = clock.Now() + absl::Seconds(2);
  std::thread sleeper([&] { clock.SleepUntil(wake); });
  clock.BlockUntilWaiters(1);
  clock.Advance(absl::Seconds(1));
  clock.Advance(absl::Seconds(1));
  sleeper.join();
  EXPECT_GE(clock.Now(), wake);
}

TEST(RealClockTest, WaitUntilHonoursTheDeadline) {
  RealClock* clock = RealClock::Get();
  Mutex mu;
  CondVar cv;
  MutexLock lock(&mu);
  const absl::Time deadline = clock->Now() + absl::Milliseconds(20);
  while (!clock->WaitUntil(&mu, &cv, deadline)) {
  }
  EXPECT_GE(clock->Now(), deadline);
}

}  // namespace
}  // namespace ferry
