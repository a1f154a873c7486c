// SPDX-License-Identifier: Apache-2.0
#include "storage/sqlite_job_store.h"

#include <sqlite3.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "storage/job_store_checks.h"
#include "storage/sqlite_job_store_statements.h"

namespace ferry {
namespace {

using sqlite::ReadRows;
using sqlite::ScopedReset;
using sqlite::Statement;
using sqlite::Transaction;

// Version 2 (1 plus the webhooks table). Chunks are keyed by (job_id, idx);
// chunks_by_state lets Lease find a job's lowest pending chunk, and scan its
// few leased ones, without reading the rest of a large job. State names are
// stored as text so the file reads well in the sqlite3 shell.
constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY NOT NULL,
  model TEXT NOT NULL,
  model_version INTEGER NOT NULL,
  input_format TEXT NOT NULL,
  input_path TEXT NOT NULL,
  output_path TEXT NOT NULL,
  error_path TEXT NOT NULL,
  dead_letter_path TEXT NOT NULL,
  options_json TEXT NOT NULL,
  state TEXT NOT NULL,
  total INTEGER NOT NULL,
  completed INTEGER NOT NULL,
  failed INTEGER NOT NULL,
  compute_seconds REAL NOT NULL,
  error TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  in_progress_at INTEGER NOT NULL,
  finalizing_at INTEGER NOT NULL,
  completed_at INTEGER NOT NULL,
  failed_at INTEGER NOT NULL,
  expired_at INTEGER NOT NULL,
  cancelling_at INTEGER NOT NULL,
  cancelled_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_by_created ON jobs (created_at, id);
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, created_at, id);
CREATE TABLE IF NOT EXISTS chunks (
  job_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  begin_offset INTEGER NOT NULL,
  end_offset INTEGER NOT NULL,
  first_record INTEGER NOT NULL,
  first_line INTEGER NOT NULL,
  record_count INTEGER NOT NULL,
  state TEXT NOT NULL,
  worker TEXT NOT NULL,
  lease_expiry INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  completed INTEGER NOT NULL,
  failed INTEGER NOT NULL,
  compute_seconds REAL NOT NULL,
  PRIMARY KEY (job_id, idx)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS chunks_by_state
  ON chunks (job_id, state, idx, lease_expiry);
CREATE TABLE IF NOT EXISTS webhooks (
  job_id TEXT PRIMARY KEY NOT NULL,
  url TEXT NOT NULL,
  body TEXT NOT NULL,
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  next_attempt_at INTEGER NOT NULL,
  last_error TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS webhooks_by_state
  ON webhooks (state, next_attempt_at, job_id);
)sql";

#define FERRY_JOB_COLUMNS                                                    \
  "id, model, model_version, input_format, input_path, output_path, "        \
  "error_path, dead_letter_path, options_json, state, total, completed, "    \
  "failed, compute_seconds, error, created_at, expires_at, in_progress_at, " \
  "finalizing_at, completed_at, failed_at, expired_at, cancelling_at, "      \
  "cancelled_at"
#define FERRY_CHUNK_COLUMNS                                                  \
  "job_id, idx, begin_offset, end_offset, first_record, first_line, "        \
  "record_count, state, worker, lease_expiry, attempts, completed, failed, " \
  "compute_seconds"
#define FERRY_WEBHOOK_COLUMNS                                         \
  "job_id, url, body, state, attempts, created_at, next_attempt_at, " \
  "last_error"
// Orders jobs for listing; both directions use jobs_by_created.
#define FERRY_NEWEST_FIRST " ORDER BY created_at DESC, id DESC"
#define FERRY_OLDEST_FIRST " ORDER BY created_at, id"

absl::StatusOr<JobRecord> JobFromRow(const Statement& s) {
  JobRecord j;
  j.id = s.ColumnText(0);
  j.model = s.ColumnText(1);
  j.model_version = s.ColumnInt64(2);
  j.input_format = s.ColumnText(3);
  j.input_path = s.ColumnText(4);
  j.output_path = s.ColumnText(5);
  j.error_path = s.ColumnText(6);
  j.dead_letter_path = s.ColumnText(7);
  j.options_json = s.ColumnText(8);
  absl::StatusOr<JobState> state = ParseJobState(s.ColumnText(9));
  if (!state.ok()) {
    return absl::DataLossError(absl::StrCat(
        "job '", j.id, "' in the database: ", state.status().message()));
  }
  j.state = *state;
  j.counts.total = s.ColumnInt64(10);
  j.counts.completed = s.ColumnInt64(11);
  j.counts.failed = s.ColumnInt64(12);
  j.compute_seconds = s.ColumnDouble(13);
  j.error = s.ColumnText(14);
  j.created_at = s.ColumnTime(15);
  j.expires_at = s.ColumnTime(16);
  j.in_progress_at = s.ColumnTime(17);
  j.finalizing_at = s.ColumnTime(18);
  j.completed_at = s.ColumnTime(19);
  j.failed_at = s.ColumnTime(20);
  j.expired_at = s.ColumnTime(21);
  j.cancelling_at = s.ColumnTime(22);
  j.cancelled_at = s.ColumnTime(23);
  return j;
}

absl::StatusOr<ChunkRecord> ChunkFromRow(const Statement& s) {
  ChunkRecord c;
  c.job_id = s.ColumnText(0);
  c.index = s.ColumnInt64(1);
  c.begin_offset = s.ColumnInt64(2);
  c.end_offset = s.ColumnInt64(3);
  c.first_record = s.ColumnInt64(4);
  c.first_line = s.ColumnInt64(5);
  c.record_count = s.ColumnInt64(6);
  absl::StatusOr<ChunkState> state = internal::ParseChunkState(s.ColumnText(7));
  if (!state.ok()) {
    return absl::DataLossError(
        absl::StrCat("chunk ", c.index, " of job '", c.job_id,
                     "' in the database: ", state.status().message()));
  }
  c.state = *state;
  c.worker = s.ColumnText(8);
  c.lease_expiry = s.ColumnTime(9);
  c.attempts = static_cast<int>(s.ColumnInt64(10));
  c.completed = s.ColumnInt64(11);
  c.failed = s.ColumnInt64(12);
  c.compute_seconds = s.ColumnDouble(13);
  return c;
}

// Reads every row of a statement whose columns are a job's.
absl::StatusOr<std::vector<JobRecord>> ReadJobs(Statement& s) {
  ScopedReset reset(&s);
  return ReadRows<JobRecord>(s, JobFromRow);
}

}  // namespace

SqliteJobStore::SqliteJobStore(std::unique_ptr<sqlite::Database> db,
                               const Options& options)
    : options_(options), db_(std::move(db)) {}

SqliteJobStore::~SqliteJobStore() = default;

absl::StatusOr<std::unique_ptr<SqliteJobStore>> SqliteJobStore::Open(
    const std::string& path, const Options& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<sqlite::Database> db,
                   sqlite::Database::Open(path));
  std::unique_ptr<SqliteJobStore> store(
      new SqliteJobStore(std::move(db), options));
  absl::Status status = store->Init();
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("opening job store '", path,
                                                    "': ", status.message()));
  }
  return store;
}

