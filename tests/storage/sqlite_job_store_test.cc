// SPDX-License-Identifier: Apache-2.0
// What only SqliteJobStore promises beyond the contract: durability across
// reopening, sharing one file between store objects and processes, and
// errors (never crashes) on files it cannot use.
#include "storage/sqlite_job_store.h"

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/job_store_test_util.h"
#include "test_util/temp_dir.h"

namespace ferry {
namespace {

using ::ferry::testing::kT0;
using ::ferry::testing::MakeChunks;
using ::ferry::testing::MakeJob;
using ::testing::HasSubstr;

constexpr SqliteJobStore::Options kNoFsync = {
    .durability = SqliteJobStore::Options::Durability::kProcessCrash};

class SqliteJobStoreTest : public ::testing::Test {
 protected:
  std::string DbPath() const { return (dir_.path() / "jobs.db").string(); }

  // Tests of concurrency open with kProcessCrash: an fsync per commit would
  // make them measure the disk.
  std::unique_ptr<SqliteJobStore> OpenStore(
      SqliteJobStore::Options options = {}) {
    auto store = SqliteJobStore::Open(DbPath(), options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  // Creates a running job of `n` chunks of 10 records through its own store
  // object, closed again before returning.
  void CreateRunningJob(const std::string& id, int n) {
    std::unique_ptr<SqliteJobStore> store = OpenStore(kNoFsync);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->CreateJob(MakeJob(id, kT0)).ok());
    ASSERT_TRUE(store->AddChunks(id, MakeChunks(n)).ok());
    ASSERT_TRUE(store
                    ->Transition(id, {JobState::kValidating},
                                 JobState::kInProgress, kT0)
                    .ok());
  }

  // Every chunk done exactly once: one attempt each (no lease was handed out
  // twice) and exact counts.
  void ExpectEachChunkDoneOnce(const std::string& id, int n) {
    std::unique_ptr<SqliteJobStore> store = OpenStore();
    ASSERT_NE(store, nullptr);
    auto chunks = store->ListChunks(id);
    ASSERT_TRUE(chunks.ok()) << chunks.status();
    ASSERT_EQ(chunks->size(), static_cast<size_t>(n));
    for (const ChunkRecord& c : *chunks) {
      EXPECT_EQ(c.state, ChunkState::kDone) << "chunk " << c.index;
      EXPECT_EQ(c.attempts, 1) << "chunk " << c.index;
    }
    auto job = store->GetJob(id);
    ASSERT_TRUE(job.ok()) << job.status();
    EXPECT_EQ(
        job->counts,
        (RequestCounts{.total = n * 10, .completed = n * 9, .failed = n}));
    auto progress = store->Progress(id);
    EXPECT_EQ(progress->done, n);
  }

  testing::TempDir dir_;
};

// Leases and completes chunks of `job_id` until none is left. Returns how many
// it completed, or -1 after an error (reported in `error`).
int Drain(WorkQueue& queue, const std::string& job_id,
          const std::string& worker, std::string* error) {
  int completed = 0;
  while (true) {
    auto leased = queue.Lease(worker, kT0, absl::Hours(1), job_id);
    if (!leased.ok()) {
      *error = leased.status().ToString();
      return -1;
    }
    if (!leased->has_value()) return completed;
    absl::Status status =
        queue.Complete(job_id, (*leased)->index, worker, {9, 1, 0.5});
    if (!status.ok()) {
      *error = status.ToString();
      return -1;
    }
    ++completed;
  }
}

TEST_F(SqliteJobStoreTest, StateSurvivesReopening) {
  JobRecord job = MakeJob("job-1", kT0);
  {
    std::unique_ptr<SqliteJobStore> store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->CreateJob(job).ok());
    ASSERT_TRUE(store->AddChunks("job-1", MakeChunks(3)).ok());
    ASSERT_TRUE(store
                    ->Transition("job-1", {JobState::kValidating},
                                 JobState::kInProgress, kT0)
                    .ok());
    ASSERT_TRUE(store->Lease("w1", kT0, absl::Minutes(1)).ok());
    ASSERT_TRUE(store->Lease("w2", kT0, absl::Minutes(1)).ok());
    ASSERT_TRUE(store->Complete("job-1", 0, "w1", {7, 3, 2.0}).ok());
  }
  std::unique_ptr<SqliteJobStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  job.state = JobState::kInProgress;
  job.in_progress_at = kT0;
  job.counts = {30, 7, 3};
  job.compute_seconds = 2.0;
  testing::ExpectSameJob(*store->GetJob("job-1"), job);
  auto chunks = store->ListChunks("job-1");
  ASSERT_TRUE(chunks.ok()) << chunks.status();
  ASSERT_EQ(chunks->size(), 3u);
  EXPECT_EQ((*chunks)[0].state, ChunkState::kDone);
  EXPECT_EQ((*chunks)[0].completed, 7);
  EXPECT_EQ((*chunks)[1].state, ChunkState::kLeased);
  EXPECT_EQ((*chunks)[1].worker, "w2");
  EXPECT_EQ((*chunks)[1].lease_expiry, kT0 + absl::Minutes(1));
  EXPECT_EQ((*chunks)[2].state, ChunkState::kPending);
  // The lease held before the restart still holds, and still expires.
  ASSERT_TRUE(store->Complete("job-1", 1, "w2", {10, 0, 1.0}).ok());
  auto next = store->Lease("w3", kT0, absl::Minutes(1));
  ASSERT_TRUE(next.ok() && next->has_value());
  EXPECT_EQ((*next)->index, 2);
}

TEST_F(SqliteJobStoreTest, StoresOnOneFileNeverLeaseTheSameChunk) {
  // Each thread has its own store object, hence its own connection and
  // mutex: only SQLite's file locking keeps them apart, as between processes.
  constexpr int kChunks = 2000;
  constexpr int kWorkers = 4;
  CreateRunningJob("job-1", kChunks);
  std::vector<std::unique_ptr<SqliteJobStore>> stores;
  for (int i = 0; i < kWorkers; ++i) {
    stores.push_back(OpenStore(kNoFsync));
    ASSERT_NE(stores.back(), nullptr);
  }
  std::vector<int> completed(kWorkers);
  std::vector<std::string> errors(kWorkers);
  std::vector<std::thread> threads;
  for (int i = 0; i < kWorkers; ++i) {
    threads.emplace_back([&, i] {
      completed[i] =
          Drain(*stores[i], "job-1", absl::StrCat("w", i), &errors[i]);
    });
  }
  for (std::thread& t : threads) t.join();
  int sum = 0;
  for (int i = 0; i < kWorkers; ++i) {
    EXPECT_GE(completed[i], 0) << errors[i];
    sum += completed[i];
  }
  EXPECT_EQ(sum, kChunks);
  stores.clear();
  ExpectEachChunkDoneOnce("job-1", kChunks);
}

TEST_F(SqliteJobStoreTest, ProcessesSharingTheFileNeverLeaseTheSameChunk) {
  constexpr int kChunks = 300;
  constexpr int kProcesses = 3;
  CreateRunningJob("job-1", kChunks);
  std::vector<pid_t> children;
  for (int i = 0; i < kProcesses; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0) << "fork failed";
    if (pid == 0) {
      // The child: its own connection, no gtest, no destructors of the
      // parent's objects (_exit).
      auto store = SqliteJobStore::Open(DbPath(), kNoFsync);
      std::string error;
      int n = store.ok() ? Drain(**store, "job-1", absl::StrCat("p", i), &error)
                         : -1;
      store = absl::UnknownError("closed");  // closes the connection
      _exit(n >= 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "child " << pid << " status " << status;
  }
  ExpectEachChunkDoneOnce("job-1", kChunks);
}

TEST_F(SqliteJobStoreTest, WriteBlockedPastTheBusyTimeoutIsUnavailable) {
  std::unique_ptr<SqliteJobStore> store =
      OpenStore({.busy_timeout = absl::Milliseconds(50)});
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->CreateJob(MakeJob("job-1", kT0)).ok());
  // Another connection (as another process would) holds the write lock.
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(DbPath().c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr),
            SQLITE_OK);
  absl::Status status = store->CreateJob(MakeJob("job-2", kT0));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(status.message(), HasSubstr("locked"));
  // Reads do not wait for writers in WAL mode.
  EXPECT_TRUE(store->GetJob("job-1").ok());
  // Nothing is left half-open: once the lock is free, writes work again.
  ASSERT_EQ(sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(other);
  EXPECT_TRUE(store->CreateJob(MakeJob("job-2", kT0)).ok());
  EXPECT_TRUE(
      store
          ->Transition("job-2", {JobState::kValidating}, JobState::kFailed, kT0)
          .ok());
}

TEST_F(SqliteJobStoreTest, NotADatabaseIsDataLossNotACrash) {
  testing::WriteFile(DbPath(), std::string(8192, 'x'));
  auto store = SqliteJobStore::Open(DbPath());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(store.status().message(), HasSubstr("jobs.db"));
}

TEST_F(SqliteJobStoreTest, DamagedDatabaseIsAnErrorNotACrash) {
  CreateRunningJob("job-1", 50);
  // Overwrite everything after the header page: the file still says it is a
  // database, but its pages are garbage.
  std::string bytes = testing::ReadFile(DbPath());
  ASSERT_GT(bytes.size(), 4096u);
  for (size_t i = 4096; i < bytes.size(); ++i) bytes[i] = '\x5a';
  testing::WriteFile(DbPath(), bytes);
  auto store = SqliteJobStore::Open(DbPath());
  if (!store.ok()) {  // caught at open: fine too
    EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss)
        << store.status();
    return;
  }
  absl::StatusOr<std::vector<ChunkRecord>> chunks =
      (*store)->ListChunks("job-1");
  EXPECT_EQ(chunks.status().code(), absl::StatusCode::kDataLoss)
      << chunks.status();
}

TEST_F(SqliteJobStoreTest, MissingDirectoryIsAnError) {
  auto store =
      SqliteJobStore::Open((dir_.path() / "no" / "such" / "jobs.db").string());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("no/such/jobs.db"));
}

