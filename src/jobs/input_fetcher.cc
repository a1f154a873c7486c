// SPDX-License-Identifier: Apache-2.0
#include "jobs/input_fetcher.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/thread_priority.h"
#include "jobs/files.h"

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
                       const std::string& path, std::function<bool()> stop) {
  MutexLock lock(&mu_);
  if (stopping_ || !jobs_.insert(job_id).second) return;
  queue_.push_back(Item{job_id, url, path, std::move(stop)});
  while (static_cast<int>(threads_.size()) < threads_wanted_) {
    const size_t n = threads_.size();
    threads_.emplace_back([this, n] {
      SetThreadName(absl::StrCat("job-fetch", n));
      Loop();
    });
  }
  cv_.Signal();
}

void InputFetcher::Stop() {
  std::vector<std::thread> threads;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    queue_.clear();
    cv_.SignalAll();
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
  MutexLock lock(&mu_);
  jobs_.clear();
  stopping_ = false;
}

bool InputFetcher::stopping() {
  MutexLock lock(&mu_);
  return stopping_;
}

void InputFetcher::Loop() {
  while (true) {
    Item item;
    {
      MutexLock lock(&mu_);
      while (!stopping_ && queue_.empty()) cv_.Wait(&mu_);
      if (stopping_) return;
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    const absl::Status s = Fetch(item);
    {
      MutexLock lock(&mu_);
      jobs_.erase(item.job_id);
    }
    done_(item.job_id, s);
  }
}

absl::Status InputFetcher::Fetch(const Item& item) {
  auto stop = [this, &item] { return stopping() || item.stop(); };
  // Fetched once: a restart during validation finds the file in place.
  std::error_code ec;
  if (fs::is_regular_file(item.path, ec)) return absl::OkStatus();
  const std::string partial = item.path + ".download";
  absl::Status s;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    s = fetch_(item.url, partial, stop);
    if (s.ok() || !(absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s)) ||
        stop()) {
      break;
    }
    if (attempt < 3) {
      // Stop() cuts the wait short.
      const absl::Time wake = clock_->Now() + absl::Seconds(attempt);
      MutexLock lock(&mu_);
      while (!stopping_ && clock_->Now() < wake) {
        clock_->WaitUntil(&mu_, &cv_, wake);
      }
    }
    if (stop()) break;
  }
  if (s.ok()) {
    // Durable before it is the input: a crash must not leave an empty file
    // that validates as a job of no records.
    s = RenameDurably(partial, item.path);
  }
  if (s.ok()) return s;
  fs::remove(partial, ec);
  if (stop() && !absl::IsCancelled(s)) {
    return absl::CancelledError(absl::StrCat("input_url: ", s.message()));
  }
  return absl::Status(s.code(), absl::StrCat("input_url: ", s.message()));
}

}  // namespace ferry
