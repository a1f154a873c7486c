// SPDX-License-Identifier: Apache-2.0
#include "jobs/input_fetcher.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/thread_priority.h"
#include "jobs/files.h"
#include "jobs/retry.h"

namespace ferry {

namespace fs = std::filesystem;

InputFetcher::InputFetcher(FetchFn fetch, Clock* clock, int threads,
                           DoneFn done)
    : fetch_(std::move(fetch)),
      clock_(clock),
      threads_wanted_(std::max(1, threads)),
      done_(std::move(done)) {}

InputFetcher::~InputFetcher() { Stop(); }

void InputFetcher::Add(const std::string& job_id, const std::string& url,
                       const std::string& path) {
  MutexLock lock(&mu_);
  if (stopped_ || running_.count(job_id) > 0) return;
  for (const Item& queued : queue_) {
    if (queued.job_id == job_id) return;
  }
  queue_.push_back(Item{job_id, url, path});
  while (static_cast<int>(threads_.size()) < threads_wanted_) {
    const size_t n = threads_.size();
    threads_.emplace_back([this, n] {
      SetThreadName(absl::StrCat("job-fetch", n));
      Loop();
    });
  }
  cv_.Signal();
}

void InputFetcher::Cancel(const std::string& job_id) {
  MutexLock lock(&mu_);
  queue_.erase(
      std::remove_if(queue_.begin(), queue_.end(),
                     [&](const Item& i) { return i.job_id == job_id; }),
      queue_.end());
  if (running_.count(job_id) > 0) {
    cancelled_.insert(job_id);
    cv_.SignalAll();  // a wait between attempts ends
  }
}

void InputFetcher::Stop() {
  std::vector<std::thread> threads;
  {
    MutexLock lock(&mu_);
    stopped_ = true;
    queue_.clear();
    cv_.SignalAll();
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
}

void InputFetcher::Start() {
  MutexLock lock(&mu_);
  stopped_ = false;
}

bool InputFetcher::Abandoned(const std::string& job_id) {
  MutexLock lock(&mu_);
  return stopped_ || cancelled_.count(job_id) > 0;
}

void InputFetcher::Loop() {
  while (true) {
    Item item;
    {
      MutexLock lock(&mu_);
      while (!stopped_ && queue_.empty()) cv_.Wait(&mu_);
      if (stopped_) return;
      item = std::move(queue_.front());
      queue_.pop_front();
      running_.insert(item.job_id);
    }
    const absl::Status s = Fetch(item);
    {
      MutexLock lock(&mu_);
      running_.erase(item.job_id);
      cancelled_.erase(item.job_id);
    }
    done_(item.job_id, s);
  }
}

absl::Status InputFetcher::Fetch(const Item& item) {
  auto stop = [this, &item] { return Abandoned(item.job_id); };
  const std::string partial = item.path + ".download";
  absl::Status s;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    s = fetch_(item.url, partial, stop);
    if (s.ok() || !(absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s)) ||
        stop() || attempt == 3) {
      break;
    }
    // The plain schedule (1 s, 2 s); Stop() and Cancel() cut it short.
    const absl::Time wake =
        clock_->Now() + RetryBackoff(attempt, BackoffOptions{}, 0);
    {
      MutexLock lock(&mu_);
      while (!stopped_ && cancelled_.count(item.job_id) == 0 &&
             clock_->Now() < wake) {
        clock_->WaitUntil(&mu_, &cv_, wake);
      }
    }
    if (stop()) break;
  }
  // Durable before it is the input: a crash must not leave an empty file
  // that validates as a job of no records.
  if (s.ok()) s = RenameDurably(partial, item.path);
  if (s.ok()) return s;
  std::error_code ec;
  fs::remove(partial, ec);
  if (stop() && !absl::IsCancelled(s)) {
    return absl::CancelledError(absl::StrCat("input_url: ", s.message()));
  }
  return absl::Status(s.code(), absl::StrCat("input_url: ", s.message()));
}

}  // namespace ferry
