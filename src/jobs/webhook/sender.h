// SPDX-License-Identifier: Apache-2.0
// WebhookSender: one attempt at delivering a job's terminal-state event to the
// job's URL, and the retry schedule between attempts (exponential backoff with
// jitter until the receiver answers 2xx or the budget, 24 h by default, is
// spent).
//
// Every attempt POSTs the same body (so the event id stays the same and
// receivers can drop duplicates) with a fresh `Ferry-Signature` for the time
// of that attempt (see signature.h), read from the injected Clock; the HTTP
// timeout of each attempt is real time (see http_post.h).
//
// Who calls it: JobNotifier, which keeps each webhook's schedule in the job
// store so that a restart resumes it. Attempt and NextAttemptAt are safe for
// concurrent use; the Clock must outlive the sender.
#ifndef FERRY_JOBS_WEBHOOK_SENDER_H_
#define FERRY_JOBS_WEBHOOK_SENDER_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "jobs/webhook/event.h"
#include "jobs/webhook/http_post.h"

namespace ferry {

struct WebhookSenderOptions {
  // The wait after the first failed attempt; each further failure multiplies
  // it by `backoff_multiplier`, up to `max_backoff`.
  absl::Duration initial_backoff = absl::Seconds(1);
  double backoff_multiplier = 2.0;
  absl::Duration max_backoff = absl::Minutes(10);
  // Measured on the sender's Clock from the first attempt. The last wait is
  // cut short so that one final attempt is made at this point.
  absl::Duration give_up_after = absl::Hours(24);
  // Each wait is shortened by a random part of up to this fraction, so that
  // the jobs that failed together during a receiver's outage do not all come
  // back at the same instant.
  double jitter_fraction = 0.1;
  // Per-attempt timeout and trusted CAs.
  HttpPostOptions http;
};

// INVALID_ARGUMENT naming the field unless initial_backoff > 0,
// backoff_multiplier >= 1, max_backoff >= initial_backoff, give_up_after >= 0,
// jitter_fraction in [0, 1) and http.timeout > 0. config/ calls this on the
// values it reads; WebhookSender checks it as an invariant.
absl::Status ValidateWebhookSenderOptions(const WebhookSenderOptions& options);

// The wait after the `attempt`-th failed attempt (1-based):
// initial_backoff * backoff_multiplier^(attempt - 1), at most max_backoff,
// then shortened by jitter_fraction * jitter_unit, with jitter_unit drawn
// uniformly from [0, 1). Never longer than max_backoff.
absl::Duration WebhookBackoff(int attempt, const WebhookSenderOptions& options,
                              double jitter_unit);

class WebhookSender {
 public:
  // How an attempt is made; PostJson unless a test injects another.
  using PostFn = std::function<absl::StatusOr<int>(
      const std::string& url, absl::string_view body,
      const HttpHeaders& headers, const HttpPostOptions& options)>;

  // `secret` keys the signatures; an empty one makes every Attempt fail.
  // `options` must pass ValidateWebhookSenderOptions.
  WebhookSender(Clock* clock, std::string secret,
                WebhookSenderOptions options = {}, PostFn post = nullptr);

  WebhookSender(const WebhookSender&) = delete;
  WebhookSender& operator=(const WebhookSender&) = delete;

  // One attempt, without retrying: POSTs `body` (an event's JSON) to `url`,
  // signed for the current time. OK when the receiver answers 2xx;
  // UNAVAILABLE (another HTTP status, no connection) or DEADLINE_EXCEEDED (the
  // attempt timed out) for failures worth another attempt (IsRetryable);
  // INVALID_ARGUMENT for a bad URL, FAILED_PRECONDITION for an empty secret
  // and any other error of the post function for ones that are not.
  absl::Status Attempt(const std::string& url, absl::string_view body);
  static bool IsRetryable(const absl::Status& status);
  // The retry schedule: after the `attempts`-th failed attempt at `now`, of a
  // delivery whose budget started at `started`, when to try next
  // (WebhookBackoff with a fresh jitter draw, the last wait cut short at
  // started + give_up_after), or nullopt once the budget is spent.
  std::optional<absl::Time> NextAttemptAt(int attempts, absl::Time started,
                                          absl::Time now)
      ABSL_LOCKS_EXCLUDED(mu_);
  const WebhookSenderOptions& options() const { return options_; }

 private:
  double NextJitterUnit() ABSL_LOCKS_EXCLUDED(mu_);

  Clock* const clock_;
  const std::string secret_;
  const WebhookSenderOptions options_;
  const PostFn post_;

  Mutex mu_;
  absl::BitGen jitter_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ferry

#endif  // FERRY_JOBS_WEBHOOK_SENDER_H_
