// SPDX-License-Identifier: Apache-2.0
// Checks and error messages shared by the JobStore/WorkQueue implementations,
// so that SqliteJobStore and MemoryJobStore answer the same inputs with the
// same codes and messages (the contract tests compare both).
#ifndef FERRY_STORAGE_JOB_STORE_CHECKS_H_
#define FERRY_STORAGE_JOB_STORE_CHECKS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "storage/job_store.h"

namespace ferry::internal {

absl::string_view ChunkStateName(ChunkState state);
absl::StatusOr<ChunkState> ParseChunkState(absl::string_view name);

// The JobRecord field stamped when a job enters `state`; nullptr for
// kValidating, whose time is created_at.
absl::Time* StateTimestamp(JobRecord& job, JobState state);

absl::Status JobNotFound(absl::string_view job_id);
absl::Status ChunkNotFound(absl::string_view job_id, int64_t index);
absl::Status JobExists(absl::string_view job_id);
absl::Status NoWebhook(absl::string_view job_id);
absl::Status WebhookExists(absl::string_view job_id);
// INVALID_ARGUMENT naming `op` for a negative limit.
absl::Status CheckLimit(absl::string_view op, int limit);

// INVALID_ARGUMENT unless the id is usable as a key.
absl::Status CheckJobId(absl::string_view job_id);
absl::Status CheckWorker(absl::string_view worker);

// The FAILED_PRECONDITION of a compare-and-set Transition that does not apply.
absl::Status TransitionRefused(absl::string_view job_id, JobState current,
                               const std::vector<JobState>& from, JobState to);
bool StateIn(JobState state, const std::vector<JobState>& states);

// Checks AddChunks' input: indexes 0..n-1 in order, job_id empty or equal to
// `job_id`, sane ranges and counts. Returns the sum of record counts.
absl::StatusOr<int64_t> CheckNewChunks(absl::string_view job_id,
                                       const std::vector<ChunkRecord>& chunks);
absl::Status ChunksExist(absl::string_view job_id, int64_t count);

// OK if `worker` holds the lease on `chunk`: leased by it, expired or not (an
// expired lease that nobody took over is still the holder's).
// FAILED_PRECONDITION naming the chunk, its state and holder otherwise.
// `action` ("renew", "complete", "release") goes into the message.
absl::Status CheckHolder(const ChunkRecord& chunk, absl::string_view worker,
                         absl::string_view action);

absl::Status CheckResult(const ChunkResult& result);
absl::Status CheckAddFailed(int64_t failed);

}  // namespace ferry::internal

#endif  // FERRY_STORAGE_JOB_STORE_CHECKS_H_
