// SPDX-License-Identifier: Apache-2.0
// JobRunner::Finalize: the end of a job. The runner's housekeeper calls it
// for a job whose chunks are all done, or that was cancelled or expired; it
// concatenates the chunks' part files in order into the output, error and
// dead-letter files (records that never ran become error lines), moves the
// job to its terminal state and reports it.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "core/status_macros.h"
#include "jobs/files.h"
#include "jobs/formats/record_format.h"
#include "jobs/job_runner.h"

namespace ferry {

absl::Status JobRunner::Finalize(const JobRecord& snapshot) {
  const absl::Time now = options_.clock->Now();
  JobRecord job = snapshot;
  if (job.state == JobState::kInProgress) {
    // Only one runner wins this transition; the others leave it alone.
    if (!store_
             ->Transition(job.id, {JobState::kInProgress},
                          JobState::kFinalizing, now)
             .ok()) {
      return absl::OkStatus();
    }
    job.state = JobState::kFinalizing;
  }
  // From here no worker can complete a chunk that is not done yet: their
  // leases are revoked in the same transaction that reads the chunks.
  ASSIGN_OR_RETURN(std::vector<ChunkRecord> chunks,
                   queue_->FreezeChunks(job.id));
  const bool all_done = std::all_of(
      chunks.begin(), chunks.end(),
      [](const ChunkRecord& c) { return c.state == ChunkState::kDone; });
  if (job.state == JobState::kCancelling && chunks.empty()) {
    // Cancelled before its input was validated (or downloaded): no record
    // was read, so there is nothing to write and nothing to count.
    RETURN_IF_ERROR(store_->Transition(job.id, {JobState::kCancelling},
                                       JobState::kCancelled, now));
    std::error_code ec;
    std::filesystem::remove_all(options_.work_dir / job.id, ec);
    ReportTerminal(job.id);
    return absl::OkStatus();
  }
  JobState terminal = JobState::kCompleted;
  std::string code;
  if (job.state == JobState::kCancelling) {
    terminal = JobState::kCancelled;
    code = "cancelled";
  } else if (!all_done) {
    terminal = JobState::kExpired;
    code = "batch_expired";
  }
  absl::StatusOr<std::shared_ptr<const Prepared>> prepared = Prepare(job);
  if (!prepared.ok()) {
    // A model that is loading comes back: finalize on a later pass. Only a
    // job whose options or model are gone for good fails.
    const absl::StatusCode code = prepared.status().code();
    if (code != absl::StatusCode::kInvalidArgument &&
        code != absl::StatusCode::kNotFound) {
      return prepared.status();
    }
    RETURN_IF_ERROR(store_->Transition(
        job.id, {JobState::kFinalizing, JobState::kCancelling},
        JobState::kFailed, now, prepared.status().message()));
    ReportTerminal(job.id);
    return absl::OkStatus();
  }
  const Prepared& p = **prepared;

  AtomicFile output;
  AtomicFile errors;
  AtomicFile dead;
  RETURN_IF_ERROR(AtomicFile::Open(job.output_path, &output));
  RETURN_IF_ERROR(AtomicFile::Open(job.error_path, &errors));
  RETURN_IF_ERROR(AtomicFile::Open(job.dead_letter_path, &dead));
  RETURN_IF_ERROR(output.Append(p.codec->OutputPreamble()));
  int64_t unfinished = 0;
  const absl::Status why = terminal == JobState::kCancelled
                               ? absl::CancelledError("the job was cancelled")
                               : absl::DeadlineExceededError(
                                     "the job's completion window ended "
                                     "before the record ran");
  for (const ChunkRecord& c : chunks) {
    if (c.state == ChunkState::kDone) {
      RETURN_IF_ERROR(
          output.AppendFile(PartPath(job.id, c.index, c.attempts, "out")));
      RETURN_IF_ERROR(
          errors.AppendFile(PartPath(job.id, c.index, c.attempts, "err")));
      RETURN_IF_ERROR(
          dead.AppendFile(PartPath(job.id, c.index, c.attempts, "dead")));
      continue;
    }
    // Never ran: every record still gets its line in the error file.
    ChunkSpan span{c.begin_offset, c.end_offset, c.first_record, c.first_line,
                   c.record_count};
    ASSIGN_OR_RETURN(
        std::unique_ptr<RecordReader> reader,
        RecordReader::Open(job.input_path, p.options.format, span));
    std::string lines;
    while (true) {
      ASSIGN_OR_RETURN(std::optional<RawRecord> raw, reader->Next());
      if (!raw) break;
      p.codec->AppendError(*raw, "", code, why, 0, &lines);
      ++unfinished;
      if (lines.size() > (1 << 20)) {
        RETURN_IF_ERROR(errors.Append(lines));
        lines.clear();
      }
    }
    RETURN_IF_ERROR(errors.Append(lines));
  }
  RETURN_IF_ERROR(output.Commit());
  RETURN_IF_ERROR(errors.Commit());
  RETURN_IF_ERROR(dead.Commit());
  // The never-run records are counted failed in the same transaction that
  // ends the job: a finalizer that crashes before it and runs again counts
  // them once.
  RETURN_IF_ERROR(
      store_->Transition(job.id, {JobState::kFinalizing, JobState::kCancelling},
                         terminal, now, "", unfinished));
  std::error_code ec;
  std::filesystem::remove_all(options_.work_dir / job.id, ec);
  ReportTerminal(job.id);
  return absl::OkStatus();
}

}  // namespace ferry
