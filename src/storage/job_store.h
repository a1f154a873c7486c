// SPDX-License-Identifier: Apache-2.0
// JobStore and WorkQueue: the durable state of offline jobs.
//
// A job (JobRecord) is split into chunks (ChunkRecord): byte ranges of its
// input file, found by a validation pass. Workers lease chunks from the
// WorkQueue, write the chunk's part files, then Complete() the chunk; the
// completion and the job's counters change in one transaction. A lease that is
// not renewed expires and the chunk is leased again (its attempt count grows),
// so a crashed worker loses nothing; part files are rewritten, so nothing is
// duplicated.
//
// Two implementations pass the same contract tests
// (tests/storage/job_store_contract_test.cc): SqliteJobStore (embedded,
// durable, WAL) and MemoryJobStore (for unit tests of the job runner). The
// store is plain persistence: it knows job states but not the rules between
// them, except where a transaction needs them (compare-and-set transitions,
// leasing only from in_progress jobs).
//
// Thread-safety: implementations are safe for concurrent use. SqliteJobStore is
// also safe across processes sharing the database file.
#ifndef FERRY_STORAGE_JOB_STORE_H_
#define FERRY_STORAGE_JOB_STORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ferry {

// OpenAI Batch API states.
enum class JobState {
  kValidating,
  kInProgress,
  kFinalizing,
  kCompleted,
  kFailed,
  kExpired,
  kCancelling,
  kCancelled,
};
// "validating", "in_progress", ... as the Batch API spells them.
absl::string_view JobStateName(JobState state);
absl::StatusOr<JobState> ParseJobState(absl::string_view name);
bool IsTerminal(JobState state);  // completed, failed, expired, cancelled

struct RequestCounts {
  int64_t total = 0;
  int64_t completed = 0;
  int64_t failed = 0;
  friend bool operator==(const RequestCounts&, const RequestCounts&) = default;
};

struct JobRecord {
  std::string id;  // unique; chosen by the caller
  std::string model;
  int64_t model_version = 0;  // 0: the latest READY version
  std::string input_format;   // "csv" or "jsonl"
  std::string input_path;
  std::string output_path;
  std::string error_path;
  std::string dead_letter_path;
  // Everything else about the job (column mapping, chunk size, priority, max
  // attempts, webhook, metadata, ...), as JSON; opaque to the store.
  std::string options_json;
  JobState state = JobState::kValidating;
  RequestCounts counts;
  double compute_seconds = 0;  // summed over completed chunks
  std::string error;           // why the job failed (state failed)
  absl::Time created_at = absl::InfinitePast();
  absl::Time expires_at = absl::InfiniteFuture();  // completion window end
  // When the job entered each state; InfinitePast() if it never did.
  absl::Time in_progress_at = absl::InfinitePast();
  absl::Time finalizing_at = absl::InfinitePast();
  absl::Time completed_at = absl::InfinitePast();
  absl::Time failed_at = absl::InfinitePast();
  absl::Time expired_at = absl::InfinitePast();
  absl::Time cancelling_at = absl::InfinitePast();
  absl::Time cancelled_at = absl::InfinitePast();
};

enum class ChunkState { kPending, kLeased, kDone };

struct ChunkRecord {
  std::string job_id;
  int64_t index = 0;  // 0-based, in input order
  // Byte range [begin, end) of the input file.
  int64_t begin_offset = 0;
  int64_t end_offset = 0;
  // Number (0-based) of the chunk's first record in the job, its physical line
  // number in the input file (1-based), and how many records it holds.
  int64_t first_record = 0;
  int64_t first_line = 1;
  int64_t record_count = 0;
  ChunkState state = ChunkState::kPending;
  std::string worker;  // lease holder (kLeased), or who completed it (kDone)
  absl::Time lease_expiry = absl::InfinitePast();
  int attempts = 0;  // leases granted so far
  // Set by Complete().
  int64_t completed = 0;
  int64_t failed = 0;
  double compute_seconds = 0;
};

// What a worker reports for a finished chunk.
struct ChunkResult {
  int64_t completed = 0;  // records with a result in the output
  int64_t failed = 0;     // records in the error file
  double compute_seconds = 0;
};

struct ChunkProgress {
  int64_t pending = 0;
  int64_t leased = 0;
  int64_t done = 0;
};

class JobStore {
 public:
  virtual ~JobStore() = default;

  // ALREADY_EXISTS if the id is taken.
  virtual absl::Status CreateJob(const JobRecord& job) = 0;
  // NOT_FOUND for an unknown id.
  virtual absl::StatusOr<JobRecord> GetJob(absl::string_view id) = 0;
  // Jobs by creation time, newest first, at most `limit`, starting after the
  // job `after` (empty: from the newest). Ties broken by id.
  virtual absl::StatusOr<std::vector<JobRecord>> ListJobs(
      int limit, absl::string_view after = "") = 0;
  // Jobs in any of `states`, oldest first (what a runner picks up on start).
  virtual absl::StatusOr<std::vector<JobRecord>> ListJobsInStates(
      const std::vector<JobState>& states) = 0;

  // Compare-and-set: moves the job to `to` only if its state is one of `from`,
  // stamps the state's timestamp with `now`, stores `error` (if not empty) and
  // adds `add_failed` to counts.failed, all in one transaction (so a finalizer
  // that crashes and runs again never counts twice). FAILED_PRECONDITION
  // (naming the current state) if it is in none of them.
  virtual absl::Status Transition(absl::string_view id,
                                  const std::vector<JobState>& from,
                                  JobState to, absl::Time now,
                                  absl::string_view error = "",
                                  int64_t add_failed = 0) = 0;

