// SPDX-License-Identifier: Apache-2.0
#include "jobs/webhook/sender.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "core/clock.h"
#include "gtest/gtest.h"
#include "jobs/webhook/event.h"
#include "jobs/webhook/signature.h"
#include "jobs/webhook/test_receiver.h"

namespace ferry {
namespace {

constexpr char kSecret[] = "whsec_sender_test";

WebhookEvent Event() {
  WebhookEvent e;
  e.job_id = "job-7";
  e.state = "completed";
  e.total = 3;
  e.completed = 3;
  e.output_path = "/out/job-7.jsonl";
  e.at = absl::FromUnixSeconds(1'700'000'000);
  return e;
}

uint16_t ClosedPort() {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor a(
      ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();  // closed when `a` goes
}

// A post function that counts calls, records when they happened on `clock`,
// and answers from `answers` (the last repeats).
struct ScriptedPost {
  Clock* clock;
  std::vector<absl::StatusOr<int>> answers;
  std::vector<absl::Time> calls;

  WebhookSender::PostFn Fn() {
    return [this](const std::string&, absl::string_view, const HttpHeaders&,
                  const HttpPostOptions&) -> absl::StatusOr<int> {
      calls.push_back(clock->Now());
      return answers[std::min(calls.size(), answers.size()) - 1];
    };
  }
};

TEST(WebhookBackoffTest, DoublesFromOneSecondUpToTheCap) {
  WebhookSenderOptions o;  // 1 s, x2, 10 min
  const double expected_s[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 600, 600};
  for (int attempt = 1; attempt <= 12; ++attempt) {
    EXPECT_EQ(WebhookBackoff(attempt, o, 0.0),
              absl::Seconds(expected_s[attempt - 1]))
        << attempt;
  }
  EXPECT_EQ(WebhookBackoff(100'000, o, 0.0), absl::Minutes(10));  // no overflow
}

TEST(WebhookBackoffTest, JitterOnlyShortensWithinItsFraction) {
  WebhookSenderOptions o;
  o.jitter_fraction = 0.25;
  EXPECT_EQ(WebhookBackoff(3, o, 0.0), absl::Seconds(4));
  EXPECT_EQ(WebhookBackoff(3, o, 0.5), absl::Seconds(3.5));
  EXPECT_EQ(WebhookBackoff(3, o, 1.0), absl::Seconds(3));
  EXPECT_EQ(WebhookBackoff(50, o, 1.0), absl::Seconds(450));
  EXPECT_LE(WebhookBackoff(50, o, 0.0), o.max_backoff);
}

TEST(ValidateWebhookSenderOptionsTest, DefaultsPassAndBadFieldsAreNamed) {
  EXPECT_TRUE(ValidateWebhookSenderOptions({}).ok());
  struct Case {
    const char* field;
    void (*mutate)(WebhookSenderOptions&);
  };
  for (const Case& c : {
           Case{"initial_backoff",
                [](WebhookSenderOptions& o) { o.initial_backoff = {}; }},
           Case{"backoff_multiplier",
                [](WebhookSenderOptions& o) { o.backoff_multiplier = 0.5; }},
           Case{"max_backoff",
                [](WebhookSenderOptions& o) {
                  o.max_backoff = absl::Milliseconds(10);
                }},
           Case{"give_up_after",
                [](WebhookSenderOptions& o) {
                  o.give_up_after = absl::Seconds(-1);
                }},
           Case{"jitter_fraction",
                [](WebhookSenderOptions& o) { o.jitter_fraction = 1.0; }},
           Case{"http.timeout",
                [](WebhookSenderOptions& o) { o.http.timeout = {}; }},
       }) {
    WebhookSenderOptions o;
    c.mutate(o);
    const absl::Status s = ValidateWebhookSenderOptions(o);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_TRUE(absl::StrContains(s.message(), c.field)) << s;
  }
}

TEST(WebhookSenderTest, AttemptsAgainstARealReceiverAreSignedForTheirTime) {
  TestReceiver receiver({500, 503, 200});
  FakeClock clock;
  WebhookSender sender(&clock, kSecret);
  const std::string body = WebhookEventJson(Event());
  const absl::Time start = clock.Now();
  const absl::Time times[] = {start, start + absl::Seconds(1),
                              start + absl::Seconds(3)};
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    clock.SetTime(times[i]);
    const absl::Status s = sender.Attempt(receiver.url(), body);
    if (i < 2) {
      EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
      EXPECT_TRUE(
          absl::StrContains(s.message(), i == 0 ? "HTTP 500" : "HTTP 503"))
          << s;
      EXPECT_TRUE(WebhookSender::IsRetryable(s));
    } else {
      EXPECT_TRUE(s.ok()) << s;
    }
  }
  const std::vector<ReceivedRequest> got = receiver.requests();
  ASSERT_EQ(got.size(), 3u);
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got[i].method, "POST");
    EXPECT_EQ(got[i].target, "/hooks/ferry");
    EXPECT_EQ(got[i].headers.at("content-type"), "application/json");
    EXPECT_EQ(got[i].body, body);
    // Signed with the time of that attempt: verifies with no slack beyond
    // the second the header's t= rounds down to.
    const absl::Status verified = VerifyWebhookSignature(
        kSecret, got[i].body, got[i].headers.at("ferry-signature"), times[i],
        absl::Seconds(1));
    EXPECT_TRUE(verified.ok()) << verified;
  }
  EXPECT_NE(got[0].headers.at("ferry-signature"),
            got[2].headers.at("ferry-signature"));
}

TEST(WebhookSenderTest, TheScheduleBacksOffAndEndsAfter24Hours) {
  FakeClock clock;
  WebhookSenderOptions options;
  options.jitter_fraction = 0;
  WebhookSender sender(&clock, kSecret, options);
  const absl::Time start = clock.Now();
  std::vector<absl::Time> attempts = {start};
  while (true) {
    const std::optional<absl::Time> next = sender.NextAttemptAt(
        static_cast<int>(attempts.size()), start, attempts.back());
    if (!next) break;
    ASSERT_GT(*next, attempts.back());
    attempts.push_back(*next);
    ASSERT_LT(attempts.size(), 1000u);
  }
  // Waits of 1, 2, …, 512 s (1023 s), then 142 of 10 min (85200 s), then the
  // last 177 s cut short at 24 h: 154 attempts.
  ASSERT_EQ(attempts.size(), 154u);
  EXPECT_EQ(attempts[1] - attempts[0], absl::Seconds(1));
  EXPECT_EQ(attempts[2] - attempts[1], absl::Seconds(2));
  EXPECT_EQ(attempts[10] - attempts[9], absl::Seconds(512));
  EXPECT_EQ(attempts[11] - attempts[10], absl::Minutes(10));
  EXPECT_EQ(attempts.back(), start + absl::Hours(24));

  // With the default jitter a wait is shortened by at most 10 %.
  WebhookSender jittered(&clock, kSecret);
  for (int i = 0; i < 50; ++i) {
    const std::optional<absl::Time> next =
        jittered.NextAttemptAt(2, start, start);
    ASSERT_TRUE(next);
    EXPECT_GE(*next - start, absl::Milliseconds(1800));
    EXPECT_LE(*next - start, absl::Seconds(2));
  }
}

TEST(WebhookSenderTest, RefusedConnectionsAreRetryable) {
  FakeClock clock;
  WebhookSender sender(&clock, kSecret);  // the real client
  const std::string url = absl::StrCat("http://127.0.0.1:", ClosedPort(), "/h");
  const absl::Status s = sender.Attempt(url, WebhookEventJson(Event()));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), url)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "connecting")) << s;
  EXPECT_TRUE(WebhookSender::IsRetryable(s));
}

