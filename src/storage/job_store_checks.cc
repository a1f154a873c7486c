// SPDX-License-Identifier: Apache-2.0
#include "storage/job_store_checks.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ferry::internal {

absl::string_view ChunkStateName(ChunkState state) {
  switch (state) {
    case ChunkState::kPending:
      return "pending";
    case ChunkState::kLeased:
      return "leased";
    case ChunkState::kDone:
      return "done";
  }
  return "unknown";
}

absl::StatusOr<ChunkState> ParseChunkState(absl::string_view name) {
  for (ChunkState state :
       {ChunkState::kPending, ChunkState::kLeased, ChunkState::kDone}) {
    if (ChunkStateName(state) == name) return state;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown chunk state '", name, "'"));
}

absl::Time* StateTimestamp(JobRecord& job, JobState state) {
  switch (state) {
    case JobState::kValidating:
      return nullptr;
    case JobState::kInProgress:
      return &job.in_progress_at;
    case JobState::kFinalizing:
      return &job.finalizing_at;
    case JobState::kCompleted:
      return &job.completed_at;
    case JobState::kFailed:
      return &job.failed_at;
    case JobState::kExpired:
      return &job.expired_at;
    case JobState::kCancelling:
      return &job.cancelling_at;
    case JobState::kCancelled:
      return &job.cancelled_at;
  }
  return nullptr;
}

absl::Status JobNotFound(absl::string_view job_id) {
  return absl::NotFoundError(absl::StrCat("job '", job_id, "' not found"));
}

absl::Status ChunkNotFound(absl::string_view job_id, int64_t index) {
  return absl::NotFoundError(
      absl::StrCat("job '", job_id, "' has no chunk ", index));
}

absl::Status JobExists(absl::string_view job_id) {
  return absl::AlreadyExistsError(
      absl::StrCat("job '", job_id, "' already exists"));
}

absl::Status NoWebhook(absl::string_view job_id) {
  return absl::NotFoundError(absl::StrCat("job '", job_id, "' has no webhook"));
}

absl::Status WebhookExists(absl::string_view job_id) {
  return absl::AlreadyExistsError(
      absl::StrCat("job '", job_id, "' already has a webhook"));
}

absl::Status CheckLimit(absl::string_view op, int limit) {
  if (limit >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(op, ": limit is ", limit, " (must be >= 0)"));
}

absl::Status CheckJobId(absl::string_view job_id) {
  if (job_id.empty()) return absl::InvalidArgumentError("job id is empty");
  return absl::OkStatus();
}

absl::Status CheckWorker(absl::string_view worker) {
  // An empty holder would be indistinguishable from "no holder".
  if (worker.empty()) return absl::InvalidArgumentError("worker is empty");
  return absl::OkStatus();
}

bool StateIn(JobState state, const std::vector<JobState>& states) {
  return std::find(states.begin(), states.end(), state) != states.end();
}

absl::Status TransitionRefused(absl::string_view job_id, JobState current,
                               const std::vector<JobState>& from, JobState to) {
  return absl::FailedPreconditionError(absl::StrCat(
      "job '", job_id, "' is ", JobStateName(current), ", not ",
      from.empty() ? "any state"
                   : absl::StrJoin(from, " or ",
                                   [](std::string* out, JobState s) {
                                     absl::StrAppend(out, JobStateName(s));
                                   }),
      ": cannot move it to ", JobStateName(to)));
}

absl::StatusOr<int64_t> CheckNewChunks(absl::string_view job_id,
                                       const std::vector<ChunkRecord>& chunks) {
  int64_t total = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const ChunkRecord& c = chunks[i];
    std::string where = absl::StrCat("job '", job_id, "': chunk ", i);
    if (c.index != static_cast<int64_t>(i)) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, " has index ", c.index, " (indexes must be 0..n-1 in order)"));
    }
    if (!c.job_id.empty() && c.job_id != job_id) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " belongs to job '", c.job_id, "'"));
    }
    if (c.begin_offset < 0 || c.end_offset < c.begin_offset) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, " has byte range [", c.begin_offset, ", ", c.end_offset, ")"));
    }
    if (c.record_count < 0 || c.first_record < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " has record_count ", c.record_count,
                       " and first_record ", c.first_record));
    }
    total += c.record_count;
  }
  return total;
}

absl::Status ChunksExist(absl::string_view job_id, int64_t count) {
  return absl::FailedPreconditionError(
      absl::StrCat("job '", job_id, "' already has ", count, " chunks"));
}

absl::Status CheckHolder(const ChunkRecord& chunk, absl::string_view worker,
                         absl::string_view action) {
  if (chunk.state == ChunkState::kLeased && chunk.worker == worker) {
    return absl::OkStatus();
  }
  std::string is = std::string(ChunkStateName(chunk.state));
  if (!chunk.worker.empty()) absl::StrAppend(&is, " by '", chunk.worker, "'");
  return absl::FailedPreconditionError(absl::StrCat(
      "cannot ", action, " chunk ", chunk.index, " of job '", chunk.job_id,
      "': it is ", is, ", not leased by '", worker, "'"));
}

absl::Status CheckResult(const ChunkResult& result) {
  if (result.completed < 0 || result.failed < 0 ||
      !(result.compute_seconds >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("chunk result has completed ", result.completed,
                     ", failed ", result.failed, ", compute_seconds ",
                     result.compute_seconds, " (none may be negative)"));
  }
  return absl::OkStatus();
}

absl::Status CheckAddFailed(int64_t failed) {
  if (failed < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("add_failed is ", failed, " (must be >= 0)"));
  }
  return absl::OkStatus();
}

}  // namespace ferry::internal