  // Replaces the job's options (what its validation found, such as the CSV
  // header). NOT_FOUND for an unknown id.
  virtual absl::Status SetJobOptions(absl::string_view id,
                                     absl::string_view options_json) = 0;

  // Stores the job's chunks and sets counts.total to their record sum, in one
  // transaction. FAILED_PRECONDITION if the job already has chunks; chunk
  // indexes must be 0..n-1 in order (INVALID_ARGUMENT otherwise).
  virtual absl::Status AddChunks(absl::string_view job_id,
                                 const std::vector<ChunkRecord>& chunks) = 0;
  // Every chunk of the job, by index.
  virtual absl::StatusOr<std::vector<ChunkRecord>> ListChunks(
      absl::string_view job_id) = 0;
};

class WorkQueue {
 public:
  virtual ~WorkQueue() = default;

  // Leases the lowest-index chunk that is pending, or leased with an expired
  // lease (lease_expiry <= now), of a job in state in_progress, preferring
  // jobs in creation order; `job_id` not empty restricts to that job. The
  // chunk becomes kLeased by `worker` until now + lease, attempts + 1. Returns
  // nullopt when no chunk is available.
  virtual absl::StatusOr<std::optional<ChunkRecord>> Lease(
      absl::string_view worker, absl::Time now, absl::Duration lease,
      absl::string_view job_id = "") = 0;

  // Extends a lease to `expiry`. FAILED_PRECONDITION if `worker` no longer
  // holds it (expired and taken by another, or done).
  virtual absl::Status Renew(absl::string_view job_id, int64_t index,
                             absl::string_view worker, absl::Time expiry) = 0;

  // Marks the chunk done and adds the result to the job's counts and
  // compute_seconds, in one transaction. FAILED_PRECONDITION if `worker` does
  // not hold the lease any more (another worker may be running the chunk: its
  // completion counts, this one does not). Completing an already done chunk is
  // FAILED_PRECONDITION too, so counts never double.
  virtual absl::Status Complete(absl::string_view job_id, int64_t index,
                                absl::string_view worker,
                                const ChunkResult& result) = 0;

  // Gives a lease back unfinished (shutdown, cancel): the chunk is pending
  // again and the attempt is not counted. FAILED_PRECONDITION if not held.
  virtual absl::Status Release(absl::string_view job_id, int64_t index,
                               absl::string_view worker) = 0;

  virtual absl::StatusOr<ChunkProgress> Progress(absl::string_view job_id) = 0;

  // For a finalizer: in one transaction, every leased chunk of the job becomes
  // pending again (its holder can no longer Renew or Complete it) and every
  // chunk is returned. Afterwards the done chunks are exactly those returned
  // done: a late worker cannot add to the counts behind the finalizer's back.
  // (Only jobs in_progress lease, so with the job moved out of in_progress
  // first nothing is leased again.)
  virtual absl::StatusOr<std::vector<ChunkRecord>> FreezeChunks(
      absl::string_view job_id) = 0;

  // Makes every chunk leased by a worker whose id starts with `worker_prefix`
  // pending again, whatever its expiry (the attempt stays counted). For a
  // process that restarts under the same worker id and knows, by a lock, that
  // its previous incarnation is dead: its chunks need not wait for their
  // leases to expire. Returns how many chunks it released.
  virtual absl::StatusOr<int64_t> ReclaimLeases(
      absl::string_view worker_prefix) = 0;
};

// A job's terminal-state webhook, kept from the moment the job ends until it
// is delivered or given up: a server that stops while a receiver is down
// sends it after its restart. One per job.
enum class WebhookState { kPending, kDelivered, kGaveUp };
// "pending", "delivered", "gave_up".
absl::string_view WebhookStateName(WebhookState state);
absl::StatusOr<WebhookState> ParseWebhookState(absl::string_view name);

struct WebhookRecord {
  std::string job_id;
  std::string url;
  std::string body;  // the event as JSON: every attempt sends these bytes
  WebhookState state = WebhookState::kPending;
  int attempts = 0;  // made so far
  absl::Time created_at = absl::InfinitePast();
  absl::Time next_attempt_at = absl::InfinitePast();  // while pending
  std::string last_error;  // of the last failed attempt
};

class WebhookOutbox {
 public:
  virtual ~WebhookOutbox() = default;

  // ALREADY_EXISTS if the job has one (a job ends once).
  virtual absl::Status AddWebhook(const WebhookRecord& webhook) = 0;
  // NOT_FOUND if the job has none.
  virtual absl::StatusOr<WebhookRecord> GetWebhook(
      absl::string_view job_id) = 0;
  // Pending webhooks, earliest next_attempt_at first (ties by job id), at
  // most `limit`.
  virtual absl::StatusOr<std::vector<WebhookRecord>> PendingWebhooks(
      int limit) = 0;
  // Stores state, attempts, next_attempt_at and last_error (url, body and
  // created_at never change). NOT_FOUND if the job has none.
  virtual absl::Status UpdateWebhook(const WebhookRecord& webhook) = 0;
};

}  // namespace ferry

#endif  // FERRY_STORAGE_JOB_STORE_H_
