// SPDX-License-Identifier: Apache-2.0
// SqliteJobStore as a WebhookOutbox: the `webhooks` table (schema version 2).
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "storage/job_store_checks.h"
#include "storage/sqlite_job_store.h"
#include "storage/sqlite_job_store_statements.h"

namespace ferry {
namespace {

using sqlite::ReadRows;
using sqlite::ScopedReset;
using sqlite::Statement;
using sqlite::Transaction;

// A row of the webhooks table, its columns in FERRY_WEBHOOK_COLUMNS order (see
// the statements in sqlite_job_store.cc).
absl::StatusOr<WebhookRecord> WebhookFromRow(const Statement& s) {
  WebhookRecord w;
  w.job_id = s.ColumnText(0);
  w.url = s.ColumnText(1);
  w.body = s.ColumnText(2);
  absl::StatusOr<WebhookState> state = ParseWebhookState(s.ColumnText(3));
  if (!state.ok()) {
    return absl::DataLossError(
        absl::StrCat("webhook of job '", w.job_id,
                     "' in the database: ", state.status().message()));
  }
  w.state = *state;
  w.attempts = static_cast<int>(s.ColumnInt64(4));
  w.created_at = s.ColumnTime(5);
  w.next_attempt_at = s.ColumnTime(6);
  w.last_error = s.ColumnText(7);
  return w;
}

}  // namespace

absl::Status SqliteJobStore::AddWebhook(const WebhookRecord& webhook) {
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(SetFullSync(true));
  ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(db_.get()));
  {
    Statement& s = stmts_->get_webhook;
    ScopedReset reset(&s);
    s.Bind(1, webhook.job_id);
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (row) {
      return internal::WebhookExists(webhook.job_id);
    }
  }
  Statement& s = stmts_->insert_webhook;
  s.Bind(1, webhook.job_id)
      .Bind(2, webhook.url)
      .Bind(3, webhook.body)
      .Bind(4, WebhookStateName(webhook.state))
      .Bind(5, webhook.attempts)
      .Bind(6, webhook.created_at)
      .Bind(7, webhook.next_attempt_at)
      .Bind(8, webhook.last_error);
  RETURN_IF_ERROR(s.Run());
  return tx.Commit();
}

absl::StatusOr<WebhookRecord> SqliteJobStore::GetWebhook(
    absl::string_view job_id) {
  MutexLock lock(&mu_);
  Statement& s = stmts_->get_webhook;
  ScopedReset reset(&s);
  s.Bind(1, job_id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return internal::NoWebhook(job_id);
  return WebhookFromRow(s);
}

absl::StatusOr<std::vector<WebhookRecord>> SqliteJobStore::PendingWebhooks(
    int limit) {
  RETURN_IF_ERROR(internal::CheckLimit("PendingWebhooks", limit));
  MutexLock lock(&mu_);
  Statement& s = stmts_->pending_webhooks;
  ScopedReset reset(&s);
  s.Bind(1, limit);
  return ReadRows<WebhookRecord>(s, WebhookFromRow);
}

absl::Status SqliteJobStore::UpdateWebhook(const WebhookRecord& webhook) {
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(SetFullSync(true));
  Statement& s = stmts_->update_webhook;
  s.Bind(1, WebhookStateName(webhook.state))
      .Bind(2, webhook.attempts)
      .Bind(3, webhook.next_attempt_at)
      .Bind(4, webhook.last_error)
      .Bind(5, webhook.job_id);
  RETURN_IF_ERROR(s.Run());
  if (db_->Changes() == 0) return internal::NoWebhook(webhook.job_id);
  return absl::OkStatus();
}

}  // namespace ferry