// Attempt's answer for what the post function says (or, for a bad URL or
// an empty secret, before it is called): the code, whether it is worth
// another attempt, and how many posts were made.
TEST(WebhookSenderTest, AttemptClassifiesFailures) {
  struct Case {
    const char* name;
    std::string secret;
    std::string url;
    absl::StatusOr<int> answer;
    absl::StatusCode code;
    bool retryable;
    size_t posts;
  };
  const std::string ok_url = "http://127.0.0.1:9/h";
  const Case cases[] = {
      {"timeout", kSecret, ok_url, absl::DeadlineExceededError("slow"),
       absl::StatusCode::kDeadlineExceeded, true, 1},
      {"http 500", kSecret, ok_url, 500, absl::StatusCode::kUnavailable, true,
       1},
      {"permanent post error", kSecret, ok_url,
       absl::InvalidArgumentError("bad header"),
       absl::StatusCode::kInvalidArgument, false, 1},
      {"bad url", kSecret, "htp:/nowhere", 200,
       absl::StatusCode::kInvalidArgument, false, 0},
      {"empty secret", "", ok_url, 200, absl::StatusCode::kFailedPrecondition,
       false, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeClock clock;
    ScriptedPost post{&clock, {c.answer}, {}};
    WebhookSender sender(&clock, c.secret, {}, post.Fn());
    const absl::Status s = sender.Attempt(c.url, "{}");
    EXPECT_EQ(s.code(), c.code) << s;
    EXPECT_EQ(WebhookSender::IsRetryable(s), c.retryable) << s;
    EXPECT_EQ(post.calls.size(), c.posts);
    if (c.url != ok_url) {
      EXPECT_TRUE(absl::StrContains(s.message(), c.url)) << s;
    }
  }
}

}  // namespace
}  // namespace ferry
