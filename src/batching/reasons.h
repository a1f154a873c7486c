// SPDX-License-Identifier: Apache-2.0
// Why the batcher dispatched a batch, and why it turned a request away.
// Recorded on every batch and rejection and exported as metric labels. Plain
// enums.
#ifndef FERRY_BATCHING_REASONS_H_
#define FERRY_BATCHING_REASONS_H_

#include "absl/strings/string_view.h"

namespace ferry {

enum class DispatchReason {
  kFull,           // the batch reached max_batch_size rows or the byte cap
  kPreferredSize,  // the batch reached a preferred batch size
  kDelayExpired,   // its oldest request waited max_queue_delay
  kDeadline,    // waiting longer would make a request in it miss its deadline
  kShapeBreak,  // the next request cannot join (length bucket) and order must
                // hold
  kDrain,       // shutting down: everything queued goes now
};
inline constexpr DispatchReason kAllDispatchReasons[] = {
    DispatchReason::kFull,         DispatchReason::kPreferredSize,
    DispatchReason::kDelayExpired, DispatchReason::kDeadline,
    DispatchReason::kShapeBreak,   DispatchReason::kDrain};
inline constexpr int kNumDispatchReasons = 6;

// "full", "preferred_size", "delay_expired", "deadline", "shape_break",
// "drain".
absl::string_view ToString(DispatchReason reason);

enum class RejectReason {
  kQueueFull,     // UNAVAILABLE: the level's max_queue_size was reached
  kShuttingDown,  // UNAVAILABLE: the batcher is stopping
  kInvalidInput,  // INVALID_ARGUMENT: shape, dtype or priority wrong
  kTimeout,       // DEADLINE_EXCEEDED: the queue timeout fired (REJECT action)
  kDeadlineInfeasible,  // DEADLINE_EXCEEDED: cannot finish by its deadline even
                        // alone
  kEngineError,         // the engine failed the batch the request was in
};
inline constexpr RejectReason kAllRejectReasons[] = {
    RejectReason::kQueueFull,          RejectReason::kShuttingDown,
    RejectReason::kInvalidInput,       RejectReason::kTimeout,
    RejectReason::kDeadlineInfeasible, RejectReason::kEngineError};
inline constexpr int kNumRejectReasons = 6;

// "queue_full", "shutting_down", "invalid_input", "timeout",
// "deadline_infeasible", "engine_error".
absl::string_view ToString(RejectReason reason);

}  // namespace ferry

#endif  // FERRY_BATCHING_REASONS_H_
