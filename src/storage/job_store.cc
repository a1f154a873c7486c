// SPDX-License-Identifier: Apache-2.0
#include "storage/job_store.h"

#include "absl/strings/str_cat.h"

namespace ferry {

absl::string_view JobStateName(JobState state) {
  switch (state) {
    case JobState::kValidating:
      return "validating";
    case JobState::kInProgress:
      return "in_progress";
    case JobState::kFinalizing:
      return "finalizing";
    case JobState::kCompleted:
      return "completed";
    case JobState::kFailed:
      return "failed";
    case JobState::kExpired:
      return "expired";
    case JobState::kCancelling:
      return "cancelling";
    case JobState::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

absl::StatusOr<JobState> ParseJobState(absl::string_view name) {
  for (JobState state :
       {JobState::kValidating, JobState::kInProgress, JobState::kFinalizing,
        JobState::kCompleted, JobState::kFailed, JobState::kExpired,
        JobState::kCancelling, JobState::kCancelled}) {
    if (JobStateName(state) == name) return state;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown job state '", name,
      "' (expected validating, in_progress, finalizing, completed, failed, "
      "expired, cancelling or cancelled)"));
}

bool IsTerminal(JobState state) {
  return state == JobState::kCompleted || state == JobState::kFailed ||
         state == JobState::kExpired || state == JobState::kCancelled;
}

absl::string_view WebhookStateName(WebhookState state) {
  switch (state) {
    case WebhookState::kPending:
      return "pending";
    case WebhookState::kDelivered:
      return "delivered";
    case WebhookState::kGaveUp:
      return "gave_up";
  }
  return "unknown";
}

absl::StatusOr<WebhookState> ParseWebhookState(absl::string_view name) {
  for (WebhookState state : {WebhookState::kPending, WebhookState::kDelivered,
                             WebhookState::kGaveUp}) {
    if (WebhookStateName(state) == name) return state;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown webhook state '", name,
                   "' (expected pending, delivered or gave_up)"));
}

}  // namespace ferry