absl::Status SqliteJobStore::Init() {
  MutexLock lock(&mu_);
  sqlite::Database* db = db_.get();
  // Before anything that takes a lock: another process may be creating the
  // schema or checkpointing right now.
  db->SetBusyTimeout(options_.busy_timeout);

  // The first statement that reads the file: a file that is not a database
  // fails here, with SQLITE_NOTADB.
  ASSIGN_OR_RETURN(Statement wal,
                   Statement::Prepare(db, "PRAGMA journal_mode=WAL",
                                      "set journal_mode", false));
  ASSIGN_OR_RETURN(bool row, wal.Step());
  std::string mode = row ? wal.ColumnText(0) : "";
  wal.Reset();
  // ":memory:" databases cannot use WAL; they are private to one connection
  // anyway.
  if (mode != "wal" && mode != "memory") {
    return absl::FailedPreconditionError(
        absl::StrCat("journal_mode is '", mode, "', WAL is needed"));
  }
  full_sync_ = options_.durability == Options::Durability::kPowerLoss;
  RETURN_IF_ERROR(db->Exec(
      full_sync_ ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
      "set synchronous"));

  {
    ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(db));
    ASSIGN_OR_RETURN(Statement version,
                     Statement::Prepare(db, "PRAGMA user_version",
                                        "read user_version", false));
    ASSIGN_OR_RETURN(row, version.Step());
    int64_t found = row ? version.ColumnInt64(0) : 0;
    version.Reset();
    if (found > kSchemaVersion) {
      return absl::FailedPreconditionError(
          absl::StrCat("schema version ", found,
                       " is newer than this program's (", kSchemaVersion, ")"));
    }
    if (found < kSchemaVersion) {
      RETURN_IF_ERROR(db->Exec(kSchema, "create schema"));
      RETURN_IF_ERROR(
          db->Exec(absl::StrCat("PRAGMA user_version=", kSchemaVersion),
                   "set user_version"));
    }
    RETURN_IF_ERROR(tx.Commit());
  }

  auto s = std::make_unique<Statements>();
  struct Entry {
    Statement* stmt;
    const char* op;
    const char* sql;
  };
  const Entry entries[] = {
      {&s->insert_job, "insert job",
       "INSERT INTO jobs (" FERRY_JOB_COLUMNS
       ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
       "?, ?, ?, ?)"},
      {&s->get_job, "read job",
       "SELECT " FERRY_JOB_COLUMNS " FROM jobs WHERE id = ?"},
      {&s->job_exists, "find job", "SELECT 1 FROM jobs WHERE id = ?"},
      {&s->list_jobs, "list jobs",
       "SELECT " FERRY_JOB_COLUMNS " FROM jobs" FERRY_NEWEST_FIRST " LIMIT ?"},
      {&s->list_jobs_after, "list jobs",
       "SELECT " FERRY_JOB_COLUMNS " FROM jobs WHERE (created_at, id) < "
       "(SELECT created_at, id FROM jobs WHERE id = ?)" FERRY_NEWEST_FIRST
       " LIMIT ?"},
      {&s->update_job_state, "update job state",
       "UPDATE jobs SET state = ?, error = ?, in_progress_at = ?, "
       "finalizing_at = ?, completed_at = ?, failed_at = ?, expired_at = ?, "
       "cancelling_at = ?, cancelled_at = ? WHERE id = ?"},
      {&s->add_counts, "add to job counts",
       "UPDATE jobs SET completed = completed + ?, failed = failed + ?, "
       "compute_seconds = compute_seconds + ? WHERE id = ?"},
      {&s->delete_job, "delete job", "DELETE FROM jobs WHERE id = ?"},
      {&s->set_options, "set job options",
       "UPDATE jobs SET options_json = ? WHERE id = ?"},
      {&s->insert_chunk, "insert chunk",
       "INSERT INTO chunks (" FERRY_CHUNK_COLUMNS
       ") VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', '', ?, 0, 0, 0, 0.0)"},
      {&s->count_chunks, "count chunks",
       "SELECT count(*) FROM chunks WHERE job_id = ?"},
      {&s->set_total, "set job total",
       "UPDATE jobs SET total = ? WHERE id = ?"},
      {&s->get_chunk, "read chunk",
       "SELECT " FERRY_CHUNK_COLUMNS
       " FROM chunks WHERE job_id = ? AND idx = ?"},
      {&s->list_chunks, "list chunks",
       "SELECT " FERRY_CHUNK_COLUMNS
       " FROM chunks WHERE job_id = ? ORDER BY idx"},
      {&s->delete_chunks, "delete chunks",
       "DELETE FROM chunks WHERE job_id = ?"},
      {&s->progress, "count chunks by state",
       "SELECT state, count(*) FROM chunks WHERE job_id = ? GROUP BY state"},
      {&s->leasable_jobs, "find in_progress jobs",
       "SELECT id FROM jobs WHERE state = 'in_progress'" FERRY_OLDEST_FIRST},
      {&s->leasable_job, "find in_progress job",
       "SELECT id FROM jobs WHERE state = 'in_progress' AND id = ?"},
      {&s->first_pending, "find pending chunk",
       "SELECT idx FROM chunks WHERE job_id = ? AND state = 'pending' "
       "ORDER BY idx LIMIT 1"},
      {&s->first_expired, "find expired lease",
       "SELECT idx FROM chunks WHERE job_id = ? AND state = 'leased' AND "
       "lease_expiry <= ? ORDER BY idx LIMIT 1"},
      {&s->lease_chunk, "lease chunk",
       "UPDATE chunks SET state = 'leased', worker = ?, lease_expiry = ?, "
       "attempts = attempts + 1 WHERE job_id = ? AND idx = ?"},
      {&s->renew_chunk, "renew lease",
       "UPDATE chunks SET lease_expiry = ? WHERE job_id = ? AND idx = ?"},
      {&s->complete_chunk, "complete chunk",
       "UPDATE chunks SET state = 'done', lease_expiry = ?, completed = ?, "
       "failed = ?, compute_seconds = ? WHERE job_id = ? AND idx = ?"},
      {&s->release_chunk, "release chunk",
       "UPDATE chunks SET state = 'pending', worker = '', lease_expiry = ?, "
       "attempts = attempts - 1 WHERE job_id = ? AND idx = ?"},
      {&s->reclaim_leases, "reclaim leases",
       "UPDATE chunks SET state = 'pending', worker = '', lease_expiry = ? "
       "WHERE state = 'leased' AND substr(worker, 1, length(?)) = ?"},
      {&s->freeze_chunks, "freeze chunks",
       "UPDATE chunks SET state = 'pending', worker = '', lease_expiry = ? "
       "WHERE job_id = ? AND state = 'leased'"},
      {&s->insert_webhook, "insert webhook",
       "INSERT INTO webhooks (" FERRY_WEBHOOK_COLUMNS
       ") VALUES (?, ?, ?, ?, ?, ?, ?, ?)"},
      {&s->get_webhook, "read webhook",
       "SELECT " FERRY_WEBHOOK_COLUMNS " FROM webhooks WHERE job_id = ?"},
      {&s->pending_webhooks, "list pending webhooks",
       "SELECT " FERRY_WEBHOOK_COLUMNS
       " FROM webhooks WHERE state = 'pending' ORDER BY next_attempt_at, "
       "job_id LIMIT ?"},
      {&s->update_webhook, "update webhook",
       "UPDATE webhooks SET state = ?, attempts = ?, next_attempt_at = ?, "
       "last_error = ? WHERE job_id = ?"},
      {&s->sync_full, "set synchronous", "PRAGMA synchronous=FULL"},
      {&s->sync_normal, "set synchronous", "PRAGMA synchronous=NORMAL"},
  };
  for (const Entry& e : entries) {
    ASSIGN_OR_RETURN(*e.stmt, Statement::Prepare(db, e.sql, e.op));
  }
  stmts_ = std::move(s);
  return absl::OkStatus();
}

