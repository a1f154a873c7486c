// SPDX-License-Identifier: Apache-2.0
// Request: one inference request as the DynamicBatcher takes it: input tensors
// (batch dimension first; a request may carry several rows), a priority level,
// an optional queue timeout and end-to-end deadline, and the callback that
// receives the request's slice of the outputs or a Status.
//
// Ownership: the caller builds a Request and passes it to
// DynamicBatcher::Enqueue as a std::unique_ptr<Request>*. On success the
// batcher owns it (and will call `done` exactly once); on failure the caller
// still holds it and answers it itself. The callback runs on an engine instance
// thread (or the batcher thread for rejections): it must be cheap — post the
// work back to the caller's executor.
#ifndef FERRY_BATCHING_REQUEST_H_
#define FERRY_BATCHING_REQUEST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/tensor.h"

namespace ferry {

// Receives the request's outputs (config output order, dimension 0 = the
// request's rows) or why it failed. Called exactly once.
using RequestCallback =
    absl::AnyInvocable<void(absl::StatusOr<std::vector<Tensor>>)>;

struct Request {
  std::string id;
  // Named inputs in any order; Enqueue validates them against the model's
  // config and orders them. Dimension 0 is the batch (rows) when the model
  // batches.
  std::vector<Tensor> inputs;
  // Triton's convention: 1 is the highest level, priority_levels the lowest; 0
  // means the model's default_priority_level.
  uint32_t priority = 0;
  // An offline job's record: queued at the batcher's offline level, below
  // every online level (`priority` is ignored).
  bool offline = false;
  // Per-request queue timeout (Triton's "timeout" parameter). Honoured only
  // when the level's queue policy sets allow_timeout_override; may lengthen or
  // shorten the policy's default.
  std::optional<absl::Duration> timeout;
  // Absolute deadline for the response. A request that cannot make it even when
  // run alone is rejected with DEADLINE_EXCEEDED instead of wasting compute.
  std::optional<absl::Time> deadline;
  RequestCallback done;
};

}  // namespace ferry

#endif  // FERRY_BATCHING_REQUEST_H_
