// SPDX-License-Identifier: Apache-2.0
// Job webhooks: when an offline job reaches a terminal state, Ferry POSTs a
// signed JSON event to the job's URL and retries until a 2xx or 24 h.
//
// The parts, each in its own header:
//   event.h      WebhookEvent and its JSON body
//   signature.h  SignWebhook / VerifyWebhookSignature (`Ferry-Signature`)
//   http_post.h  ParseWebhookUrl and PostJson, the HTTP(S) client
//   sender.h     WebhookSender: one signed attempt, the retry schedule
// This header includes them all for callers that use the whole feature.
#ifndef FERRY_JOBS_WEBHOOK_WEBHOOK_H_
#define FERRY_JOBS_WEBHOOK_WEBHOOK_H_

#include "jobs/webhook/event.h"      // IWYU pragma: export
#include "jobs/webhook/http_post.h"  // IWYU pragma: export
#include "jobs/webhook/sender.h"     // IWYU pragma: export
#include "jobs/webhook/signature.h"  // IWYU pragma: export

#endif  // FERRY_JOBS_WEBHOOK_WEBHOOK_H_
