// SPDX-License-Identifier: Apache-2.0
// JobRunner: runs offline jobs to completion, durably.
//
//   Submit      stores the job as validating and returns; a worker then runs
//               the validation pass (ScanInput + the codec's mapping check),
//               stores the chunks and moves the job to in_progress, or fails
//               it with the reason when the file cannot be read or mapped. A
//               job whose input is a URL is downloaded first, on a thread of
//               an InputFetcher. A job left validating by a process that
//               stopped is validated again by the next Start().
//   workers     `parallel_chunks` threads lease chunks from the WorkQueue,
//               run them (ExecuteChunk: records into the model's batcher at
//               the offline level), write the chunk's part files (temporary
//               file, fsync, rename) and then mark the chunk done. A crash
//               anywhere loses at most the running chunks, which run again
//               when their leases expire; their part files are rewritten
//               whole, so the output stays exact.
//   housekeeper one thread: finalizes jobs whose chunks are all done
//               (concatenates parts in order into the output, error and
//               dead-letter files, then completed), finishes cancelled and
//               expired jobs (records that never ran become error lines
//               "cancelled" / "batch_expired"), keeps run windows, and reports
//               terminal states (webhooks).
//
// Every decision that involves time reads the injected Clock.
//
// Thread-safety: public methods are safe to call from any thread.
#ifndef FERRY_JOBS_JOB_RUNNER_H_
#define FERRY_JOBS_JOB_RUNNER_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "jobs/chunk_executor.h"
#include "jobs/input_fetcher.h"
#include "jobs/job_options.h"
#include "jobs/progress_rate.h"
#include "repository/model_manager.h"
#include "storage/job_store.h"

namespace ferry {

struct JobSpec {
  std::string id;  // empty: a fresh "batch_..." id
  std::string model;
  int64_t model_version = 0;  // 0: the latest READY version
  std::string input_path;
  std::string output_path;
  std::string error_path;        // empty: <output>.errors.jsonl
  std::string dead_letter_path;  // empty: <output>.dead_letters.jsonl
  JobOptions options;
};

struct JobProgress {
  JobRecord job;
  int64_t records_done = 0;  // completed + failed, running chunks included
  ChunkProgress chunks;
  // Over the last minute this process watched the job run (see
  // ProgressRate); unknown until it has watched for a moment.
  std::optional<double> records_per_second;
  std::optional<double> eta_seconds;
};

class JobRunner {
 public:
  struct Options {
    std::string worker_id;  // empty: <hostname>-<pid>
    // Part files live in <work_dir>/<job id>/.
    std::filesystem::path work_dir;
    Clock* clock = RealClock::Get();
    absl::Duration lease = absl::Seconds(60);
    int parallel_chunks = 2;
    // Records in flight per running chunk; 0: 4 x the model's max batch size
    // (at least 256), enough to keep batches full.
    int64_t max_in_flight_records = 0;
    BackoffOptions backoff;
    std::function<double()> jitter;  // tests pin it; default random
    // How often idle workers and the housekeeper look for work.
    absl::Duration poll = absl::Milliseconds(200);
    // Start() first returns to pending the chunks still leased under this
    // worker_id (a previous incarnation killed mid-chunk), instead of waiting
    // for their leases to expire. Only with a stable worker_id and a
    // DirectoryLock proving that incarnation is dead.
    bool reclaim_own_leases = false;
    // Read, parse and format chunks under SCHED_IDLE (CPU time nothing else
    // wants). Not the whole worker: one starved while it held the batcher's
    // queue lock stalled online requests for 157 ms at p99 on a saturated
    // machine (priority inversion); so everything that takes a lock the online
    // path shares (enqueueing into the batcher, taking results) runs at normal
    // priority, so a starved worker never holds one. `ferry serve` turns it on.
    bool worker_sched_idle = false;
    // Told about every job that reaches a terminal state (once per runner).
    std::function<void(const JobRecord&)> on_terminal;
    // Downloads a job's input_url to a local path (HttpDownload in `ferry
    // serve`) on one of `fetch_threads` threads of an InputFetcher (not a
    // job worker), giving up with CANCELLED once `stop` says so (the job was
    // cancelled, or the runner is stopping: the job is validated again at
    // the next start); UNAVAILABLE or DEADLINE_EXCEEDED are tried again
    // (3 attempts, 1 s then 2 s apart), anything else fails the job. Unset:
    // jobs with an input_url fail validation.
    InputFetcher::FetchFn fetch_input;
    int fetch_threads = 2;
  };

  JobRunner(JobStore* store, WorkQueue* queue, ModelManager* models,
            Options options);
  ~JobRunner();  // Stop()

  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  // Stores a job in state validating and returns it; the workers validate it
  // (see the file comment). Errors: NOT_FOUND / UNAVAILABLE for the model,
  // INVALID_ARGUMENT for options. An input that cannot be read or mapped
  // fails the job later, with the reason in its error, as the Batch API
  // reports it.
  absl::StatusOr<JobRecord> Submit(const JobSpec& spec);

