// SPDX-License-Identifier: Apache-2.0
#include "batching/reasons.h"

namespace ferry {

absl::string_view ToString(DispatchReason reason) {
  switch (reason) {
    case DispatchReason::kFull:
      return "full";
    case DispatchReason::kPreferredSize:
      return "preferred_size";
    case DispatchReason::kDelayExpired:
      return "delay_expired";
    case DispatchReason::kDeadline:
      return "deadline";
    case DispatchReason::kShapeBreak:
      return "shape_break";
    case DispatchReason::kDrain:
      return "drain";
  }
  return "unknown";
}

absl::string_view ToString(RejectReason reason) {
  switch (reason) {
    case RejectReason::kQueueFull:
      return "queue_full";
    case RejectReason::kShuttingDown:
      return "shutting_down";
    case RejectReason::kInvalidInput:
      return "invalid_input";
    case RejectReason::kTimeout:
      return "timeout";
    case RejectReason::kDeadlineInfeasible:
      return "deadline_infeasible";
    case RejectReason::kEngineError:
      return "engine_error";
  }
  return "unknown";
}

}  // namespace ferry
