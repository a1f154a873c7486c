// SPDX-License-Identifier: Apache-2.0
// SqliteJobStore's prepared statements, shared by the files that implement
// it (sqlite_job_store.cc: jobs and chunks; sqlite_webhook_outbox.cc: the
// webhook outbox). Internal to src/storage/.
#ifndef FERRY_STORAGE_SQLITE_JOB_STORE_STATEMENTS_H_
#define FERRY_STORAGE_SQLITE_JOB_STORE_STATEMENTS_H_

#include "storage/sqlite_job_store.h"
#include "storage/sqlite_util.h"

namespace ferry {

struct SqliteJobStore::Statements {
  using Statement = sqlite::Statement;
  Statement insert_job, get_job, job_exists, list_jobs, list_jobs_after;
  Statement update_job_state, add_counts, delete_job, set_options;
  Statement insert_chunk, count_chunks, set_total, get_chunk, list_chunks;
  Statement delete_chunks, progress;
  Statement leasable_jobs, leasable_job, first_pending, first_expired;
  Statement lease_chunk, renew_chunk, complete_chunk, release_chunk;
  Statement reclaim_leases, freeze_chunks;
  Statement sync_full, sync_normal;
  Statement insert_webhook, get_webhook, pending_webhooks, update_webhook;
};

}  // namespace ferry

#endif  // FERRY_STORAGE_SQLITE_JOB_STORE_STATEMENTS_H_