TEST_F(SqliteJobStoreTest, SchemaVersionIsRecordedAndANewerOneRefused) {
  ASSERT_NE(OpenStore(), nullptr);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(DbPath().c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &stmt, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(stmt, 0), SqliteJobStore::kSchemaVersion);
  sqlite3_finalize(stmt);
  ASSERT_EQ(
      sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);

  auto store = SqliteJobStore::Open(DbPath());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("99"));
}

TEST_F(SqliteJobStoreTest, AVersion1FileGainsTheWebhooksTable) {
  {
    std::unique_ptr<SqliteJobStore> store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->CreateJob(MakeJob("job-1", kT0)).ok());
  }
  // What version 1 wrote: everything but the webhooks table.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(DbPath().c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE webhooks; PRAGMA user_version = 1",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);

  std::unique_ptr<SqliteJobStore> store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->GetJob("job-1").ok());
  WebhookRecord w;
  w.job_id = "job-1";
  w.url = "http://127.0.0.1:9/";
  w.body = "{}";
  ASSERT_TRUE(store->AddWebhook(w).ok());
  auto pending = store->PendingWebhooks(10);
  ASSERT_TRUE(pending.ok()) << pending.status();
  EXPECT_EQ(pending->size(), 1u);
}

}  // namespace
}  // namespace ferry
