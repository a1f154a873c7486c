// SPDX-License-Identifier: Apache-2.0
// WebhookEvent: what a batch job's webhook says when the job reaches a
// terminal state, and its JSON body.
//
// The body follows the shape of OpenAI's batch object, so receivers written
// for it need little change:
//
//   {"type":"batch.completed","id":"evt_…","created_at":1700000000,
//    "data":{"id":"job-1","status":"completed",
//            "request_counts":{"total":10,"completed":9,"failed":1},
//            "output_file":"…","error_file":"…","dead_letter_file":null}}
//
// `dead_letter_file` is Ferry's own. Empty paths are written as null.
// Pure functions; safe for concurrent use.
#ifndef FERRY_JOBS_WEBHOOK_EVENT_H_
#define FERRY_JOBS_WEBHOOK_EVENT_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"

namespace ferry {

struct WebhookEvent {
  std::string job_id;
  std::string state;  // terminal state: "completed", "failed", "cancelled", …
  int64_t total = 0;
  int64_t completed = 0;
  int64_t failed = 0;
  std::string output_path;       // empty: none
  std::string error_path;        // empty: none
  std::string dead_letter_path;  // empty: none
  absl::Time at;                 // when the job reached `state`
};

// The event's id: "evt_" and 32 hex digits derived from (job_id, state) only.
// A job enters a terminal state once, so this is unique per event, and it is
// the same on every retry and after a server restart that re-sends the event,
// which is what lets receivers drop duplicates.
std::string WebhookEventId(const WebhookEvent& event);

// The JSON body shown above, compact.
std::string WebhookEventJson(const WebhookEvent& event);

}  // namespace ferry

#endif  // FERRY_JOBS_WEBHOOK_EVENT_H_