  // Validates the jobs waiting for it, on the calling thread (after Start the
  // workers do; for tests and tools that drive the runner by hand).
  void ValidatePending();

  // A new job over the dead letters of a finished job `id`: their original
  // records are written (after the CSV header) to <dead-letter file>.replay
  // and scored into `output_path` with the same model and options.
  // FAILED_PRECONDITION if the job is not terminal or left no dead letters.
  absl::StatusOr<JobRecord> SubmitReplay(const std::string& id,
                                         const std::string& output_path);

  // Asks a job to stop: cancelling now, cancelled once running chunks let go
  // (partial output kept). FAILED_PRECONDITION for a terminal job.
  absl::Status Cancel(const std::string& id);

  absl::StatusOr<JobProgress> Progress(const std::string& id);

  // Starts the worker threads and the housekeeper. Jobs left in_progress,
  // finalizing or cancelling by a crashed process are picked up.
  void Start();
  // Stops taking chunks, gives running ones back (they run again later) and
  // joins the threads.
  void Stop();

  // One housekeeping pass (what the housekeeper thread does every poll);
  // exposed for tests that drive a FakeClock.
  void Housekeep();

 private:
  // A job as the workers need it, built once per runner.
  struct Prepared {
    JobRecord job;
    JobOptions options;
    ModelVersionInfo model;
    std::unique_ptr<RecordCodec> codec;
    std::optional<absl::TimeZone> zone;
  };

  // The validation pass of a job in state validating (see the file
  // comment); an error means: try again later.
  absl::Status Validate(const std::string& id);
  // How a job's input download ended (InputFetcher's DoneFn).
  void Fetched(const std::string& id, const absl::Status& s)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Moves a job that cannot be validated to failed, saying why.
  void FailValidation(const std::string& id, const absl::Status& why);
  // Takes the oldest job waiting for validation, if any.
  std::optional<std::string> NextToValidate() ABSL_LOCKS_EXCLUDED(mu_);
  void WorkerLoop(int index);
  void HousekeeperLoop();
  // Leases and runs one chunk; false when there was nothing to do.
  bool RunOneChunk(int worker);
  absl::StatusOr<std::shared_ptr<const Prepared>> Prepare(const JobRecord& job)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status WritePart(const Prepared& p, int64_t index, int attempt,
                         const ChunkOutcome& outcome);
  // Assembles the final files and moves the job to its terminal state.
  absl::Status Finalize(const JobRecord& job);
  // Whether the workers should stop the running chunks of this job.
  bool Stopping(const std::string& job_id) ABSL_LOCKS_EXCLUDED(mu_);
  void ReportTerminal(const std::string& id);
  std::string WorkerId(int worker) const;
  // Parts are named by attempt: a worker whose lease ran out may still write
  // its parts, but never over the ones of the attempt that completed.
  std::filesystem::path PartPath(const std::string& job_id, int64_t index,
                                 int attempt, const char* ext) const;

  JobStore* const store_;
  WorkQueue* const queue_;
  ModelManager* const models_;
  const Options options_;

  Mutex mu_;
  CondVar wake_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, std::shared_ptr<const Prepared>> prepared_
      ABSL_GUARDED_BY(mu_);
  // Jobs whose running chunks must let go (cancelling, expired).
  std::map<std::string, bool> halted_ ABSL_GUARDED_BY(mu_);
  // Jobs that may lease now (in_progress, inside their run window), oldest
  // first; refreshed by Housekeep.
  std::vector<std::string> runnable_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, bool> reported_ ABSL_GUARDED_BY(mu_);
  // Records finished so far in each running chunk (job id, index), for
  // Progress.
  std::map<std::pair<std::string, int64_t>,
           std::shared_ptr<std::atomic<int64_t>>>
      running_ ABSL_GUARDED_BY(mu_);
  // Rates of the jobs this process runs or was asked about, observed by
  // Progress (which Housekeep calls for every running job).
  std::map<std::string, ProgressRate> rates_ ABSL_GUARDED_BY(mu_);
  // Jobs for the workers to validate (Submit, or left validating by a
  // process that stopped), oldest first.
  std::deque<std::string> to_validate_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_;
  // Downloads input URLs; null without options_.fetch_input.
  std::unique_ptr<InputFetcher> fetcher_;
};

// Parts of a job: the name of chunk `index`'s file from lease `attempt`.
std::string JobPartName(int64_t index, int attempt, const char* ext);

// A fresh job id: "batch_" and 24 hex digits.
std::string NewJobId();

}  // namespace ferry

#endif  // FERRY_JOBS_JOB_RUNNER_H_
