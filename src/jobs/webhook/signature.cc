// SPDX-License-Identifier: Apache-2.0
#include "jobs/webhook/signature.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/logging.h"

namespace ferry {
namespace {

constexpr size_t kMacBytes = 32;  // SHA-256
using Mac = std::array<unsigned char, kMacBytes>;

Mac ComputeMac(absl::string_view secret, absl::string_view body,
               int64_t unix_seconds) {
  const std::string payload = absl::StrCat(unix_seconds, ".", body);
  Mac mac{};
  unsigned int mac_len = 0;
  // HMAC() only fails on allocation failure or an unknown digest, neither of
  // which the caller can do anything about.
  const unsigned char* result =
      HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
           reinterpret_cast<const unsigned char*>(payload.data()),
           payload.size(), mac.data(), &mac_len);
  FERRY_CHECK(result != nullptr && mac_len == kMacBytes, "HMAC-SHA256 failed");
  return mac;
}

}  // namespace

std::string SignWebhook(absl::string_view secret, absl::string_view body,
                        int64_t unix_seconds) {
  const Mac mac = ComputeMac(secret, body, unix_seconds);
  return absl::StrCat(
      "t=", unix_seconds, ",v1=",
      absl::BytesToHexString(absl::string_view(
          reinterpret_cast<const char*>(mac.data()), mac.size())));
}

absl::Status VerifyWebhookSignature(absl::string_view secret,
                                    absl::string_view body,
                                    absl::string_view header, absl::Time now,
                                    absl::Duration tolerance) {
  // An empty key is one an attacker can use too.
  if (secret.empty()) {
    return absl::InvalidArgumentError("webhook secret is empty");
  }
  bool has_t = false;
  int64_t t = 0;
  std::vector<absl::string_view> v1;
  for (absl::string_view item : absl::StrSplit(header, ',')) {
    item = absl::StripAsciiWhitespace(item);
    const size_t eq = item.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          kWebhookSignatureHeader, ": expected key=value, got '", item, "'"));
    }
    const absl::string_view key = item.substr(0, eq);
    const absl::string_view value = item.substr(eq + 1);
    if (key == "t") {
      if (has_t || !absl::SimpleAtoi(value, &t)) {
        return absl::InvalidArgumentError(
            absl::StrCat(kWebhookSignatureHeader, ": bad timestamp '", value,
                         "' (one integer t= expected)"));
      }
      has_t = true;
    } else if (key == "v1") {
      v1.push_back(value);
    }
    // Other keys are ignored, so new schemes can be added alongside v1.
  }
  if (!has_t || v1.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        kWebhookSignatureHeader, " '", header, "': needs both t= and v1="));
  }
  const absl::Time sent = absl::FromUnixSeconds(t);
  if (absl::AbsDuration(now - sent) > tolerance) {
    return absl::UnauthenticatedError(
        absl::StrCat(kWebhookSignatureHeader, ": timestamp ", t, " is ",
                     absl::FormatDuration(now - sent),
                     " from now, outside the tolerance of ",
                     absl::FormatDuration(tolerance)));
  }
  const Mac expected = ComputeMac(secret, body, t);
  bool match = false;
  for (absl::string_view hex : v1) {
    if (hex.size() != 2 * kMacBytes) continue;
    // HexStringToBytes does not reject non-hex digits, so check them first;
    // how many are bad says nothing about the secret.
    if (!std::all_of(hex.begin(), hex.end(), absl::ascii_isxdigit)) continue;
    const std::string got = absl::HexStringToBytes(hex);
    // Constant time, so the comparison does not leak how many leading bytes
    // of a forged MAC were right. Keep looping after a match for the same
    // reason.
    match |= CRYPTO_memcmp(got.data(), expected.data(), kMacBytes) == 0;
  }
  if (!match) {
    return absl::UnauthenticatedError(absl::StrCat(
        kWebhookSignatureHeader, ": no v1 signature matches the body"));
  }
  return absl::OkStatus();
}

}  // namespace ferry
