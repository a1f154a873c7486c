// SPDX-License-Identifier: Apache-2.0
#include "jobs/webhook/signature.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace ferry {
namespace {

constexpr absl::string_view kSecret = "whsec_ferry_test";
constexpr absl::string_view kBody = R"({"id":"evt_1","amount":42})";
constexpr int64_t kT = 1'700'000'000;
// Produced independently of this code, with OpenSSL's command line:
//   printf '%s' '1700000000.{"id":"evt_1","amount":42}' |
//     openssl dgst -sha256 -hmac 'whsec_ferry_test'
constexpr absl::string_view kExpectedHeader =
    "t=1700000000,"
    "v1=d1e09c8d82d1e63d1c9b2ae63c918b3fb90251914818ddbff5de53e75473b798";

const absl::Time kNow = absl::FromUnixSeconds(kT);
const absl::Duration kTolerance = absl::Minutes(5);

// The v1 part of a header.
std::string Hex(const std::string& header) {
  return header.substr(header.find("v1=") + 3);
}

TEST(SignWebhookTest, MatchesIndependentlyComputedHmac) {
  EXPECT_EQ(SignWebhook(kSecret, kBody, kT), kExpectedHeader);
}

TEST(VerifyWebhookSignatureTest, AcceptsItsOwnSignature) {
  EXPECT_TRUE(
      VerifyWebhookSignature(kSecret, kBody, kExpectedHeader, kNow, kTolerance)
          .ok());
  // Within tolerance either way.
  EXPECT_TRUE(VerifyWebhookSignature(kSecret, kBody,
                                     SignWebhook(kSecret, kBody, kT - 299),
                                     kNow, kTolerance)
                  .ok());
  EXPECT_TRUE(VerifyWebhookSignature(kSecret, kBody,
                                     SignWebhook(kSecret, kBody, kT + 299),
                                     kNow, kTolerance)
                  .ok());
}

TEST(VerifyWebhookSignatureTest, RejectsTamperedBody) {
  const absl::Status s =
      VerifyWebhookSignature(kSecret, R"({"id":"evt_1","amount":43})",
                             kExpectedHeader, kNow, kTolerance);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
}

TEST(VerifyWebhookSignatureTest, RejectsOtherSecret) {
  const absl::Status s = VerifyWebhookSignature(
      "whsec_other", kBody, kExpectedHeader, kNow, kTolerance);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
}

TEST(VerifyWebhookSignatureTest, RejectsReplayOutsideTolerance) {
  // The genuine header, replayed ten minutes later.
  absl::Status s = VerifyWebhookSignature(kSecret, kBody, kExpectedHeader,
                                          kNow + absl::Minutes(10), kTolerance);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
  EXPECT_NE(s.message().find("tolerance"), absl::string_view::npos) << s;
  // Or dated in the future.
  s = VerifyWebhookSignature(
      kSecret, kBody, SignWebhook(kSecret, kBody, kT + 301), kNow, kTolerance);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
}

TEST(VerifyWebhookSignatureTest, RejectsTimestampMovedIntoTheWindow) {
  // An old delivery whose t= was edited to look fresh: the MAC covers t.
  const std::string old_sig = SignWebhook(kSecret, kBody, kT - 3600);
  const std::string forged =
      absl::StrCat("t=", kT, old_sig.substr(old_sig.find(',')));
  const absl::Status s =
      VerifyWebhookSignature(kSecret, kBody, forged, kNow, kTolerance);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << s;
}

TEST(VerifyWebhookSignatureTest, AcceptsAnyMatchingV1ForSecretRotation) {
  const std::string header =
      absl::StrCat("t=", kT, ", v1=", Hex(SignWebhook("whsec_old", kBody, kT)),
                   ", v1=", Hex(SignWebhook(kSecret, kBody, kT)), ", v0=x");
  EXPECT_TRUE(
      VerifyWebhookSignature(kSecret, kBody, header, kNow, kTolerance).ok())
      << header;
}

TEST(VerifyWebhookSignatureTest, MalformedHeadersAreInvalidArgument) {
  for (absl::string_view header : {"", "t=1700000000", "v1=abcd", "garbage",
                                   "t=soon,v1=00", "t=1,t=2,v1=00"}) {
    const absl::Status s =
        VerifyWebhookSignature(kSecret, kBody, header, kNow, kTolerance);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << header;
  }
}

TEST(VerifyWebhookSignatureTest, BadHexIsAMismatchNotACrash) {
  const std::string not_hex(64, 'g');
  for (absl::string_view v1 :
       {absl::string_view("zz"), absl::string_view("D1E09C8D"),
        absl::string_view(not_hex), absl::string_view("")}) {
    const absl::Status s = VerifyWebhookSignature(
        kSecret, kBody, absl::StrCat("t=", kT, ",v1=", v1), kNow, kTolerance);
    EXPECT_EQ(s.code(), absl::StatusCode::kUnauthenticated) << v1;
  }
}

TEST(VerifyWebhookSignatureTest, EmptySecretIsRejected) {
  const absl::Status s = VerifyWebhookSignature(
      "", kBody, SignWebhook("", kBody, kT), kNow, kTolerance);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

}  // namespace
}  // namespace ferry
