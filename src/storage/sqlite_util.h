// SPDX-License-Identifier: Apache-2.0
// Thin RAII wrappers over the sqlite3 C API, used by SqliteJobStore: a
// Database (one connection), a prepared Statement and a write Transaction.
// Every sqlite error becomes an absl::Status that names the operation and
// carries sqlite's own message; nothing here asserts on a database error.
//
// Thread-safety: none. A connection and its statements belong to one owner,
// which serialises access (SqliteJobStore holds its mutex around every use).
#ifndef FERRY_STORAGE_SQLITE_UTIL_H_
#define FERRY_STORAGE_SQLITE_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ferry::sqlite {

// Maps a sqlite result code onto the canonical codes: busy/locked →
// UNAVAILABLE (retryable), corrupt or not a database → DATA_LOSS, disk full →
// RESOURCE_EXHAUSTED, cannot open / read-only → FAILED_PRECONDITION, anything
// else → INTERNAL. The message is "sqlite <op>: <sqlite message>".
absl::Status ErrorStatus(int rc, absl::string_view op, absl::string_view msg);

// Times as int64 unix microseconds. InfinitePast and InfiniteFuture map to
// INT64_MIN and INT64_MAX and back exactly; finite times are clamped inside
// so that they never collide with the sentinels.
int64_t TimeToMicros(absl::Time t);
absl::Time MicrosToTime(int64_t micros);

class Database {
 public:
  // Opens (creating if missing) the database file read-write. Nothing is
  // read yet, so a file that is not a database fails on the first statement.
  static absl::StatusOr<std::unique_ptr<Database>> Open(
      const std::string& path);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Makes a statement that finds the database locked by another connection
  // retry for up to `timeout` before it fails with SQLITE_BUSY (UNAVAILABLE).
  // Unlike sqlite3_busy_timeout, whose sleeps grow to 100 ms, this retries
  // every millisecond or less: sqlite's lock has no queue, so under steady
  // contention a waiter that sleeps long keeps losing to writers that retry
  // sooner, and can starve past the timeout.
  void SetBusyTimeout(absl::Duration timeout);

  // Runs one or more statements that return no rows of interest (PRAGMAs,
  // DDL). `op` names the operation in errors.
  absl::Status Exec(const std::string& sql, absl::string_view op);
  // Status for the connection's last error, for result code `rc`.
  absl::Status Error(int rc, absl::string_view op) const;
  // Rows changed by the last INSERT/UPDATE/DELETE.
  int64_t Changes() const;

  sqlite3* get() const { return db_; }

 private:
  explicit Database(sqlite3* db) : db_(db) {}
  static int OnBusy(void* self, int attempts);

  sqlite3* db_;
  absl::Duration busy_timeout_ = absl::ZeroDuration();
  int64_t busy_since_ns_ = 0;  // steady clock, when the current wait began
  uint64_t jitter_ = 0x9e3779b97f4a7c15;
};

class Statement {
 public:
  // `persistent`: the statement is kept for the connection's lifetime (a hint
  // to sqlite's allocator).
  static absl::StatusOr<Statement> Prepare(Database* db, absl::string_view sql,
                                           absl::string_view op,
                                           bool persistent = true);
  Statement() = default;
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based, as in sqlite. Text is copied.
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, double value);
  Statement& Bind(int index, absl::string_view value);
  Statement& Bind(int index, absl::Time value) {
    return Bind(index, TimeToMicros(value));
  }
  // Avoids the ambiguity of a literal int between int64_t and double.
  Statement& Bind(int index, int value) {
    return Bind(index, static_cast<int64_t>(value));
  }

  // Advances to the next row: true if there is one, false when done. A bind
  // error (remembered since the last Reset) is reported here.
  absl::StatusOr<bool> Step();
  // Steps a statement that returns no rows, then resets it.
  absl::Status Run();
  // Makes the statement reusable and clears its bindings.
  void Reset();

  int64_t ColumnInt64(int col) const;
  double ColumnDouble(int col) const;
  std::string ColumnText(int col) const;
  absl::Time ColumnTime(int col) const {
    return MicrosToTime(ColumnInt64(col));
  }
  bool ColumnIsNull(int col) const;

 private:
  Statement(Database* db, sqlite3_stmt* stmt, std::string op)
      : db_(db), stmt_(stmt), op_(std::move(op)) {}
  void RecordBind(int rc, int index);

  Database* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string op_;
  absl::Status bind_error_;
};

// Resets a statement when it leaves scope, so an early return never leaves it
// holding a read snapshot open.
class ScopedReset {
 public:
  explicit ScopedReset(Statement* stmt) : stmt_(stmt) {}
  ~ScopedReset() { stmt_->Reset(); }
  ScopedReset(const ScopedReset&) = delete;
  ScopedReset& operator=(const ScopedReset&) = delete;

 private:
  Statement* stmt_;
};

// Steps `s` (already bound) to its end, turning each row into a T with
// `from_row` (absl::StatusOr<T>(const Statement&)); the first error ends it.
// The caller resets the statement (ScopedReset).
template <class T, class FromRow>
absl::StatusOr<std::vector<T>> ReadRows(Statement& s, FromRow from_row) {
  std::vector<T> out;
  while (true) {
    absl::StatusOr<bool> row = s.Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    absl::StatusOr<T> item = from_row(s);
    if (!item.ok()) return item.status();
    out.push_back(*std::move(item));
  }
}

// A transaction that rolls back on destruction unless Commit() succeeded.
// Begin() is BEGIN IMMEDIATE, for anything that writes: it takes the write lock
// up front, because a deferred transaction that reads and then writes fails
// with SQLITE_BUSY, without waiting, when another process wrote in between.
// BeginRead() is a plain BEGIN: several reads from one snapshot; ending it by
// rollback is fine as it wrote nothing.
class Transaction {
 public:
  static absl::StatusOr<Transaction> Begin(Database* db);
  static absl::StatusOr<Transaction> BeginRead(Database* db);
  ~Transaction();
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  absl::Status Commit();

 private:
  explicit Transaction(Database* db) : db_(db) {}
  Database* db_;
};

}  // namespace ferry::sqlite

#endif  // FERRY_STORAGE_SQLITE_UTIL_H_
