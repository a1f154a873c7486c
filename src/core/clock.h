// SPDX-License-Identifier: Apache-2.0
// Clock: the source of "now" and of timed waits, injected into everything that
// schedules (batcher, job leases, retries) so tests can drive time by hand.
//
// RealClock reads absl::Now() and waits on the condition variable with a
// deadline. FakeClock only moves when a test calls Advance()/SetTime(); waiters
// whose deadline has passed are woken then. Both are safe for concurrent use.
#ifndef FERRY_CORE_CLOCK_H_
#define FERRY_CORE_CLOCK_H_

#include <cstdint>
#include <map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "core/mutex.h"

namespace ferry {

class Clock {
 public:
  virtual ~Clock() = default;

  virtual absl::Time Now() = 0;

  // Waits on `cv` (with `mu` held, as CondVar::Wait) until it is
  // signalled or Now() reaches `deadline`. Spurious wake-ups are allowed:
  // callers re-check their condition. Returns true if the deadline has passed.
  // absl::InfiniteFuture() waits for a signal only.
  virtual bool WaitUntil(Mutex* mu, CondVar* cv, absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) = 0;

  // Blocks the calling thread until Now() >= deadline.
  virtual void SleepUntil(absl::Time deadline) = 0;
  void SleepFor(absl::Duration d) { SleepUntil(Now() + d); }
};

// The wall clock. Use RealClock::Get() where no clock is injected.
class RealClock final : public Clock {
 public:
  static RealClock* Get();

  absl::Time Now() override;
  bool WaitUntil(Mutex* mu, CondVar* cv, absl::Time deadline) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  void SleepUntil(absl::Time deadline) override;
};

// A clock that moves only when told to. WaitUntil returns only once no
// concurrent Advance() still holds a pointer to its mutex or condition
// variable, so both may live on the waiter's stack.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000));

  absl::Time Now() override ABSL_LOCKS_EXCLUDED(mu_);
  bool WaitUntil(Mutex* mu, CondVar* cv, absl::Time deadline) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) ABSL_LOCKS_EXCLUDED(mu_);
  void SleepUntil(absl::Time deadline) override ABSL_LOCKS_EXCLUDED(mu_);

  // Moves time forward and wakes every waiter.
  void Advance(absl::Duration d) ABSL_LOCKS_EXCLUDED(mu_);
  void SetTime(absl::Time t) ABSL_LOCKS_EXCLUDED(mu_);

  // Number of threads inside WaitUntil/SleepUntil; lets a test wait until a
  // worker is parked before it advances time.
  int num_waiters() ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks (in real time) until at least `n` threads wait on this clock.
  void BlockUntilWaiters(int n) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Waiter {
    Mutex* mu;
    CondVar* cv;
    int waking = 0;  // WakeAll calls about to signal it; it waits for 0
  };
  void WakeAll() ABSL_LOCKS_EXCLUDED(mu_);

  Mutex mu_;
  CondVar sleepers_;         // SleepUntil callers wait here, on mu_
  CondVar waiters_changed_;  // BlockUntilWaiters waits here, on mu_
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  CondVar wakes_done_;  // a WaitUntil leaving waits here, on mu_
  std::map<int64_t, Waiter> waiters_ ABSL_GUARDED_BY(mu_);
  int64_t next_waiter_ ABSL_GUARDED_BY(mu_) = 0;
  int num_waiters_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ferry

#endif  // FERRY_CORE_CLOCK_H_
