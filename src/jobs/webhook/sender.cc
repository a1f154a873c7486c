// SPDX-License-Identifier: Apache-2.0
#include "jobs/webhook/sender.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/random/distributions.h"
#include "absl/strings/str_cat.h"
#include "core/logging.h"
#include "core/status_macros.h"
#include "jobs/webhook/signature.h"

namespace ferry {
namespace {

// UNAVAILABLE and DEADLINE_EXCEEDED are the network's transient failures;
// anything else from the post function is about the request itself.
bool Retryable(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status);
}

}  // namespace

absl::Status ValidateWebhookSenderOptions(const WebhookSenderOptions& o) {
  auto bad = [](absl::string_view field, auto value, absl::string_view want) {
    return absl::InvalidArgumentError(absl::StrCat(
        "webhook option ", field, " = ", value, ": must be ", want));
  };
  if (o.initial_backoff <= absl::ZeroDuration()) {
    return bad("initial_backoff", absl::FormatDuration(o.initial_backoff),
               "> 0");
  }
  if (!(o.backoff_multiplier >= 1.0)) {
    return bad("backoff_multiplier", o.backoff_multiplier, ">= 1");
  }
  if (o.max_backoff < o.initial_backoff) {
    return bad("max_backoff", absl::FormatDuration(o.max_backoff),
               ">= initial_backoff");
  }
  if (o.give_up_after < absl::ZeroDuration()) {
    return bad("give_up_after", absl::FormatDuration(o.give_up_after), ">= 0");
  }
  if (!(o.jitter_fraction >= 0.0 && o.jitter_fraction < 1.0)) {
    return bad("jitter_fraction", o.jitter_fraction, "in [0, 1)");
  }
  if (o.http.timeout <= absl::ZeroDuration()) {
    return bad("http.timeout", absl::FormatDuration(o.http.timeout), "> 0");
  }
  return absl::OkStatus();
}

absl::Duration WebhookBackoff(int attempt, const WebhookSenderOptions& options,
                              double jitter_unit) {
  const double max_s = absl::ToDoubleSeconds(options.max_backoff);
  double s = absl::ToDoubleSeconds(options.initial_backoff) *
             std::pow(options.backoff_multiplier, std::max(attempt, 1) - 1);
  if (!(s < max_s)) s = max_s;  // also when pow() overflowed to inf
  const double jitter = std::clamp(options.jitter_fraction, 0.0, 1.0) *
                        std::clamp(jitter_unit, 0.0, 1.0);
  return absl::Seconds(s * (1.0 - jitter));
}

WebhookSender::WebhookSender(Clock* clock, std::string secret,
                             WebhookSenderOptions options, PostFn post)
    : clock_(clock),
      secret_(std::move(secret)),
      options_(std::move(options)),
      post_(post ? std::move(post)
                 : PostFn([](const std::string& url, absl::string_view body,
                             const HttpHeaders& headers,
                             const HttpPostOptions& o) {
                     return PostJson(url, body, headers, o);
                   })) {
  const absl::Status valid = ValidateWebhookSenderOptions(options_);
  FERRY_CHECK(valid.ok(), valid.message());
}

bool WebhookSender::IsRetryable(const absl::Status& status) {
  return Retryable(status);
}

std::optional<absl::Time> WebhookSender::NextAttemptAt(int attempts,
                                                       absl::Time started,
                                                       absl::Time now) {
  const absl::Time give_up_at = started + options_.give_up_after;
  if (now >= give_up_at) return std::nullopt;
  return std::min(now + WebhookBackoff(attempts, options_, NextJitterUnit()),
                  give_up_at);
}

absl::Status WebhookSender::Attempt(const std::string& url,
                                    absl::string_view body) {
  if (secret_.empty()) {
    return absl::FailedPreconditionError(
        "webhook secret is empty: set one in the server config to send "
        "webhooks");
  }
  ASSIGN_OR_RETURN(const WebhookUrl parsed, ParseWebhookUrl(url));
  const HttpHeaders headers = {
      {std::string(kWebhookSignatureHeader),
       SignWebhook(secret_, body, absl::ToUnixSeconds(clock_->Now()))}};
  const absl::StatusOr<int> code = post_(url, body, headers, options_.http);
  if (code.ok() && *code >= 200 && *code <= 299) return absl::OkStatus();
  if (!code.ok()) return code.status();
  return absl::UnavailableError(
      absl::StrCat("POST ", parsed.display, ": HTTP ", *code));
}

double WebhookSender::NextJitterUnit() {
  MutexLock lock(&mu_);
  return absl::Uniform(jitter_, 0.0, 1.0);
}

}  // namespace ferry