absl::Status SqliteJobStore::SetFullSync(bool full) {
  if (options_.durability != Options::Durability::kPowerLoss) {
    return absl::OkStatus();
  }
  if (full == full_sync_) return absl::OkStatus();
  RETURN_IF_ERROR(full ? stmts_->sync_full.Run() : stmts_->sync_normal.Run());
  full_sync_ = full;
  return absl::OkStatus();
}

absl::StatusOr<bool> SqliteJobStore::JobExists(absl::string_view id) {
  Statement& s = stmts_->job_exists;
  ScopedReset reset(&s);
  s.Bind(1, id);
  return s.Step();
}

absl::StatusOr<JobRecord> SqliteJobStore::ReadJob(absl::string_view id) {
  Statement& s = stmts_->get_job;
  ScopedReset reset(&s);
  s.Bind(1, id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return internal::JobNotFound(id);
  return JobFromRow(s);
}

absl::StatusOr<ChunkRecord> SqliteJobStore::ReadChunk(absl::string_view job_id,
                                                      int64_t index) {
  {
    Statement& s = stmts_->get_chunk;
    ScopedReset reset(&s);
    s.Bind(1, job_id).Bind(2, index);
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (row) return ChunkFromRow(s);
  }
  ASSIGN_OR_RETURN(bool job_exists, JobExists(job_id));
  return job_exists ? internal::ChunkNotFound(job_id, index)
                    : internal::JobNotFound(job_id);
}

absl::Status SqliteJobStore::CreateJob(const JobRecord& job) {
  RETURN_IF_ERROR(internal::CheckJobId(job.id));
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(SetFullSync(true));
  ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(bool exists, JobExists(job.id));
  if (exists) return internal::JobExists(job.id);
  Statement& s = stmts_->insert_job;
  s.Bind(1, job.id)
      .Bind(2, job.model)
      .Bind(3, job.model_version)
      .Bind(4, job.input_format)
      .Bind(5, job.input_path)
      .Bind(6, job.output_path)
      .Bind(7, job.error_path)
      .Bind(8, job.dead_letter_path)
      .Bind(9, job.options_json)
      .Bind(10, JobStateName(job.state))
      .Bind(11, job.counts.total)
      .Bind(12, job.counts.completed)
      .Bind(13, job.counts.failed)
      .Bind(14, job.compute_seconds)
      .Bind(15, job.error)
      .Bind(16, job.created_at)
      .Bind(17, job.expires_at)
      .Bind(18, job.in_progress_at)
      .Bind(19, job.finalizing_at)
      .Bind(20, job.completed_at)
      .Bind(21, job.failed_at)
      .Bind(22, job.expired_at)
      .Bind(23, job.cancelling_at)
      .Bind(24, job.cancelled_at);
  RETURN_IF_ERROR(s.Run());
  return tx.Commit();
}

absl::StatusOr<JobRecord> SqliteJobStore::GetJob(absl::string_view id) {
  MutexLock lock(&mu_);
  return ReadJob(id);
}

absl::StatusOr<std::vector<JobRecord>> SqliteJobStore::ListJobs(
    int limit, absl::string_view after) {
  RETURN_IF_ERROR(internal::CheckLimit("ListJobs", limit));
  MutexLock lock(&mu_);
  if (after.empty()) {
    stmts_->list_jobs.Bind(1, limit);
    return ReadJobs(stmts_->list_jobs);
  }
  // The page statement finds the cursor's position itself; an unknown cursor
  // would read as an empty page, so it is told apart first.
  ASSIGN_OR_RETURN(Transaction read, Transaction::BeginRead(db_.get()));
  ASSIGN_OR_RETURN(bool exists, JobExists(after));
  if (!exists) return internal::JobNotFound(after);
  stmts_->list_jobs_after.Bind(1, after).Bind(2, limit);
  return ReadJobs(stmts_->list_jobs_after);
}

absl::StatusOr<std::vector<JobRecord>> SqliteJobStore::ListJobsInStates(
    const std::vector<JobState>& states) {
  if (states.empty()) return std::vector<JobRecord>();
  MutexLock lock(&mu_);
  // The number of states varies; this runs once per runner start, so the
  // statement is prepared each time.
  std::string sql = absl::StrCat(
      "SELECT " FERRY_JOB_COLUMNS " FROM jobs WHERE state IN (",
      absl::StrJoin(std::vector<std::string>(states.size(), "?"), ", "),
      ")" FERRY_OLDEST_FIRST);
  ASSIGN_OR_RETURN(Statement s,
                   Statement::Prepare(db_.get(), sql, "list jobs in states",
                                      /*persistent=*/false));
  for (size_t i = 0; i < states.size(); ++i) {
    s.Bind(static_cast<int>(i + 1), JobStateName(states[i]));
  }
  return ReadJobs(s);
}

absl::Status SqliteJobStore::Transition(absl::string_view id,
                                        const std::vector<JobState>& from,
                                        JobState to, absl::Time now,
                                        absl::string_view error,
                                        int64_t add_failed) {
  RETURN_IF_ERROR(internal::CheckAddFailed(add_failed));
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(SetFullSync(true));
  ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(JobRecord job, ReadJob(id));
  if (!internal::StateIn(job.state, from)) {
    return internal::TransitionRefused(id, job.state, from, to);
  }
  job.state = to;
  if (absl::Time* stamp = internal::StateTimestamp(job, to)) *stamp = now;
  if (!error.empty()) job.error = std::string(error);
  Statement& s = stmts_->update_job_state;
  s.Bind(1, JobStateName(job.state))
      .Bind(2, job.error)
      .Bind(3, job.in_progress_at)
      .Bind(4, job.finalizing_at)
      .Bind(5, job.completed_at)
      .Bind(6, job.failed_at)
      .Bind(7, job.expired_at)
      .Bind(8, job.cancelling_at)
      .Bind(9, job.cancelled_at)
      .Bind(10, id);
  RETURN_IF_ERROR(s.Run());
  if (add_failed > 0) {
    Statement& add = stmts_->add_counts;
    add.Bind(1, int64_t{0}).Bind(2, add_failed).Bind(3, 0.0).Bind(4, id);
    RETURN_IF_ERROR(add.Run());
  }
  return tx.Commit();
}

absl::Status SqliteJobStore::AddChunks(absl::string_view job_id,
                                       const std::vector<ChunkRecord>& chunks) {
  ASSIGN_OR_RETURN(int64_t total, internal::CheckNewChunks(job_id, chunks));
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(SetFullSync(true));
  ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(bool exists, JobExists(job_id));
  if (!exists) return internal::JobNotFound(job_id);
  {
    Statement& s = stmts_->count_chunks;
    ScopedReset reset(&s);
    s.Bind(1, job_id);
    ASSIGN_OR_RETURN(bool row, s.Step());
    int64_t count = row ? s.ColumnInt64(0) : 0;
    if (count > 0) return internal::ChunksExist(job_id, count);
  }
  Statement& insert = stmts_->insert_chunk;
  for (const ChunkRecord& c : chunks) {
    // Only the layout is the caller's; lease state starts fresh.
    insert.Bind(1, job_id)
        .Bind(2, c.index)
        .Bind(3, c.begin_offset)
        .Bind(4, c.end_offset)
        .Bind(5, c.first_record)
        .Bind(6, c.first_line)
        .Bind(7, c.record_count)
        .Bind(8, absl::InfinitePast());
    RETURN_IF_ERROR(insert.Run());
  }
  stmts_->set_total.Bind(1, total).Bind(2, job_id);
  RETURN_IF_ERROR(stmts_->set_total.Run());
  return tx.Commit();
}

absl::Status SqliteJobStore::SetJobOptions(absl::string_view id,
                                           absl::string_view options_json) {
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(SetFullSync(true));
  ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(bool exists, JobExists(id));
  if (!exists) return internal::JobNotFound(id);
  Statement& s = stmts_->set_options;
  s.Bind(1, options_json).Bind(2, id);
  RETURN_IF_ERROR(s.Run());
  return tx.Commit();
}

absl::StatusOr<std::vector<ChunkRecord>> SqliteJobStore::ListChunks(
    absl::string_view job_id) {
  MutexLock lock(&mu_);
  // The chunks and the job's existence from one snapshot.
  ASSIGN_OR_RETURN(Transaction read, Transaction::BeginRead(db_.get()));
  std::vector<ChunkRecord> chunks;
  {
    Statement& s = stmts_->list_chunks;
    ScopedReset reset(&s);
    s.Bind(1, job_id);
    ASSIGN_OR_RETURN(chunks, ReadRows<ChunkRecord>(s, ChunkFromRow));
  }
  if (chunks.empty()) {
    ASSIGN_OR_RETURN(bool exists, JobExists(job_id));
    if (!exists) return internal::JobNotFound(job_id);
  }
  return chunks;
}

absl::StatusOr<std::optional<int64_t>> SqliteJobStore::AvailableChunk(
    const std::string& job_id, int64_t now_us) {
  std::optional<int64_t> best;
  {
    Statement& s = stmts_->first_pending;
    ScopedReset reset(&s);
    s.Bind(1, job_id);
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (row) best = s.ColumnInt64(0);
  }
  {
    Statement& s = stmts_->first_expired;
    ScopedReset reset(&s);
    s.Bind(1, job_id).Bind(2, now_us);
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (row && (!best.has_value() || s.ColumnInt64(0) < *best)) {
      best = s.ColumnInt64(0);
    }
  }
  return best;
}

absl::StatusOr<std::optional<ChunkRecord>> SqliteJobStore::Lease(
    absl::string_view worker, absl::Time now, absl::Duration lease,
    absl::string_view job_id) {
  RETURN_IF_ERROR(internal::CheckWorker(worker));
  const int64_t now_us = sqlite::TimeToMicros(now);
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(SetFullSync(false));
  ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(db_.get()));
  // Jobs oldest first; the first one with a leasable chunk wins. In-progress
  // jobs are few, and each costs two index probes.
  Statement& jobs =
      job_id.empty() ? stmts_->leasable_jobs : stmts_->leasable_job;
  std::string chosen;
  std::optional<int64_t> index;
  {
    ScopedReset reset(&jobs);
    if (!job_id.empty()) jobs.Bind(1, job_id);
    while (!index.has_value()) {
      ASSIGN_OR_RETURN(bool row, jobs.Step());
      if (!row) break;
      chosen = jobs.ColumnText(0);
      ASSIGN_OR_RETURN(index, AvailableChunk(chosen, now_us));
    }
  }
  if (!index.has_value()) return std::nullopt;  // rolls back: nothing written
  Statement& s = stmts_->lease_chunk;
  s.Bind(1, worker).Bind(2, now + lease).Bind(3, chosen).Bind(4, *index);
  RETURN_IF_ERROR(s.Run());
  ASSIGN_OR_RETURN(ChunkRecord chunk, ReadChunk(chosen, *index));
  RETURN_IF_ERROR(tx.Commit());
  return chunk;
}

