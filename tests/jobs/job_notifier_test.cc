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
#include "storage/memory_job_store.h"
#include "storage/sqlite_job_store.h"
#include "test_util/temp_dir.h"

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
  MemoryJobStore outbox;
  JobNotifier notifier(&sender, &outbox, {});
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
  const absl::StatusOr<WebhookRecord> stored = outbox.GetWebhook("batch_1");
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->state, WebhookState::kDelivered);
  EXPECT_EQ(stored->attempts, 1);
}

TEST(JobNotifierTest, JobsWithoutAUrlSendNothing) {
  TestReceiver receiver({200});
  WebhookSender sender(RealClock::Get(), kSecret);
  JobNotifier::Options options;
  options.threads = 1;
  MemoryJobStore outbox;
  JobNotifier notifier(&sender, &outbox, options);
  notifier.Notify(Job("quiet", ""));
  notifier.Notify(Job("loud", receiver.url()));
  const std::vector<ReceivedRequest> got = AwaitRequests(receiver, 1);
  notifier.Stop();
  ASSERT_EQ(receiver.requests().size(), 1u);
  EXPECT_TRUE(absl::StrContains(got[0].body, "\"id\":\"loud\""));
  EXPECT_TRUE(absl::IsNotFound(outbox.GetWebhook("quiet").status()));
}

TEST(JobNotifierTest, AnnotateRewritesTheEvent) {
  TestReceiver receiver({200});
  WebhookSender sender(RealClock::Get(), kSecret);
  JobNotifier::Options options;
  options.annotate = [](const JobRecord&, WebhookEvent* e) {
    e->output_path = "file-0123456789abcdef01234567";
  };
  MemoryJobStore outbox;
  JobNotifier notifier(&sender, &outbox, options);
  notifier.Notify(Job("j", receiver.url()));
  const std::vector<ReceivedRequest> got = AwaitRequests(receiver, 1);
  notifier.Stop();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(absl::StrContains(
      got[0].body, "\"output_file\":\"file-0123456789abcdef01234567\""));
}

TEST(JobNotifierTest, AReceiverThatIsDownHoldsNoThread) {
  TestReceiver down({500});
  TestReceiver up({200});
  WebhookSender sender(RealClock::Get(), kSecret);
  JobNotifier::Options options;
  options.threads = 1;  // one thread: it must not sit out the backoff
  MemoryJobStore outbox;
  JobNotifier notifier(&sender, &outbox, options);
  notifier.Notify(Job("stuck", down.url()));
  ASSERT_EQ(AwaitRequests(down, 1).size(), 1u);  // now waiting to retry
  notifier.Notify(Job("fine", up.url()));
  EXPECT_EQ(AwaitRequests(up, 1).size(), 1u);
  const absl::Time before = absl::Now();
  notifier.Stop();
  EXPECT_LT(absl::Now() - before, absl::Seconds(5));
  // The stuck one waits in the outbox for the next start.
  const absl::StatusOr<WebhookRecord> stuck = outbox.GetWebhook("stuck");
  ASSERT_TRUE(stuck.ok()) << stuck.status();
  EXPECT_EQ(stuck->state, WebhookState::kPending);
  EXPECT_GE(stuck->attempts, 1);
  EXPECT_EQ(stuck->last_error, absl::StrCat("POST ", down.url(), ": HTTP 500"));
}

// Waits (real time) until the outbox entry of `job_id` has `attempts`.
WebhookRecord AwaitAttempts(WebhookOutbox& outbox, const std::string& job_id,
                            int attempts) {
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (true) {
    absl::StatusOr<WebhookRecord> w = outbox.GetWebhook(job_id);
    if ((w.ok() && w->attempts >= attempts) || absl::Now() > give_up) {
      return w.ok() ? *w : WebhookRecord{};
    }
    absl::SleepFor(absl::Milliseconds(2));
  }
}

