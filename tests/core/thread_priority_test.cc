// SPDX-License-Identifier: Apache-2.0
#include "core/thread_priority.h"

#include <sched.h>

#include <thread>

#include "gtest/gtest.h"

namespace ferry {
namespace {

// The calling thread's policy after each switch: SCHED_IDLE and back when the
// process may, else never leaves SCHED_OTHER (never stuck in SCHED_IDLE).
TEST(ThreadPriorityTest, BackgroundAndBackOrNotAtAll) {
  int in_background = -1, after = -1;
  std::thread t([&] {
    SetThreadBackground(true);
    in_background = sched_getscheduler(0);
    SetThreadBackground(false);
    after = sched_getscheduler(0);
  });
  t.join();
  EXPECT_EQ(in_background, CanRunInBackground() ? SCHED_IDLE : SCHED_OTHER);
  EXPECT_EQ(after, SCHED_OTHER);
  // The probe left the caller alone.
  EXPECT_EQ(sched_getscheduler(0), SCHED_OTHER);
}

}  // namespace
}  // namespace ferry
