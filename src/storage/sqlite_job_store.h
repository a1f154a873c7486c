// SPDX-License-Identifier: Apache-2.0
// SqliteJobStore: JobStore and WorkQueue in an embedded SQLite database, the
// durable store of a single-host deployment.
//
// The file is in WAL mode. Commits are fsynced (synchronous=FULL), so a job,
// a state change or a Complete() that returned OK survives a power loss, not
// only a process crash. Lease() and Renew() alone commit without the fsync
// (synchronous=NORMAL), halving the fsyncs of the chunk loop: a lease lost
// with the power is harmless, since its worker on this host is gone too, and
// the next fsynced commit of any process makes it durable (the WAL is synced
// as a whole, and recovered only as a valid prefix).
//
// Every operation that changes more than one row runs in a BEGIN IMMEDIATE
// transaction: several processes (or several SqliteJobStore objects) can share
// one file, wait for each other up to a busy timeout (5 s by default), and
// never lease the same chunk twice. A writer that waits longer than that gets
// UNAVAILABLE, which callers retry.
//
// Times are stored as unix microseconds (InfinitePast and InfiniteFuture as
// INT64_MIN and INT64_MAX), so sub-microsecond parts are dropped.
//
// Thread-safety: safe for concurrent use; one connection per object, used
// under a mutex. Safe across processes sharing the file.
#ifndef FERRY_STORAGE_SQLITE_JOB_STORE_H_
#define FERRY_STORAGE_SQLITE_JOB_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/mutex.h"
#include "storage/job_store.h"
#include "storage/sqlite_util.h"

namespace ferry {

class SqliteJobStore final : public JobStore,
                             public WorkQueue,
                             public WebhookOutbox {
 public:
  // The schema version this code reads and writes (PRAGMA user_version).
  // Version 2 added the webhooks table; a version 1 file gains it on open.
  static constexpr int kSchemaVersion = 2;

  struct Options {
    enum class Durability {
      // Every commit but Lease's and Renew's is fsynced (see above).
      kPowerLoss,
      // Only checkpoints are fsynced (synchronous=NORMAL): what returned OK
      // survives the process being killed, not the machine losing power. For
      // tests and scratch deployments, where an fsync per commit is the cost.
      kProcessCrash,
    };
    Durability durability = Durability::kPowerLoss;
    // How long a write waits for another connection's transaction before it
    // fails with UNAVAILABLE.
    absl::Duration busy_timeout = absl::Seconds(5);
  };

  // Opens the database at `path`, creating the file and schema if missing.
  // DATA_LOSS if the file is not a SQLite database or is corrupt,
  // FAILED_PRECONDITION if it cannot be opened for writing or was written by a
  // newer schema version.
  static absl::StatusOr<std::unique_ptr<SqliteJobStore>> Open(
      const std::string& path, const Options& options);
  static absl::StatusOr<std::unique_ptr<SqliteJobStore>> Open(
      const std::string& path) {
    return Open(path, Options());
  }
  ~SqliteJobStore() override;
  SqliteJobStore(const SqliteJobStore&) = delete;
  SqliteJobStore& operator=(const SqliteJobStore&) = delete;

  // JobStore.
  absl::Status CreateJob(const JobRecord& job) override;
  absl::StatusOr<JobRecord> GetJob(absl::string_view id) override;
  absl::StatusOr<std::vector<JobRecord>> ListJobs(
      int limit, absl::string_view after = "") override;
  absl::StatusOr<std::vector<JobRecord>> ListJobsInStates(
      const std::vector<JobState>& states) override;
  absl::Status Transition(absl::string_view id,
                          const std::vector<JobState>& from, JobState to,
                          absl::Time now, absl::string_view error = "",
                          int64_t add_failed = 0) override;
  absl::Status SetJobOptions(absl::string_view id,
                             absl::string_view options_json) override;
  absl::Status AddChunks(absl::string_view job_id,
                         const std::vector<ChunkRecord>& chunks) override;
  absl::StatusOr<std::vector<ChunkRecord>> ListChunks(
      absl::string_view job_id) override;

  // WorkQueue.
  absl::StatusOr<std::optional<ChunkRecord>> Lease(
      absl::string_view worker, absl::Time now, absl::Duration lease,
      absl::string_view job_id = "") override;
  absl::Status Renew(absl::string_view job_id, int64_t index,
                     absl::string_view worker, absl::Time expiry) override;
  absl::Status Complete(absl::string_view job_id, int64_t index,
                        absl::string_view worker,
                        const ChunkResult& result) override;
  absl::Status Release(absl::string_view job_id, int64_t index,
                       absl::string_view worker) override;
  absl::StatusOr<ChunkProgress> Progress(absl::string_view job_id) override;
  absl::StatusOr<std::vector<ChunkRecord>> FreezeChunks(
      absl::string_view job_id) override;
  absl::StatusOr<int64_t> ReclaimLeases(
      absl::string_view worker_prefix) override;

  // WebhookOutbox.
  absl::Status AddWebhook(const WebhookRecord& webhook) override;
  absl::StatusOr<WebhookRecord> GetWebhook(absl::string_view job_id) override;
  absl::StatusOr<std::vector<WebhookRecord>> PendingWebhooks(
      int limit) override;
  absl::Status UpdateWebhook(const WebhookRecord& webhook) override;

 private:
  struct Statements;  // the prepared statements, kept for the object's life

  SqliteJobStore(std::unique_ptr<sqlite::Database> db, const Options& options);
  absl::Status Init() ABSL_LOCKS_EXCLUDED(mu_);

  // Reads one job or chunk (NOT_FOUND naming it if missing).
  absl::StatusOr<JobRecord> ReadJob(absl::string_view id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<ChunkRecord> ReadChunk(absl::string_view job_id, int64_t index)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<bool> JobExists(absl::string_view id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The lowest leasable chunk index of one job at `now_us`, if any.
  absl::StatusOr<std::optional<int64_t>> AvailableChunk(
      const std::string& job_id, int64_t now_us)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Switches PRAGMA synchronous between FULL and NORMAL (see the header
  // comment), only when it changes.
  absl::Status SetFullSync(bool full) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  Mutex mu_;
  // Declared before stmts_: statements are finalized before the connection
  // closes.
  std::unique_ptr<sqlite::Database> db_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Statements> stmts_ ABSL_GUARDED_BY(mu_);
  bool full_sync_ ABSL_GUARDED_BY(mu_) = true;
};

}  // namespace ferry

#endif  // FERRY_STORAGE_SQLITE_JOB_STORE_H_