TEST(JobNotifierTest, RetriesOnTheBackoffScheduleUntilTheBudgetIsSpent) {
  TestReceiver down({503});
  FakeClock clock;
  WebhookSenderOptions so;
  so.jitter_fraction = 0;  // exact times
  so.max_backoff = absl::Hours(1);
  WebhookSender sender(&clock, kSecret, so);
  JobNotifier::Options options;
  options.threads = 1;
  options.clock = &clock;
  MemoryJobStore outbox;
  JobNotifier notifier(&sender, &outbox, options);
  const absl::Time t0 = clock.Now();
  notifier.Notify(Job("j", down.url()));
  WebhookRecord w = AwaitAttempts(outbox, "j", 1);
  EXPECT_EQ(w.next_attempt_at, t0 + absl::Seconds(1));
  // Just before the retry is due nothing is sent; at it, the second attempt.
  clock.BlockUntilWaiters(1);
  clock.Advance(absl::Milliseconds(999));
  absl::SleepFor(absl::Milliseconds(50));  // real time for an early attempt
  EXPECT_EQ(outbox.GetWebhook("j")->attempts, 1);
  EXPECT_EQ(down.requests().size(), 1u);
  clock.Advance(absl::Milliseconds(1));
  w = AwaitAttempts(outbox, "j", 2);
  EXPECT_EQ(w.next_attempt_at, t0 + absl::Seconds(1 + 2));
  clock.BlockUntilWaiters(1);
  clock.Advance(absl::Seconds(2));
  w = AwaitAttempts(outbox, "j", 3);
  EXPECT_EQ(w.next_attempt_at, t0 + absl::Seconds(1 + 2 + 4));
  // Then hourly (max_backoff) until 24 h after the job ended, the last
  // attempt exactly at the end, then given up.
  while (w.state == WebhookState::kPending &&
         clock.Now() < t0 + absl::Hours(25)) {
    clock.BlockUntilWaiters(1);
    clock.SetTime(w.next_attempt_at);
    w = AwaitAttempts(outbox, "j", w.attempts + 1);
  }
  EXPECT_EQ(w.state, WebhookState::kGaveUp);
  EXPECT_EQ(clock.Now(), t0 + absl::Hours(24));
  EXPECT_EQ(down.requests().size(), static_cast<size_t>(w.attempts));
  notifier.Stop();
}

TEST(JobNotifierTest, APermanentErrorGivesUpAtOnce) {
  WebhookSender sender(RealClock::Get(), kSecret);
  MemoryJobStore outbox;
  JobNotifier notifier(&sender, &outbox, {});
  notifier.Notify(Job("bad", "ftp://example.com/hook"));
  const WebhookRecord w = AwaitAttempts(outbox, "bad", 1);
  notifier.Stop();
  EXPECT_EQ(w.state, WebhookState::kGaveUp);
  EXPECT_TRUE(absl::StrContains(w.last_error, "ftp")) << w.last_error;
}

TEST(JobNotifierTest, APendingWebhookIsSentAfterARestart) {
  testing::TempDir dir;
  TestReceiver receiver({500, 200});
  FakeClock clock;
  WebhookSender sender(&clock, kSecret);
  const std::string db = (dir.path() / "jobs.db").string();
  {
    auto store = SqliteJobStore::Open(db);
    ASSERT_TRUE(store.ok()) << store.status();
    JobNotifier::Options options;
    options.clock = &clock;
    JobNotifier notifier(&sender, store->get(), options);
    notifier.Notify(Job("j", receiver.url()));
    ASSERT_EQ(AwaitAttempts(**store, "j", 1).attempts, 1);
    notifier.Stop();  // the server stops while the receiver is down
  }
  // A new process: new sender, notifier and store connection.
  WebhookSender restarted(&clock, kSecret);
  auto store = SqliteJobStore::Open(db);
  ASSERT_TRUE(store.ok()) << store.status();
  JobNotifier::Options options;
  options.clock = &clock;
  JobNotifier notifier(&restarted, store->get(), options);
  clock.Advance(absl::Seconds(2));
  const WebhookRecord w = AwaitAttempts(**store, "j", 2);
  notifier.Stop();
  EXPECT_EQ(w.state, WebhookState::kDelivered);
  ASSERT_EQ(receiver.requests().size(), 2u);
  EXPECT_EQ(receiver.requests()[0].body, receiver.requests()[1].body);
}

TEST(JobNotifierTest, RecoverStoresTheWebhooksOfJobsThatEndedUnannounced) {
  TestReceiver receiver({200});
  FakeClock clock(absl::FromUnixSeconds(1'700'000'100) + absl::Hours(1));
  WebhookSender sender(&clock, kSecret);
  MemoryJobStore store;
  // Ended an hour ago without its webhook stored (a crash in between).
  ASSERT_TRUE(store.CreateJob(Job("recent", receiver.url())).ok());
  // Ended two days ago: its webhook went out long before the outbox.
  JobRecord old = Job("old", receiver.url());
  old.completed_at = clock.Now() - absl::Hours(48);
  ASSERT_TRUE(store.CreateJob(old).ok());
  // Still running, and one with its webhook already stored.
  ASSERT_TRUE(
      store.CreateJob(Job("running", receiver.url(), JobState::kInProgress))
          .ok());
  JobNotifier::Options options;
  options.clock = &clock;
  JobNotifier notifier(&sender, &store, options);
  ASSERT_TRUE(notifier.Recover(&store).ok());
  EXPECT_EQ(AwaitRequests(receiver, 1).size(), 1u);
  ASSERT_TRUE(notifier.Recover(&store).ok());  // nothing new: stored already
  notifier.Stop();
  EXPECT_EQ(receiver.requests().size(), 1u);
  EXPECT_EQ(AwaitAttempts(store, "recent", 1).state, WebhookState::kDelivered);
  EXPECT_TRUE(absl::IsNotFound(store.GetWebhook("old").status()));
  EXPECT_TRUE(absl::IsNotFound(store.GetWebhook("running").status()));
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
