// SPDX-License-Identifier: Apache-2.0
// InputFetcher: downloads the input URLs of jobs on threads of its own, so
// that a slow or large download never holds one of the runner's job workers
// (which keep running other jobs' chunks meanwhile).
//
// A download goes to `<path>.download` first and is made durable under
// `path` once whole (RenameDurably), so a partial or unsynced file never
// reads as the input. UNAVAILABLE and DEADLINE_EXCEEDED answers are tried
// again (3 attempts, RetryBackoff's 1 s then 2 s apart, on the injected
// Clock); anything else is final. Cancel(job) and Stop() are asked between
// reads: they abandon a download with CANCELLED.
//
// Thread-safety: every method is safe to call from any thread. `done` runs
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
  // (Cancel or Stop), or the error, prefixed "input_url: ".
  using DoneFn =
      std::function<void(const std::string& job_id, const absl::Status&)>;

  // `threads` downloads at once (at least 1), started with the first Add.
  // A new fetcher is started.
  InputFetcher(FetchFn fetch, Clock* clock, int threads, DoneFn done);
  ~InputFetcher();  // Stop()

  InputFetcher(const InputFetcher&) = delete;
  InputFetcher& operator=(const InputFetcher&) = delete;

  // Queues the download of a job's input, unless that job's is already
  // queued or running, or the fetcher is stopped.
  void Add(const std::string& job_id, const std::string& url,
           const std::string& path) ABSL_LOCKS_EXCLUDED(mu_);

  // Abandons the job's download: dropped if queued (`done` is not called),
  // stopped between two reads if running. Nothing if there is none.
  void Cancel(const std::string& job_id) ABSL_LOCKS_EXCLUDED(mu_);

  // Drops the queued downloads (without calling `done`), tells the running
  // ones to stop and waits for them; Add is ignored until Start().
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);
  void Start() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Item {
    std::string job_id, url, path;
  };
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Fetch(const Item& item) ABSL_LOCKS_EXCLUDED(mu_);
  // Whether the download of `job_id` should end now.
  bool Abandoned(const std::string& job_id) ABSL_LOCKS_EXCLUDED(mu_);

  const FetchFn fetch_;
  Clock* const clock_;
  const int threads_wanted_;
  const DoneFn done_;

  Mutex mu_;
  CondVar cv_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<Item> queue_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> running_ ABSL_GUARDED_BY(mu_);    // being fetched
  std::set<std::string> cancelled_ ABSL_GUARDED_BY(mu_);  // among running_
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ferry

#endif  // FERRY_JOBS_INPUT_FETCHER_H_
