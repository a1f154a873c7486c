// SPDX-License-Identifier: Apache-2.0
#include "jobs/webhook/sender.h"

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "core/clock.h"
#include "core/mutex.h"
#include "gtest/gtest.h"
#include "jobs/webhook/event.h"
#include "jobs/webhook/signature.h"
#include "jobs/webhook/test_receiver.h"

namespace ferry {
namespace {

constexpr char kSecret[] = "whsec_sender_test";

// A FakeClock that also records each deadline the sender waits for, so the
// test sees the backoff chosen, and knows when the sender is waiting.
class RecordingClock final : public Clock {
 public:
  absl::Time Now() override { return fake_.Now(); }
  bool WaitUntil(Mutex* mu, CondVar* cv, absl::Time deadline) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    Record(deadline);
    return fake_.WaitUntil(mu, cv, deadline);
  }
  void SleepUntil(absl::Time deadline) override {
    Record(deadline);
    fake_.SleepUntil(deadline);
  }
  void SetTime(absl::Time t) { fake_.SetTime(t); }

  // The n-th distinct deadline (1-based), once the sender has asked for it;
  // nullopt if MarkDone() came first or after 10 s of real time (a hung
  // sender fails the test instead of hanging it).
  std::optional<absl::Time> WaitForDeadline(int n) ABSL_LOCKS_EXCLUDED(mu_) {
    const absl::Time give_up = absl::Now() + absl::Seconds(10);
    MutexLock lock(&mu_);
    while (static_cast<int>(deadlines_.size()) < n && !done_) {
      if (mu_cv_.WaitWithDeadline(&mu_, give_up)) break;
    }
    if (static_cast<int>(deadlines_.size()) < n) return std::nullopt;
    return deadlines_[n - 1];
  }
  void MarkDone() ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    done_ = true;
    mu_cv_.SignalAll();
  }

 private:
  void Record(absl::Time deadline) ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    // The sender re-waits for the same deadline after a spurious wake-up.
    if (deadlines_.empty() || deadlines_.back() != deadline) {
      deadlines_.push_back(deadline);
    }
    mu_cv_.SignalAll();
  }

  FakeClock fake_;
  Mutex mu_;
  CondVar mu_cv_;
  std::vector<absl::Time> deadlines_ ABSL_GUARDED_BY(mu_);
  bool done_ ABSL_GUARDED_BY(mu_) = false;
};

// Runs Deliver on a thread of its own, as the job runner does.
class DeliveryThread {
 public:
  DeliveryThread(WebhookSender* sender, RecordingClock* clock, std::string url,
                 WebhookEvent event)
      : thread_([=, this] {
          status_ = sender->Deliver(url, event);
          clock->MarkDone();
        }) {}
  ~DeliveryThread() {
    if (thread_.joinable()) thread_.join();
  }
  absl::Status Join() {
    thread_.join();
    return status_;
  }

 private:
  absl::Status status_;
  std::thread thread_;
};

// Advances the clock to each deadline the sender asks for until Deliver
// returns; returns the deadlines in order.
std::vector<absl::Time> DriveUntilDone(RecordingClock& clock) {
  std::vector<absl::Time> deadlines;
  for (int n = 1;; ++n) {
    const std::optional<absl::Time> d = clock.WaitForDeadline(n);
    if (!d) return deadlines;
    deadlines.push_back(*d);
    clock.SetTime(*d);
  }
}

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

TEST(WebhookSenderTest, RetriesARealReceiverUntil2xxWithSignedRequests) {
  TestReceiver receiver({500, 500, 200});
  RecordingClock clock;
  WebhookSender sender(&clock, kSecret);  // default options, 10 % jitter
  const absl::Time start = clock.Now();
  DeliveryThread delivery(&sender, &clock, receiver.url(), Event());

  const std::optional<absl::Time> first = clock.WaitForDeadline(1);
  ASSERT_TRUE(first);
  EXPECT_GE(*first - start, absl::Milliseconds(900));
  EXPECT_LE(*first - start, absl::Seconds(1));
  clock.SetTime(*first);
  const std::optional<absl::Time> second = clock.WaitForDeadline(2);
  ASSERT_TRUE(second);
  EXPECT_GE(*second - *first, absl::Milliseconds(1800));
  EXPECT_LE(*second - *first, absl::Seconds(2));
  clock.SetTime(*second);

  const absl::Status status = delivery.Join();
  ASSERT_TRUE(status.ok()) << status;
  const std::vector<ReceivedRequest> got = receiver.requests();
  ASSERT_EQ(got.size(), 3u);
  const absl::Time attempt_times[] = {start, *first, *second};
  const std::string body = WebhookEventJson(Event());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got[i].method, "POST");
    EXPECT_EQ(got[i].target, "/hooks/ferry");
    EXPECT_EQ(got[i].headers.at("content-type"), "application/json");
    EXPECT_EQ(got[i].body, body);  // same event, same id, on every attempt
    // Signed with the time of that attempt: verifies with no slack beyond
    // the second the header's t= rounds down to.
    const absl::Status verified = VerifyWebhookSignature(
        kSecret, got[i].body, got[i].headers.at("ferry-signature"),
        attempt_times[i], absl::Seconds(1));
    EXPECT_TRUE(verified.ok()) << verified;
  }
  EXPECT_NE(got[0].headers.at("ferry-signature"),
            got[2].headers.at("ferry-signature"));
}

