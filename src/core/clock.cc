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
  int64_t id;
  {
    MutexLock lock(&mu_);
    if (now_ >= deadline) return true;
    id = next_waiter_++;
    waiters_.emplace(id, Waiter{mu, cv});
    ++num_waiters_;
    waiters_changed_.SignalAll();
  }
  // WakeAll signals under `mu`, which we hold until Wait() releases it
  // atomically, so a wake-up between the registration above and the wait below
  // cannot be lost.
  cv->Wait(mu);
  // A WakeAll may have taken this entry and be blocked on `mu`: let go of it
  // and wait until no WakeAll still points at `mu` or `cv`, which the caller
  // may destroy as soon as we return.
  mu->Unlock();
  bool expired;
  {
    MutexLock lock(&mu_);
    while (waiters_.at(id).waking > 0) wakes_done_.Wait(&mu_);
    waiters_.erase(id);
    --num_waiters_;
    expired = now_ >= deadline;
  }
  mu->Lock();
  return expired;
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
  std::vector<std::pair<int64_t, Waiter>> waiters;
  {
    MutexLock lock(&mu_);
    for (auto& [id, w] : waiters_) {
      ++w.waking;
      waiters.emplace_back(id, w);
    }
    sleepers_.SignalAll();
  }
  for (const auto& [id, w] : waiters) {
    MutexLock lock(w.mu);
    w.cv->SignalAll();
  }
  MutexLock lock(&mu_);
  for (const auto& [id, w] : waiters) --waiters_.at(id).waking;
  wakes_done_.SignalAll();
}

}  // namespace ferry