absl::Status SqliteJobStore::Renew(absl::string_view job_id, int64_t index,
                                   absl::string_view worker,
                                   absl::Time expiry) {
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(SetFullSync(false));
  ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(ChunkRecord chunk, ReadChunk(job_id, index));
  RETURN_IF_ERROR(internal::CheckHolder(chunk, worker, "renew"));
  Statement& s = stmts_->renew_chunk;
  s.Bind(1, expiry).Bind(2, job_id).Bind(3, index);
  RETURN_IF_ERROR(s.Run());
  return tx.Commit();
}

absl::Status SqliteJobStore::Complete(absl::string_view job_id, int64_t index,
                                      absl::string_view worker,
                                      const ChunkResult& result) {
  RETURN_IF_ERROR(internal::CheckResult(result));
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(SetFullSync(true));
  ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(ChunkRecord chunk, ReadChunk(job_id, index));
  RETURN_IF_ERROR(internal::CheckHolder(chunk, worker, "complete"));
  Statement& done = stmts_->complete_chunk;
  done.Bind(1, absl::InfinitePast())
      .Bind(2, result.completed)
      .Bind(3, result.failed)
      .Bind(4, result.compute_seconds)
      .Bind(5, job_id)
      .Bind(6, index);
  RETURN_IF_ERROR(done.Run());
  Statement& add = stmts_->add_counts;
  add.Bind(1, result.completed)
      .Bind(2, result.failed)
      .Bind(3, result.compute_seconds)
      .Bind(4, job_id);
  RETURN_IF_ERROR(add.Run());
  return tx.Commit();
}

