// SPDX-License-Identifier: Apache-2.0
#include "jobs/job_notifier.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/clock.h"
#include "gtest/gtest.h"
#include "jobs/job_options.h"
#include "jobs/webhook/test_receiver.h"
#include "jobs/webhook/webhook.h"
#include "simdjson.h"

namespace ferry {
namespace {

constexpr char kSecret[] = "whsec_notifier_test";

JobRecord Job(const std::string& id, const std::string& url,
              JobState state = JobState::kCompleted) {
  JobOptions o;
  o.webhook_url = url;
  JobRecord job;
  job.id = id;
  job.model = "m";
  job.state = state;
  job.options_json = JobOptionsToJson(o);
  job.counts = {10, 9, 1};
  job.output_path = "/data/out.csv";
  job.error_path = "/data/out.csv.errors.jsonl";
  job.dead_letter_path = "/data/out.csv.dead_letters.jsonl";
  job.created_at = absl::FromUnixSeconds(1'700'000'000);
  job.completed_at = absl::FromUnixSeconds(1'700'000'100);
  job.failed_at = absl::FromUnixSeconds(1'700'000'200);
  return job;
}

// The receiver's requests once there are `n` (or after 10 s of real time, so
// a broken notifier fails the test instead of hanging it).
std::vector<ReceivedRequest> AwaitRequests(TestReceiver& receiver, size_t n) {
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  std::vector<ReceivedRequest> got = receiver.requests();
  while (got.size() < n && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(5));
    got = receiver.requests();
  }
  return got;
}

TEST(JobNotifierTest, DeliversASignedEventToTheJobsUrl) {
  TestReceiver receiver({200});
  WebhookSender sender(RealClock::Get(), kSecret);
  JobNotifier notifier(&sender, {});
  const JobRecord job = Job("batch_1", receiver.url("/hook?token=x"));
  notifier.Notify(job);
  const std::vector<ReceivedRequest> got = AwaitRequests(receiver, 1);
  notifier.Stop();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].target, "/hook?token=x");
  EXPECT_EQ(got[0].body, WebhookEventJson(JobNotifier::EventFor(job)));
  const absl::Status verified = VerifyWebhookSignature(
      kSecret, got[0].body, got[0].headers.at("ferry-signature"), absl::Now(),
      absl::Minutes(1));
  EXPECT_TRUE(verified.ok()) << verified;
  EXPECT_FALSE(VerifyWebhookSignature("another secret", got[0].body,
                                      got[0].headers.at("ferry-signature"),
                                      absl::Now(), absl::Minutes(1))
                   .ok());
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(got[0].body);
  EXPECT_EQ(std::string_view(doc["type"]), "batch.completed");
  EXPECT_EQ(std::string_view(doc["data"]["id"]), "batch_1");
  EXPECT_EQ(int64_t(doc["data"]["request_counts"]["failed"]), 1);
  EXPECT_EQ(int64_t(doc["created_at"]), 1'700'000'100);
}

TEST(JobNotifierTest, JobsWithoutAUrlSendNothing) {
  TestReceiver receiver({200});
  WebhookSender sender(RealClock::Get(), kSecret);
  JobNotifier::Options options;
  options.threads = 1;
  JobNotifier notifier(&sender, options);
  notifier.Notify(Job("quiet", ""));
  notifier.Notify(Job("loud", receiver.url()));
  const std::vector<ReceivedRequest> got = AwaitRequests(receiver, 1);
  notifier.Stop();
  ASSERT_EQ(receiver.requests().size(), 1u);
  EXPECT_TRUE(absl::StrContains(got[0].body, "\"id\":\"loud\""));
}

TEST(JobNotifierTest, AnnotateRewritesTheEvent) {
  TestReceiver receiver({200});
  WebhookSender sender(RealClock::Get(), kSecret);
  JobNotifier::Options options;
  options.annotate = [](const JobRecord&, WebhookEvent* e) {
    e->output_path = "file-0123456789abcdef01234567";
  };
  JobNotifier notifier(&sender, options);
  notifier.Notify(Job("j", receiver.url()));
  const std::vector<ReceivedRequest> got = AwaitRequests(receiver, 1);
  notifier.Stop();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(absl::StrContains(
      got[0].body, "\"output_file\":\"file-0123456789abcdef01234567\""));
}

TEST(JobNotifierTest, AReceiverThatIsDownHoldsOnlyItsOwnDelivery) {
  TestReceiver down({500});
  TestReceiver up({200});
  WebhookSender sender(RealClock::Get(), kSecret);
  JobNotifier::Options options;
  options.threads = 2;
  JobNotifier notifier(&sender, options);
  notifier.Notify(Job("stuck", down.url()));
  ASSERT_EQ(AwaitRequests(down, 1).size(), 1u);  // now waiting to retry
  notifier.Notify(Job("fine", up.url()));
  EXPECT_EQ(AwaitRequests(up, 1).size(), 1u);
  // Stop ends the retry wait at once rather than after the backoff.
  const absl::Time before = absl::Now();
  notifier.Stop();
  EXPECT_LT(absl::Now() - before, absl::Seconds(5));
}

TEST(JobNotifierTest, AFailedJobNamesNoFiles) {
  const WebhookEvent e =
      JobNotifier::EventFor(Job("f", "http://x/", JobState::kFailed));
  EXPECT_EQ(e.state, "failed");
  EXPECT_EQ(e.at, absl::FromUnixSeconds(1'700'000'200));
  EXPECT_TRUE(e.output_path.empty());
  EXPECT_TRUE(e.error_path.empty());
  EXPECT_TRUE(e.dead_letter_path.empty());
  const WebhookEvent done = JobNotifier::EventFor(Job("d", "http://x/"));
  EXPECT_EQ(done.output_path, "/data/out.csv");
  EXPECT_EQ(done.total, 10);
}

}  // namespace
}  // namespace ferry
