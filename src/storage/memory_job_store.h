// SPDX-License-Identifier: Apache-2.0
// MemoryJobStore: JobStore and WorkQueue held in memory, for unit tests of the
// job runner and for a server run without a database. Nothing survives the
// object. Same contract as SqliteJobStore (tests/storage/
// job_store_contract_test.cc), except that times keep full absl::Time
// precision where SQLite keeps microseconds.
//
// Thread-safety: safe for concurrent use; one mutex guards everything.
#ifndef FERRY_STORAGE_MEMORY_JOB_STORE_H_
#define FERRY_STORAGE_MEMORY_JOB_STORE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/mutex.h"
#include "storage/job_store.h"

namespace ferry {

class MemoryJobStore final : public JobStore,
                             public WorkQueue,
                             public WebhookOutbox {
 public:
  MemoryJobStore() = default;
  MemoryJobStore(const MemoryJobStore&) = delete;
  MemoryJobStore& operator=(const MemoryJobStore&) = delete;

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
  struct Job {
    JobRecord record;
    std::vector<ChunkRecord> chunks;  // by index
    // Indexes by chunk state, so Lease does not scan a large job.
    std::set<int64_t> pending;
    std::set<int64_t> leased;
  };

  // Creation order, oldest first, as Lease and ListJobsInStates want it.
  static bool OlderThan(const JobRecord& a, const JobRecord& b);
  Job* FindJob(absl::string_view id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<ChunkRecord*> FindChunk(Job* job, int64_t index)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The lowest-index chunk of `job` that can be leased at `now`, if any.
  static std::optional<int64_t> Available(const Job& job, absl::Time now);

  Mutex mu_;
  std::map<std::string, Job, std::less<>> jobs_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, WebhookRecord, std::less<>> webhooks_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace ferry

#endif  // FERRY_STORAGE_MEMORY_JOB_STORE_H_