absl::Status SqliteJobStore::Release(absl::string_view job_id, int64_t index,
                                     absl::string_view worker) {
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(SetFullSync(true));
  ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(ChunkRecord chunk, ReadChunk(job_id, index));
  RETURN_IF_ERROR(internal::CheckHolder(chunk, worker, "release"));
  Statement& s = stmts_->release_chunk;
  s.Bind(1, absl::InfinitePast()).Bind(2, job_id).Bind(3, index);
  RETURN_IF_ERROR(s.Run());
  return tx.Commit();
}

absl::StatusOr<std::vector<ChunkRecord>> SqliteJobStore::FreezeChunks(
    absl::string_view job_id) {
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(SetFullSync(true));
  ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(bool exists, JobExists(job_id));
  if (!exists) return internal::JobNotFound(job_id);
  Statement& s = stmts_->freeze_chunks;
  s.Bind(1, absl::InfinitePast()).Bind(2, job_id);
  RETURN_IF_ERROR(s.Run());
  std::vector<ChunkRecord> chunks;
  {
    Statement& list = stmts_->list_chunks;
    ScopedReset reset(&list);
    list.Bind(1, job_id);
    while (true) {
      ASSIGN_OR_RETURN(bool row, list.Step());
      if (!row) break;
      ASSIGN_OR_RETURN(ChunkRecord c, ChunkFromRow(list));
      chunks.push_back(std::move(c));
    }
  }
  RETURN_IF_ERROR(tx.Commit());
  return chunks;
}

