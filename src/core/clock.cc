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

bool RealClock::WaitUntil(absl::Mutex* mu, absl::CondVar* cv,
                          absl::Time deadline) {
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
  absl::MutexLock lock(&mu_);
  return now_;
}

bool FakeClock::WaitUntil(absl::Mutex* mu, absl::CondVar* cv,
                          absl::Time deadline) {
  {
    absl::MutexLock lock(&mu_);
    if (now_ >= deadline) return true;
    waiters_.push_back({mu, cv});
    ++num_waiters_;
  }
  // Advance() signals under `mu`, which we hold until Wait() releases it
  // atomically, so a wake-up between the registration above and the wait below
  // cannot be lost.
  cv->Wait(mu);
  absl::MutexLock lock(&mu_);
  auto it =
      std::find_if(waiters_.begin(), waiters_.end(),
                   [&](const Waiter& w) { return w.cv == cv && w.mu == mu; });
  if (it != waiters_.end()) waiters_.erase(it);
  --num_waiters_;
  return now_ >= deadline;
}

void FakeClock::SleepUntil(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  ++num_waiters_;
  while (now_ < deadline) sleepers_.Wait(&mu_);
  --num_waiters_;
}

void FakeClock::Advance(absl::Duration d) {
  {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }
  WakeAll();
}

void FakeClock::SetTime(absl::Time t) {
  {
    absl::MutexLock lock(&mu_);
    now_ = t;
  }
  WakeAll();
}

int FakeClock::num_waiters() {
  absl::MutexLock lock(&mu_);
  return num_waiters_;
}

void FakeClock::BlockUntilWaiters(int n) {
  absl::MutexLock lock(&mu_);
  auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return num_waiters_ >= n;
  };
  mu_.Await(absl::Condition(&enough));
}

void FakeClock::WakeAll() {
  std::vector<Waiter> waiters;
  {
    absl::MutexLock lock(&mu_);
    waiters = waiters_;
    sleepers_.SignalAll();
  }
  for (const Waiter& w : waiters) {
    absl::MutexLock lock(w.mu);
    w.cv->SignalAll();
  }
}

}  // namespace ferry