TEST(WebhookSenderTest, GivesUpAfter24HoursOfClockTime) {
  RecordingClock clock;
  ScriptedPost post{&clock, {503}, {}};
  WebhookSenderOptions options;
  options.jitter_fraction = 0;
  WebhookSender sender(&clock, kSecret, options, post.Fn());
  const absl::Time start = clock.Now();
  DeliveryThread delivery(&sender, &clock, "http://127.0.0.1:9/h", Event());
  const std::vector<absl::Time> deadlines = DriveUntilDone(clock);
  const absl::Status status = delivery.Join();

  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "HTTP 503")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "job-7")) << status;
  // Waits of 1, 2, …, 512 s (1023 s), then 142 of 10 min (85200 s), then the
  // last 177 s cut short at 24 h: 153 waits, 154 attempts.
  EXPECT_EQ(post.calls.size(), 154u);
  EXPECT_EQ(deadlines.size(), 153u);
  ASSERT_FALSE(post.calls.empty());
  EXPECT_EQ(post.calls.front(), start);
  EXPECT_EQ(post.calls.back(), start + absl::Hours(24));
}

TEST(WebhookSenderTest, RetriesRefusedConnections) {
  RecordingClock clock;
  std::atomic<int> attempts{0};
  WebhookSenderOptions options;
  options.jitter_fraction = 0;
  options.give_up_after = absl::Seconds(10);
  WebhookSender sender(
      &clock, kSecret, options,
      [&](const std::string& url, absl::string_view body,
          const HttpHeaders& headers, const HttpPostOptions& o) {
        ++attempts;
        return PostJson(url, body, headers, o);  // the real client
      });
  const std::string url = absl::StrCat("http://127.0.0.1:", ClosedPort(), "/h");
  DeliveryThread delivery(&sender, &clock, url, Event());
  const std::vector<absl::Time> deadlines = DriveUntilDone(clock);
  const absl::Status status = delivery.Join();

  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), url)) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "connecting")) << status;
  // At 0, 1, 3 and 7 s, then once more at the 10 s limit.
  EXPECT_EQ(attempts, 5);
  EXPECT_EQ(deadlines.size(), 4u);
}

TEST(WebhookSenderTest, TimeoutsAreRetriedToo) {
  RecordingClock clock;
  ScriptedPost post{&clock, {absl::DeadlineExceededError("slow"), 204}, {}};
  WebhookSender sender(&clock, kSecret, {}, post.Fn());
  DeliveryThread delivery(&sender, &clock, "http://127.0.0.1:9/h", Event());
  DriveUntilDone(clock);
  EXPECT_TRUE(delivery.Join().ok());
  EXPECT_EQ(post.calls.size(), 2u);
}

TEST(WebhookSenderTest, BadUrlFailsAtOnceWithoutPosting) {
  RecordingClock clock;
  ScriptedPost post{&clock, {200}, {}};
  WebhookSender sender(&clock, kSecret, {}, post.Fn());
  const absl::Status s = sender.Deliver("htp:/nowhere", Event());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "htp:/nowhere")) << s;
  EXPECT_TRUE(post.calls.empty());
}

TEST(WebhookSenderTest, PermanentPostErrorsAreNotRetried) {
  RecordingClock clock;
  ScriptedPost post{&clock, {absl::InvalidArgumentError("bad header")}, {}};
  WebhookSender sender(&clock, kSecret, {}, post.Fn());
  const absl::Status s = sender.Deliver("http://127.0.0.1:9/h", Event());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(post.calls.size(), 1u);
}

TEST(WebhookSenderTest, EmptySecretIsFailedPrecondition) {
  RecordingClock clock;
  ScriptedPost post{&clock, {200}, {}};
  WebhookSender sender(&clock, "", {}, post.Fn());
  const absl::Status s = sender.Deliver("http://127.0.0.1:9/h", Event());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_TRUE(post.calls.empty());
}

TEST(WebhookSenderTest, StopAbandonsAWaitingDeliveryPromptly) {
  TestReceiver receiver({500});
  RecordingClock clock;
  WebhookSender sender(&clock, kSecret);
  DeliveryThread delivery(&sender, &clock, receiver.url(), Event());
  ASSERT_TRUE(clock.WaitForDeadline(1));  // waiting out the first backoff

  const absl::Time real_start = absl::Now();
  sender.Stop();  // fake time never moves: only Stop can end the wait
  const absl::Status status = delivery.Join();
  EXPECT_LT(absl::Now() - real_start, absl::Seconds(2));
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "HTTP 500")) << status;
  EXPECT_EQ(receiver.requests().size(), 1u);

  // And a sender that was stopped makes no new attempt.
  const absl::Status again = sender.Deliver(receiver.url(), Event());
  EXPECT_EQ(again.code(), absl::StatusCode::kCancelled) << again;
  EXPECT_TRUE(absl::StrContains(again.message(), "before the first attempt"))
      << again;
  EXPECT_EQ(receiver.requests().size(), 1u);
}

}  // namespace
}  // namespace ferry