absl::StatusOr<int64_t> SqliteJobStore::ReclaimLeases(
    absl::string_view worker_prefix) {
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(SetFullSync(true));
  ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(db_.get()));
  Statement& s = stmts_->reclaim_leases;
  s.Bind(1, absl::InfinitePast()).Bind(2, worker_prefix).Bind(3, worker_prefix);
  RETURN_IF_ERROR(s.Run());
  const int64_t n = sqlite3_changes(db_->get());
  RETURN_IF_ERROR(tx.Commit());
  return n;
}

absl::StatusOr<ChunkProgress> SqliteJobStore::Progress(
    absl::string_view job_id) {
  MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Transaction read, Transaction::BeginRead(db_.get()));
  ASSIGN_OR_RETURN(bool exists, JobExists(job_id));
  if (!exists) return internal::JobNotFound(job_id);
  ChunkProgress p;
  Statement& s = stmts_->progress;
  ScopedReset reset(&s);
  s.Bind(1, job_id);
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    absl::StatusOr<ChunkState> state =
        internal::ParseChunkState(s.ColumnText(0));
    if (!state.ok()) {
      return absl::DataLossError(absl::StrCat(
          "job '", job_id, "' in the database: ", state.status().message()));
    }
    int64_t n = s.ColumnInt64(1);
    switch (*state) {
      case ChunkState::kPending:
        p.pending = n;
        break;
      case ChunkState::kLeased:
        p.leased = n;
        break;
      case ChunkState::kDone:
        p.done = n;
        break;
    }
  }
  return p;
}

}  // namespace ferry
