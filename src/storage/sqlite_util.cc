// SPDX-License-Identifier: Apache-2.0
#include "storage/sqlite_util.h"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ferry::sqlite {

absl::Status ErrorStatus(int rc, absl::string_view op, absl::string_view msg) {
  std::string message = absl::StrCat("sqlite ", op, ": ", msg);
  switch (rc & 0xff) {  // the primary code; extended codes refine it
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(message);
    case SQLITE_FULL:
    case SQLITE_NOMEM:
      return absl::ResourceExhaustedError(message);
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return absl::FailedPreconditionError(message);
    default:
      return absl::InternalError(message);
  }
}

int64_t TimeToMicros(absl::Time t) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (t == absl::InfinitePast()) return kMin;
  if (t == absl::InfiniteFuture()) return kMax;
  // ToUnixMicros saturates far outside ±292k years; keep finite times off the
  // sentinels so they never read back as infinite.
  return std::clamp(absl::ToUnixMicros(t), kMin + 1, kMax - 1);
}

absl::Time MicrosToTime(int64_t micros) {
  if (micros == std::numeric_limits<int64_t>::min())
    return absl::InfinitePast();
  if (micros == std::numeric_limits<int64_t>::max()) {
    return absl::InfiniteFuture();
  }
  return absl::FromUnixMicros(micros);
}

absl::StatusOr<std::unique_ptr<Database>> Database::Open(
    const std::string& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &db,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
      nullptr);
  if (rc != SQLITE_OK) {
    // sqlite hands back a connection even on failure, to carry the message.
    absl::Status status =
        ErrorStatus(rc, absl::StrCat("open '", path, "'"),
                    db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close_v2(db);
    return status;
  }
  sqlite3_extended_result_codes(db, 1);
  return std::unique_ptr<Database>(new Database(db));
}

Database::~Database() { sqlite3_close_v2(db_); }

void Database::SetBusyTimeout(absl::Duration timeout) {
  busy_timeout_ = timeout;
  sqlite3_busy_handler(db_, &Database::OnBusy, this);
}

int Database::OnBusy(void* self, int attempts) {
  auto* db = static_cast<Database*>(self);
  const int64_t now_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count();
  if (attempts == 0) db->busy_since_ns_ = now_ns;
  if (absl::Nanoseconds(now_ns - db->busy_since_ns_) >= db->busy_timeout_) {
    return 0;  // give up: the statement fails with SQLITE_BUSY
  }
  // 50 us doubling to 1 ms, with jitter so that waiters do not retry in step.
  db->jitter_ ^= db->jitter_ << 13;
  db->jitter_ ^= db->jitter_ >> 7;
  db->jitter_ ^= db->jitter_ << 17;
  const int64_t base_us =
      std::min<int64_t>(1000, int64_t{50} << std::min(attempts, 5));
  const int64_t sleep_us =
      base_us / 2 +
      static_cast<int64_t>(db->jitter_ % static_cast<uint64_t>(base_us));
  std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
  return 1;
}

absl::Status Database::Exec(const std::string& sql, absl::string_view op) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return absl::OkStatus();
  absl::Status status =
      ErrorStatus(rc, op, err != nullptr ? err : sqlite3_errstr(rc));
  sqlite3_free(err);
  return status;
}

absl::Status Database::Error(int rc, absl::string_view op) const {
  return ErrorStatus(rc, op, sqlite3_errmsg(db_));
}

int64_t Database::Changes() const { return sqlite3_changes64(db_); }

absl::StatusOr<Statement> Statement::Prepare(Database* db,
                                             absl::string_view sql,
                                             absl::string_view op,
                                             bool persistent) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(
      db->get(), sql.data(), static_cast<int>(sql.size()),
      persistent ? SQLITE_PREPARE_PERSISTENT : 0, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return db->Error(rc, absl::StrCat("prepare ", op));
  }
  return Statement(db, stmt, std::string(op));
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      op_(std::move(other.op_)),
      bind_error_(std::move(other.bind_error_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
    op_ = std::move(other.op_);
    bind_error_ = std::move(other.bind_error_);
  }
  return *this;
}

void Statement::RecordBind(int rc, int index) {
  if (rc != SQLITE_OK && bind_error_.ok()) {
    bind_error_ = db_->Error(rc, absl::StrCat(op_, " (bind ?", index, ")"));
  }
}

Statement& Statement::Bind(int index, int64_t value) {
  RecordBind(sqlite3_bind_int64(stmt_, index, value), index);
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  RecordBind(sqlite3_bind_double(stmt_, index, value), index);
  return *this;
}

Statement& Statement::Bind(int index, absl::string_view value) {
  // A non-null pointer even for an empty view: null would bind SQL NULL.
  RecordBind(
      sqlite3_bind_text64(stmt_, index, value.empty() ? "" : value.data(),
                          value.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
      index);
  return *this;
}

absl::StatusOr<bool> Statement::Step() {
  if (!bind_error_.ok()) return bind_error_;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->Error(rc, op_);
}

absl::Status Statement::Run() {
  ScopedReset reset(this);
  absl::StatusOr<bool> row = Step();
  if (!row.ok()) return row.status();
  return absl::OkStatus();
}

void Statement::Reset() {
  // sqlite3_reset repeats the last step's error; Step already reported it.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_error_ = absl::OkStatus();
}

int64_t Statement::ColumnInt64(int col) const {
  return sqlite3_column_int64(stmt_, col);
}

double Statement::ColumnDouble(int col) const {
  return sqlite3_column_double(stmt_, col);
}

std::string Statement::ColumnText(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  if (text == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(text),
                     sqlite3_column_bytes(stmt_, col));
}

bool Statement::ColumnIsNull(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

absl::StatusOr<Transaction> Transaction::Begin(Database* db) {
  absl::Status status = db->Exec("BEGIN IMMEDIATE", "begin transaction");
  if (!status.ok()) return status;
  return Transaction(db);
}

absl::StatusOr<Transaction> Transaction::BeginRead(Database* db) {
  absl::Status status = db->Exec("BEGIN", "begin read transaction");
  if (!status.ok()) return status;
  return Transaction(db);
}

Transaction::Transaction(Transaction&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)) {}

Transaction::~Transaction() {
  // Also after a failed COMMIT, unless sqlite already rolled back itself.
  if (db_ != nullptr && sqlite3_get_autocommit(db_->get()) == 0) {
    db_->Exec("ROLLBACK", "rollback").IgnoreError();
  }
}

absl::Status Transaction::Commit() {
  absl::Status status = db_->Exec("COMMIT", "commit");
  if (status.ok()) db_ = nullptr;
  return status;
}

}  // namespace ferry::sqlite
