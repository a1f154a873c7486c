// SPDX-License-Identifier: Apache-2.0
#include "core/clock.h"

#include <algorithm>

#include "absl/time/clock.h"

namespace ferry {

RealClock* RealClock::Get() {
  static RealClock* clock = new RealClock();
  return clock;
}

absl::Time RealClock::Now() { return absl::Now(); }

bool RealClock::WaitUntil(Mutex* mu, CondVar* cv, absl::Time deadline) {
  if (deadline == absl::InfiniteFuture()) {
    cv->Wait(mu);
    return false;
  }
  cv->WaitWithDeadline(mu, deadline);
  return absl::Now() >= deadline;
}

void RealClock::SleepUntil(absl::Time deadline) {
  const absl::Duration d = deadline - absl::Now();
  if (d > absl::ZeroDuration()) absl::SleepFor(d);
}

FakeClock::FakeClock(absl::Time start) : now_(start) {}

absl::Time FakeClock::Now() {
  MutexLock lock(&mu_);
  return now_;
}

bool FakeClock::WaitUntil(Mutex* mu, CondVar* cv, absl::Time deadline) {
  {
    MutexLock lock(&mu_);
    if (now_ >= deadline) return true;
    waiters_.push_back({mu, cv});
    ++num_waiters_;
    waiters_changed_.SignalAll();
  }
  // Advance() signals under `mu`, which we hold until Wait() releases it
  // atomically, so a wake-up between the registration above and the wait below
  // cannot be lost.
  cv->Wait(mu);
  MutexLock lock(&mu_);
  auto it =
      std::find_if(waiters_.begin(), waiters_.end(),
                   [&](const Waiter& w) { return w.cv == cv && w.mu == mu; });
  if (it != waiters_.end()) waiters_.erase(it);
  --num_waiters_;
  return now_ >= deadline;
}

void FakeClock::SleepUntil(absl::Time deadline) {
  MutexLock lock(&mu_);
  ++num_waiters_;
  waiters_changed_.SignalAll();
  while (now_ < deadline) sleepers_.Wait(&mu_);
  --num_waiters_;
}

void FakeClock::Advance(absl::Duration d) {
  {
    MutexLock lock(&mu_);
    now_ += d;
  }
  WakeAll();
}

void FakeClock::SetTime(absl::Time t) {
  {
    MutexLock lock(&mu_);
    now_ = t;
  }
  WakeAll();
}

int FakeClock::num_waiters() {
  MutexLock lock(&mu_);
  return num_waiters_;
}

void FakeClock::BlockUntilWaiters(int n) {
  MutexLock lock(&mu_);
  while (num_waiters_ < n) waiters_changed_.Wait(&mu_);
}

void FakeClock::WakeAll() {
  std::vector<Waiter> waiters;
  {
    MutexLock lock(&mu_);
    waiters = waiters_;
    sleepers_.SignalAll();
  }
  for (const Waiter& w : waiters) {
    MutexLock lock(w.mu);
    w.cv->SignalAll();
  }
}

}  // namespace ferry
