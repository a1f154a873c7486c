// SPDX-License-Identifier: Apache-2.0
// ExecuteChunk: runs the records of one chunk through the model and produces
// the chunk's part contents (output lines, error lines, dead letters), all in
// record order.
//
// Records are parsed, grouped into requests of up to
// RecordCodec::max_records_per_request() consecutive records, and kept in
// flight up to a bound, so the model's batcher always has offline rows to top
// up its batches with. A record that cannot be parsed, or that the model
// refuses as invalid, fails at once (an error line). A transient failure
// (engine error, UNAVAILABLE, queue timeout) is retried after an exponential
// backoff with jitter, waited on the injected clock; after max_attempts the
// records go to the error file and the dead-letter file.
//
// Thread-safety: runs on the calling thread; the infer callbacks may run on any
// thread (or inline) and only hand results back.
#ifndef FERRY_JOBS_CHUNK_EXECUTOR_H_
#define FERRY_JOBS_CHUNK_EXECUTOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "core/clock.h"
#include "core/inference.h"
#include "jobs/formats/record_format.h"
#include "jobs/retry.h"
#include "storage/job_store.h"

namespace ferry {

using InferDone = absl::AnyInvocable<void(absl::StatusOr<InferenceResponse>)>;
// Sends one request to the job's model (ModelManager::Infer in production, an
// identity or failing model in tests); `done` is called exactly once.
using InferFn = std::function<void(InferenceRequest request, InferDone done)>;

struct ChunkExecutorOptions {
  Clock* clock = nullptr;  // required
  BackoffOptions backoff;
  int max_attempts = 3;
  // Records sent and not answered yet, at most (at least one request always
  // goes out).
  int64_t max_in_flight_records = 1024;
  // Uniform in [-1, 1] for the backoff jitter; default: a seeded generator.
  std::function<double()> jitter;
  // The serving model version, written into dead letters.
  int64_t model_version = 0;
  // Called about every `keep_alive_every` while the chunk runs (the runner
  // renews the chunk's lease); an error abandons the chunk with that error.
  std::function<absl::Status()> keep_alive;
  absl::Duration keep_alive_every = absl::Seconds(10);
  // Checked as often; true abandons the chunk with CANCELLED (cancel, expiry,
  // shutdown). Records already sent are waited for, not dropped.
  std::function<bool()> should_stop;
  // Incremented as records finish (succeeded or failed), for progress.
  std::atomic<int64_t>* records_done = nullptr;
  // Called with true before the chunk's own work (reading, parsing,
  // formatting: nothing that takes a lock of the online path) and with false
  // before each call into `infer`, `keep_alive` or `should_stop`, before
  // taking answers (the lock the batcher's completion thread posts them
  // under) and at the end: a runner lowers the thread's CPU priority for the
  // first part only.
  std::function<void(bool background)> background;
};

struct ChunkOutcome {
  std::string output;        // output lines of the records that succeeded
  std::string errors;        // error lines of the records that failed
  std::string dead_letters;  // the failed records worth replaying
  ChunkResult result;        // counts and compute seconds
};

absl::StatusOr<ChunkOutcome> ExecuteChunk(const std::string& input_path,
                                          RecordFormat format,
                                          const ChunkSpan& span,
                                          const RecordCodec& codec,
                                          const InferFn& infer,
                                          const ChunkExecutorOptions& options);

}  // namespace ferry

#endif  // FERRY_JOBS_CHUNK_EXECUTOR_H_
