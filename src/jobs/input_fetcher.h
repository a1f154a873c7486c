// SPDX-License-Identifier: Apache-2.0
// InputFetcher: downloads the input URLs of jobs on threads of its own, so
// that a slow or large download never holds one of the runner's job workers
// (which keep running other jobs' chunks meanwhile).
//
// A download goes to `<path>.download` first and is renamed to `path` once
// whole, so a partial file never reads as the input. UNAVAILABLE and
// DEADLINE_EXCEEDED answers are tried again (3 attempts, 1 s then 2 s apart,
// on the injected Clock); anything else is final. The job's `stop` is asked
// between reads: a cancelled job or a stopping runner abandons its download
// with CANCELLED.
//
// Thread-safety: Add and Stop are safe to call from any thread. `done` runs
// on a fetch thread with no lock of the fetcher held.
#ifndef FERRY_JOBS_INPUT_FETCHER_H_
#define FERRY_JOBS_INPUT_FETCHER_H_

#include <deque>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "core/clock.h"
#include "core/mutex.h"

namespace ferry {

class InputFetcher {
 public:
  // Downloads `url` into the file `path`, giving up with CANCELLED once
  // `stop` says so (HttpDownload in `ferry serve`).
  using FetchFn = std::function<absl::Status(const std::string& url,
                                             const std::string& path,
                                             std::function<bool()> stop)>;
  // Told how a job's download ended: OK (the file is at `path`), CANCELLED
  // (stopped), or the error, prefixed "input_url: ".
  using DoneFn =
      std::function<void(const std::string& job_id, const absl::Status&)>;

  // `threads` downloads at once (at least 1), started with the first Add.
  InputFetcher(FetchFn fetch, Clock* clock, int threads, DoneFn done);
  ~InputFetcher();  // Stop()

  InputFetcher(const InputFetcher&) = delete;
  InputFetcher& operator=(const InputFetcher&) = delete;

  // Queues the download of a job's input, unless that job's is already
  // queued or running. `stop` is asked between reads.
  void Add(const std::string& job_id, const std::string& url,
           const std::string& path, std::function<bool()> stop)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Drops the queued downloads (without calling `done`), tells the running
  // ones to stop and waits for them. A later Add starts the threads again.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Item {
    std::string job_id, url, path;
    std::function<bool()> stop;
  };
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Fetch(const Item& item) ABSL_LOCKS_EXCLUDED(mu_);
  bool stopping() ABSL_LOCKS_EXCLUDED(mu_);

  const FetchFn fetch_;
  Clock* const clock_;
  const int threads_wanted_;
  const DoneFn done_;

  Mutex mu_;
  CondVar cv_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<Item> queue_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> jobs_ ABSL_GUARDED_BY(mu_);  // queued or running
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ferry

#endif  // FERRY_JOBS_INPUT_FETCHER_H_
