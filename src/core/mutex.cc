// SPDX-License-Identifier: Apache-2.0
#include "core/mutex.h"

#include "absl/time/clock.h"

namespace ferry {

void CondVar::Wait(Mutex* mu) {
  std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
  cv_.wait(lock);
  lock.release();  // the caller keeps holding `mu`
}

bool CondVar::WaitWithDeadline(Mutex* mu, absl::Time deadline) {
  if (deadline == absl::InfiniteFuture()) {
    Wait(mu);
    return false;
  }
  std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
  cv_.wait_until(lock, absl::ToChronoTime(deadline));
  lock.release();
  return absl::Now() >= deadline;
}

void Notification::Notify() {
  MutexLock lock(&mu_);
  notified_ = true;
  cv_.SignalAll();
}

bool Notification::HasBeenNotified() {
  MutexLock lock(&mu_);
  return notified_;
}

void Notification::WaitForNotification() {
  MutexLock lock(&mu_);
  while (!notified_) cv_.Wait(&mu_);
}

bool Notification::WaitForNotificationWithTimeout(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  MutexLock lock(&mu_);
  while (!notified_) {
    if (cv_.WaitWithDeadline(&mu_, deadline)) break;
  }
  return notified_;
}

void BlockingCounter::DecrementCount() {
  MutexLock lock(&mu_);
  if (--count_ == 0) cv_.SignalAll();
}

void BlockingCounter::Wait() {
  MutexLock lock(&mu_);
  while (count_ > 0) cv_.Wait(&mu_);
}

}  // namespace ferry
