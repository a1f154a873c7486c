// SPDX-License-Identifier: Apache-2.0
// Mutex, MutexLock, CondVar and Notification: Ferry's synchronisation
// primitives.
//
// They are thin wrappers over the standard library's, annotated for clang's
// -Wthread-safety like absl::Mutex. Ferry does not use absl::Mutex: Debian's
// abseil is not built for ThreadSanitizer, which therefore cannot see its
// locking and reports every access it guards as a race. std::mutex and
// std::condition_variable go through pthreads, which the sanitizers understand.
//
// Thread-safety: as their standard counterparts.
#ifndef FERRY_CORE_MUTEX_H_
#define FERRY_CORE_MUTEX_H_

#include <condition_variable>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"

namespace ferry {

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  // Tells the analysis that the caller holds the lock (no runtime check).
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
  }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

class CondVar {
 public:
  // Atomically releases `mu`, waits for a signal (or a spurious wake-up),
  // re-acquires.
  void Wait(Mutex* mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // As Wait, but gives up at `deadline`. Returns true if the deadline has
  // passed.
  bool WaitWithDeadline(Mutex* mu, absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

// A one-shot event: Notify() once, WaitForNotification() from any number of
// threads.
class Notification {
 public:
  void Notify() ABSL_LOCKS_EXCLUDED(mu_);
  bool HasBeenNotified() ABSL_LOCKS_EXCLUDED(mu_);
  void WaitForNotification() ABSL_LOCKS_EXCLUDED(mu_);
  // Returns true if notified before the timeout.
  bool WaitForNotificationWithTimeout(absl::Duration timeout)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Mutex mu_;
  CondVar cv_;
  bool notified_ ABSL_GUARDED_BY(mu_) = false;
};

// Counts down from `initial`; Wait() returns once the count reaches zero.
class BlockingCounter {
 public:
  explicit BlockingCounter(int initial) : count_(initial) {}
  void DecrementCount() ABSL_LOCKS_EXCLUDED(mu_);
  void Wait() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Mutex mu_;
  CondVar cv_;
  int count_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ferry

#endif  // FERRY_CORE_MUTEX_H_
