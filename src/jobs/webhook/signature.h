// SPDX-License-Identifier: Apache-2.0
// Webhook signatures: how Ferry proves to a receiver that a webhook body came
// from it and was sent recently.
//
// The `Ferry-Signature` header is `t=<unix seconds>,v1=<hex HMAC-SHA256>`,
// where the HMAC is keyed with the shared secret from the server config and
// taken over `<t>.<body>` (the scheme Stripe uses). Binding the timestamp into
// the MAC is what stops replay: an attacker who captured one delivery cannot
// re-send it later, because a receiver rejects timestamps outside its
// tolerance and cannot have the timestamp altered without breaking the MAC.
//
// Receivers: take the raw request body (before any JSON parsing or
// re-encoding), the header value, and call VerifyWebhookSignature with the
// same secret and a tolerance of a few minutes. Each retry of a delivery is
// signed afresh with the time of that attempt, so a tolerance of minutes does
// not reject late retries. Several `v1=` entries may appear (room for secret
// rotation); one match is enough.
//
// Pure functions; safe for concurrent use.
#ifndef FERRY_JOBS_WEBHOOK_SIGNATURE_H_
#define FERRY_JOBS_WEBHOOK_SIGNATURE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ferry {

// The header that carries SignWebhook's value.
inline constexpr absl::string_view kWebhookSignatureHeader = "Ferry-Signature";

// Returns the `Ferry-Signature` value for `body` sent at `unix_seconds`.
std::string SignWebhook(absl::string_view secret, absl::string_view body,
                        int64_t unix_seconds);

// Checks a `Ferry-Signature` value against `body`. OK when a `v1` entry
// matches (compared in constant time) and `t` is within `tolerance` of `now`
// either way. INVALID_ARGUMENT for an empty secret or a header that does not
// parse; UNAUTHENTICATED for a mismatch or a timestamp out of tolerance.
absl::Status VerifyWebhookSignature(absl::string_view secret,
                                    absl::string_view body,
                                    absl::string_view header, absl::Time now,
                                    absl::Duration tolerance);

}  // namespace ferry

#endif  // FERRY_JOBS_WEBHOOK_SIGNATURE_H_
