// SPDX-License-Identifier: Apache-2.0
#include "batching/dynamic_batcher.h"

#include <sched.h>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include "batcher_harness.h"
#include "core/thread_priority.h"
#include "engines/identity/identity_engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ferry::batcher_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(DynamicBatcherTest, OwnershipMovesOnlyOnSuccess) {
  FakeClock clock;
  ModelOptions m = Model(4);
  m.dynamic_batching.default_queue_policy.max_queue_size = 2;
  Harness h(m, Options(m, 1'000'000), &clock);
  Outcome a, b, c, bad, late, noprio;

  auto ra = MakeRequest({1}, &a);
  EXPECT_TRUE(h.batcher->Enqueue(&ra).ok());
  EXPECT_EQ(ra, nullptr);

  auto wrong = std::make_unique<Request>();
  wrong->inputs.push_back(*Tensor::Zeros("x", DataType::kFp64, {1, 1}));
  wrong->done = [&bad](absl::StatusOr<std::vector<Tensor>>) { bad.calls++; };
  absl::Status s = h.batcher->Enqueue(&wrong);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("input 'x': expected FP32, got FP64"));
  ASSERT_NE(wrong, nullptr);
  EXPECT_EQ(wrong->inputs.size(), 1u);  // untouched

  auto rp = MakeRequest({1}, &noprio, /*priority=*/5);
  EXPECT_EQ(h.batcher->Enqueue(&rp).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(rp, nullptr);

  auto rl = MakeRequest({1}, &late);
  rl->deadline = clock.Now();
  EXPECT_EQ(h.batcher->Enqueue(&rl).code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(rl, nullptr);

  auto rb = MakeRequest({2}, &b);
  EXPECT_TRUE(h.batcher->Enqueue(&rb).ok());
  auto rc = MakeRequest({3}, &c);
  s = h.batcher->Enqueue(&rc);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(s.message()), HasSubstr("full"));
  ASSERT_NE(rc, nullptr);
  EXPECT_EQ(rc->inputs[0].values<float>()[0], 3);

  auto empty = std::make_unique<Request>();
  EXPECT_EQ(h.batcher->Enqueue(&empty).code(),
            absl::StatusCode::kInvalidArgument);

  h.batcher->Shutdown();
  EXPECT_TRUE(a.done.HasBeenNotified());
  EXPECT_TRUE(b.done.HasBeenNotified());
  EXPECT_EQ(bad.calls, 0);
  auto after = MakeRequest({4}, &c);
  EXPECT_EQ(h.batcher->Enqueue(&after).code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(after, nullptr);
  auto snapshot = h.batcher->stats();
  EXPECT_EQ(
      snapshot.levels[0].rejections[static_cast<int>(RejectReason::kQueueFull)],
      1u);
}

TEST(DynamicBatcherTest, FullBatchGoesAtOnceAndResultsAreSliced) {
  FakeClock clock;
  ModelOptions m = Model(4);
  Harness h(m, Options(m, 1'000'000), &clock);
  Outcome o[3];
  auto r0 = MakeRequest({1, 2}, &o[0]);
  auto r1 = MakeRequest({3}, &o[1]);
  auto r2 = MakeRequest({4}, &o[2]);
  ASSERT_TRUE(h.batcher->Enqueue(&r0).ok());
  ASSERT_TRUE(h.batcher->Enqueue(&r1).ok());
  ASSERT_TRUE(h.batcher->Enqueue(&r2).ok());
  for (auto& x : o)
    x.done.WaitForNotification();  // no clock advance needed: 4 rows = full
  EXPECT_EQ(Values(o[0]), (std::vector<float>{1, 2}));
  EXPECT_EQ(Values(o[1]), (std::vector<float>{3}));
  EXPECT_EQ(Values(o[2]), (std::vector<float>{4}));
  auto stats = h.batcher->stats();
  EXPECT_EQ(stats.batches, 1u);
  EXPECT_EQ(stats.rows_executed, 4u);
  EXPECT_EQ(stats.dispatch_reasons[static_cast<int>(DispatchReason::kFull)],
            1u);
}

TEST(DynamicBatcherTest, LoneRequestWaitsExactlyTheQueueDelay) {
  FakeClock clock;
  ModelOptions m = Model(8);
  Harness h(m, Options(m, 10'000), &clock);
  Outcome o;
  auto r = MakeRequest({7}, &o);
  ASSERT_TRUE(h.batcher->Enqueue(&r).ok());
  clock.BlockUntilWaiters(1);
  clock.Advance(absl::Microseconds(9'999));
  clock.BlockUntilWaiters(1);
  EXPECT_FALSE(o.done.HasBeenNotified());
  EXPECT_EQ(h.batcher->stats().batches, 0u);
  clock.Advance(absl::Microseconds(1));
  o.done.WaitForNotification();
  EXPECT_EQ(Values(o), (std::vector<float>{7}));
  EXPECT_EQ(
      h.batcher->stats()
          .dispatch_reasons[static_cast<int>(DispatchReason::kDelayExpired)],
      1u);
}

TEST(DynamicBatcherTest, QueueTimeoutFiresOnTime) {
  FakeClock clock;
  ModelOptions m = Model(8);
  m.dynamic_batching.default_queue_policy.default_timeout_us = 5'000;
  Harness h(m, Options(m, 1'000'000), &clock);
  Outcome o;
  auto r = MakeRequest({1}, &o);
  ASSERT_TRUE(h.batcher->Enqueue(&r).ok());
  clock.BlockUntilWaiters(1);
  clock.Advance(absl::Microseconds(4'999));
  clock.BlockUntilWaiters(1);
  EXPECT_FALSE(o.done.HasBeenNotified());
  clock.Advance(absl::Microseconds(1));
  o.done.WaitForNotification();
  EXPECT_EQ(o.result.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(h.batcher->stats().levels[0].timeouts, 1u);
}

TEST(DynamicBatcherTest, PerRequestTimeoutOverridesOnlyWhenAllowed) {
  FakeClock clock;
  ModelOptions m = Model(8);
  m.dynamic_batching.default_queue_policy.default_timeout_us = 5'000;
  m.dynamic_batching.default_queue_policy.allow_timeout_override = true;
  Harness h(m, Options(m, 1'000'000), &clock);
  Outcome longer;
  auto r = MakeRequest({1}, &longer);
  r->timeout = absl::Milliseconds(20);  // lengthens the 5 ms default
  ASSERT_TRUE(h.batcher->Enqueue(&r).ok());
  clock.BlockUntilWaiters(1);
  clock.Advance(absl::Milliseconds(10));
  clock.BlockUntilWaiters(1);
  EXPECT_FALSE(longer.done.HasBeenNotified());
  clock.Advance(absl::Milliseconds(10));
  longer.done.WaitForNotification();
  EXPECT_EQ(longer.result.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(DynamicBatcherTest, EngineErrorFailsExactlyThatBatch) {
  FakeClock clock;
  ModelOptions m = Model(2);
  m.parameters["fail_on_first_value"] = "13";
  Harness h(m, Options(m, 1'000'000), &clock);
  Outcome o[4];
  auto a = MakeRequest({13}, &o[0]);
  auto b = MakeRequest({1}, &o[1]);
  auto c = MakeRequest({2}, &o[2]);
  auto d = MakeRequest({3}, &o[3]);
  for (auto* r : {&a, &b, &c, &d}) ASSERT_TRUE(h.batcher->Enqueue(r).ok());
  for (auto& x : o) x.done.WaitForNotification();
  EXPECT_EQ(o[0].result.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(o[1].result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(o[1].result.status().message()),
              HasSubstr("model 'id'"));
  EXPECT_TRUE(o[2].result.ok());
  EXPECT_TRUE(o[3].result.ok());
}

TEST(DynamicBatcherTest, HigherPriorityRunsFirstWhileTheInstanceIsBusy) {
  FakeClock clock;
  ModelOptions m = Model(1);
  m.dynamic_batching.priority_levels = 2;
  m.dynamic_batching.default_priority_level = 2;
  m.parameters["execute_delay_us"] =
      "30000";  // real compute time keeps the instance busy
  Harness h(m, Options(m, 0), &clock);
  std::vector<int> order;
  Mutex mu;
  BlockingCounter left(3);
  auto make = [&](float v, uint32_t prio) {
    auto r = std::make_unique<Request>();
    r->inputs.push_back(
        *Tensor::FromValues<float>("x", {1, 1}, std::vector<float>{v}));
    r->priority = prio;
    r->done = [&, v](absl::StatusOr<std::vector<Tensor>>) {
      MutexLock lock(&mu);
      order.push_back(static_cast<int>(v));
      left.DecrementCount();
    };
    return r;
  };
  auto first = make(0, 2);
  ASSERT_TRUE(h.batcher->Enqueue(&first).ok());
  // Wait until the first request is running, then queue a low and a high one.
  while (h.batcher->stats().batches == 0) std::this_thread::yield();
  auto low = make(1, 2);
  auto high = make(2, 1);
  ASSERT_TRUE(h.batcher->Enqueue(&low).ok());
  ASSERT_TRUE(h.batcher->Enqueue(&high).ok());
  left.Wait();
  EXPECT_EQ(order, (std::vector<int>{0, 2, 1}));
}

TEST(DynamicBatcherTest, OfflineRequestsRunBelowEveryOnlineLevel) {
  FakeClock clock;
  ModelOptions m = Model(1);
  m.dynamic_batching.priority_levels = 2;
  m.dynamic_batching.default_priority_level = 2;
  // Long enough that the three enqueues below land while it runs.
  m.parameters["execute_delay_us"] = "300000";
  Harness h(m, Options(m, 0), &clock);
  std::vector<int> order;
  Mutex mu;
  BlockingCounter left(4);
  auto make = [&](float v, uint32_t prio, bool offline) {
    auto r = std::make_unique<Request>();
    r->inputs.push_back(
        *Tensor::FromValues<float>("x", {1, 1}, std::vector<float>{v}));
    r->priority = prio;
    r->offline = offline;
    r->done = [&, v](absl::StatusOr<std::vector<Tensor>>) {
      MutexLock lock(&mu);
      order.push_back(static_cast<int>(v));
      left.DecrementCount();
    };
    return r;
  };
  auto first = make(0, 2, false);
  ASSERT_TRUE(h.batcher->Enqueue(&first).ok());
  while (h.batcher->stats().batches == 0) std::this_thread::yield();
  // Offline first, even with priority 1 asked: the offline level is last.
  auto offline = make(1, 1, true);
  auto low = make(2, 2, false);
  auto high = make(3, 1, false);
  ASSERT_TRUE(h.batcher->Enqueue(&offline).ok());
  ASSERT_TRUE(h.batcher->Enqueue(&low).ok());
  ASSERT_TRUE(h.batcher->Enqueue(&high).ok());
  left.Wait();
  EXPECT_EQ(order, (std::vector<int>{0, 3, 2, 1}));
  const BatcherStatsSnapshot stats = h.batcher->stats();
  ASSERT_EQ(stats.levels.size(), 3u);
  EXPECT_EQ(stats.offline_level, 2);
  EXPECT_EQ(stats.levels[2].requests_succeeded, 1u);

  // Online requests cannot name the offline level.
  auto sneaky = make(4, 3, false);
  absl::Status refused = h.batcher->Enqueue(&sneaky);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("has levels 1..2"));
  EXPECT_NE(sneaky, nullptr);
}

// While online requests are about, a batch of offline records alone never
// takes the last free instance (parameter online_reserved_instances, default
// 1); with 0 it does.
TEST(DynamicBatcherTest, OfflineOnlyBatchesLeaveAnInstanceFreeForOnline) {
  for (const char* reserved : {"1", "0"}) {
    SCOPED_TRACE(reserved);
    FakeClock clock;  // frozen: the online request stays "recent"
    ModelOptions m = Model(1);
    m.parameters["execute_delay_us"] = "300000";
    m.parameters["online_reserved_instances"] = reserved;
    Harness h(m, Options(m, 0), &clock, /*instances=*/2);
    Outcome online, offline;
    auto a = MakeRequest({0}, &online);
    ASSERT_TRUE(h.batcher->Enqueue(&a).ok());
    while (h.batcher->stats().batches == 0) std::this_thread::yield();
    auto b = MakeRequest({1}, &offline);
    b->offline = true;
    ASSERT_TRUE(h.batcher->Enqueue(&b).ok());
    if (std::string(reserved) == "1") {
      // The second instance stays free until the online batch ends.
      absl::SleepFor(absl::Milliseconds(100));
      EXPECT_EQ(h.batcher->stats().batches, 1u);
      EXPECT_FALSE(online.done.HasBeenNotified());
      offline.done.WaitForNotification();
      EXPECT_TRUE(online.done.HasBeenNotified());  // it ran after
    } else {
      // It starts beside the online batch.
      const absl::Time give_up = absl::Now() + absl::Seconds(5);
      while (h.batcher->stats().batches < 2 && absl::Now() < give_up) {
        std::this_thread::yield();
      }
      EXPECT_EQ(h.batcher->stats().batches, 2u);
      EXPECT_FALSE(online.done.HasBeenNotified());
      offline.done.WaitForNotification();
    }
    online.done.WaitForNotification();
    EXPECT_TRUE(offline.result.ok()) << offline.result.status();
  }
}

TEST(DynamicBatcherTest, HeldBackOfflineRecordsGoOnceOnlineTrafficStops) {
  // A real clock: a FakeClock's Advance wakes every waiter, which would hide a
  // missing timer.
  ModelOptions m = Model(1);
  m.parameters["execute_delay_us"] = "3000000";  // the online batch runs 3 s
  Harness h(m, Options(m, 0), RealClock::Get(), /*instances=*/2);
  Outcome online, offline;
  auto a = MakeRequest({0}, &online);
  ASSERT_TRUE(h.batcher->Enqueue(&a).ok());
  const absl::Time start = absl::Now();
  while (h.batcher->stats().batches == 0) std::this_thread::yield();
  auto b = MakeRequest({1}, &offline);
  b->offline = true;
  ASSERT_TRUE(h.batcher->Enqueue(&b).ok());  // held: the last free instance
  // A second after the online request it no longer counts as recent: the
  // scheduler wakes by itself and the record takes the free instance while
  // the online batch still runs.
  while (h.batcher->stats().batches < 2 && !online.done.HasBeenNotified()) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_FALSE(online.done.HasBeenNotified());
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(2500));
  online.done.WaitForNotification();
  offline.done.WaitForNotification();
  EXPECT_TRUE(offline.result.ok()) << offline.result.status();
}

TEST(DynamicBatcherTest, PreserveOrderingDeliversInArrivalOrder) {
  ModelOptions m = Model(3);
  m.dynamic_batching.preserve_ordering = true;
  Harness h(m, Options(m, 50), RealClock::Get(), /*instances=*/3);
  constexpr int kN = 600;
  std::vector<int> order;
  Mutex mu;
  BlockingCounter left(kN);
  for (int i = 0; i < kN; ++i) {
    auto r = std::make_unique<Request>();
    r->inputs.push_back(*Tensor::FromValues<float>(
        "x", {1, 1}, std::vector<float>{static_cast<float>(i)}));
    r->done = [&, i](absl::StatusOr<std::vector<Tensor>> result) {
      EXPECT_TRUE(result.ok());
      MutexLock lock(&mu);
      order.push_back(i);
      left.DecrementCount();
    };
    ASSERT_TRUE(h.batcher->Enqueue(&r).ok());
  }
  left.Wait();
  for (int i = 0; i < kN; ++i) ASSERT_EQ(order[i], i);
}

TEST(DynamicBatcherTest, NoRequestLostOrDuplicatedUnderConcurrentProducers) {
  ModelOptions m = Model(64);
  Harness h(m, Options(m, 100), RealClock::Get(), /*instances=*/2);
  constexpr int kThreads = 8, kPerThread = 10'000;
  std::vector<std::atomic<int>> seen(kThreads * kPerThread);
  std::atomic<int> wrong{0};
  BlockingCounter left(kThreads * kPerThread);
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const int id = t * kPerThread + i;
        auto r = std::make_unique<Request>();
        r->inputs.push_back(*Tensor::FromValues<float>(
            "x", {1, 1}, std::vector<float>{static_cast<float>(id)}));
        r->done = [&, id](absl::StatusOr<std::vector<Tensor>> result) {
          if (!result.ok() ||
              (*result)[0].values<float>()[0] != static_cast<float>(id)) {
            wrong.fetch_add(1);
          }
          seen[id].fetch_add(1);
          left.DecrementCount();
        };
        absl::Status s;
        while (!(s = h.batcher->Enqueue(&r)).ok()) {
          ASSERT_EQ(s.code(),
                    absl::StatusCode::kUnavailable);  // queue full: retry
          ASSERT_NE(r, nullptr);
          std::this_thread::yield();
        }
        ASSERT_EQ(r, nullptr);
      }
    });
  }
  for (auto& p : producers) p.join();
  left.Wait();
  EXPECT_EQ(wrong.load(), 0);
  for (int id = 0; id < kThreads * kPerThread; ++id)
    ASSERT_EQ(seen[id].load(), 1) << id;
  auto stats = h.batcher->stats();
  EXPECT_EQ(stats.rows_executed, static_cast<uint64_t>(kThreads * kPerThread));
  EXPECT_GT(stats.average_batch_rows(), 1.0);
}

// Records the CPU policy of the thread that runs each batch, by the value of
// the batch's first row; answers like the identity engine.
class PolicyRecordingEngine : public Engine {
 public:
  absl::StatusOr<std::vector<Tensor>> Run(
      absl::Span<const Tensor> inputs) override {
    auto values = inputs[0].values<float>();
    {
      MutexLock lock(&mu);
      policies[static_cast<int>(values[0])] = sched_getscheduler(0);
    }
    std::vector<Tensor> out;
    out.push_back(*Tensor::FromValues<float>(
        "y", {inputs[0].shape()[0], 1},
        std::vector<float>(values.begin(), values.end())));
    return out;
  }
  Mutex mu;
  std::map<int, int> policies ABSL_GUARDED_BY(mu);
};

// Offline work runs the engine under SCHED_IDLE while online requests are
// about (and only then: `ferry run` has none and runs at full speed); online
// batches on the same instance thread run at normal priority again.
TEST(DynamicBatcherTest,
     OfflineBatchesComputeInTheBackgroundWhileOnlineIsAbout) {
  ModelOptions m = Model(1);
  PolicyRecordingEngine engine;
  std::unique_ptr<DynamicBatcher> batcher = *DynamicBatcher::Create(
      nullptr, m, {&engine}, Options(m, 0), RealClock::Get());
  auto run = [&](float v, bool offline) {
    Outcome o;
    auto r = MakeRequest({v}, &o);
    r->offline = offline;
    ASSERT_TRUE(batcher->Enqueue(&r).ok());
    o.done.WaitForNotification();
    ASSERT_TRUE(o.result.ok()) << o.result.status();
  };
  run(10, /*offline=*/true);  // no online traffic yet
  run(1, /*offline=*/false);
  run(2, /*offline=*/true);
  run(3, /*offline=*/false);
  batcher.reset();
  MutexLock lock(&engine.mu);
  EXPECT_EQ(engine.policies[10], SCHED_OTHER);
  EXPECT_EQ(engine.policies[1], SCHED_OTHER);
  EXPECT_EQ(engine.policies[2],
            CanRunInBackground() ? SCHED_IDLE : SCHED_OTHER);
  EXPECT_EQ(engine.policies[3], SCHED_OTHER);
}

// A request queued behind busy instances with a far deadline parks the
// scheduler on that deadline; an instance that frees takes the request itself.
// A later request that has to wait out the queue delay must still go when the
// delay ends, not at the stale far timer. (Real clock: a FakeClock's Advance
// wakes every waiter and would hide a stale timer.)
TEST(DynamicBatcherTest, DelayEndsOnTimeAfterAnotherThreadTookTheTimedRequest) {
  ModelOptions m = Model(2);
  m.parameters["execute_delay_us"] = "30000";  // the instances stay busy
  Harness h(m, Options(m, 1000), RealClock::Get(), /*instances=*/2);
  Outcome busy1, busy2, far, late;
  auto r1 = MakeRequest({1, 2}, &busy1);
  auto r2 = MakeRequest({1, 2}, &busy2);
  ASSERT_TRUE(h.batcher->Enqueue(&r1).ok());  // full batches: both run now
  ASSERT_TRUE(h.batcher->Enqueue(&r2).ok());
  auto r3 = MakeRequest({3, 4}, &far);
  r3->deadline = absl::Now() + absl::Seconds(60);
  ASSERT_TRUE(h.batcher->Enqueue(&r3).ok());  // waits for an instance
  ASSERT_TRUE(far.done.WaitForNotificationWithTimeout(absl::Seconds(20)));
  busy1.done.WaitForNotification();
  busy2.done.WaitForNotification();
  absl::SleepFor(absl::Milliseconds(50));  // both instances back to idle
  auto r4 = MakeRequest({7}, &late);       // one row: waits out the 1 ms delay
  ASSERT_TRUE(h.batcher->Enqueue(&r4).ok());
  ASSERT_TRUE(late.done.WaitForNotificationWithTimeout(absl::Seconds(20)))
      << "the queue delay did not end the wait (a stale timer?)";
  EXPECT_EQ(Values(late), std::vector<float>{7});
}

// Enqueue may decide and dispatch on the calling thread (no hand-off through
// the scheduler), but it never runs a callback there, not even a rejection it
// found: a caller may hold its own locks while it enqueues.
TEST(DynamicBatcherTest, CallbacksNeverRunInsideEnqueue) {
  ModelOptions m = Model(8);
  BatcherOptions options = Options(m, 200);
  options.levels[0].default_timeout = absl::Microseconds(50);  // many time out
  Harness h(m, std::move(options), RealClock::Get(), /*instances=*/2);
  static thread_local bool inside_enqueue = false;
  constexpr int kThreads = 4, kPerThread = 3'000;
  std::atomic<int> inside{0}, timed_out{0};
  BlockingCounter left(kThreads * kPerThread);
  std::vector<std::thread> producers;
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        auto r = std::make_unique<Request>();
        r->inputs.push_back(
            *Tensor::FromValues<float>("x", {1, 1}, std::vector<float>{1.f}));
        r->done = [&](absl::StatusOr<std::vector<Tensor>> result) {
          if (inside_enqueue) inside.fetch_add(1);
          if (result.status().code() == absl::StatusCode::kDeadlineExceeded)
            timed_out.fetch_add(1);
          left.DecrementCount();
        };
        inside_enqueue = true;
        absl::Status s = h.batcher->Enqueue(&r);
        inside_enqueue = false;
        ASSERT_TRUE(s.ok()) << s;
      }
    });
  }
  for (auto& p : producers) p.join();
  left.Wait();
  EXPECT_EQ(inside.load(), 0);
  EXPECT_GT(timed_out.load(), 0);
}

TEST(DynamicBatcherTest, ShutdownDrainsQueuedRequests) {
  FakeClock clock;
  ModelOptions m = Model(8);
  Harness h(m, Options(m, 60'000'000), &clock);
  constexpr int kN = 20;
  Outcome o[kN];
  for (int i = 0; i < kN; ++i) {
    auto r = MakeRequest({static_cast<float>(i)}, &o[i]);
    ASSERT_TRUE(h.batcher->Enqueue(&r).ok());
  }
  h.batcher->Shutdown();  // the 60 s delay does not hold the drain
  for (int i = 0; i < kN; ++i) {
    ASSERT_TRUE(o[i].done.HasBeenNotified());
    EXPECT_TRUE(o[i].result.ok()) << o[i].result.status();
    EXPECT_EQ(o[i].calls, 1);
  }
  EXPECT_GT(h.batcher->stats()
                .dispatch_reasons[static_cast<int>(DispatchReason::kDrain)],
            0u);
}

TEST(DynamicBatcherTest, ShutdownPastGraceRejectsWhatIsLeftWithUnavailable) {
  FakeClock clock;
  ModelOptions m = Model(1);
  m.parameters["execute_delay_us"] = "20000";
  Harness h(m, Options(m, 0), &clock);
  constexpr int kN = 5;
  Outcome o[kN];
  for (int i = 0; i < kN; ++i) {
    auto r = MakeRequest({static_cast<float>(i)}, &o[i]);
    ASSERT_TRUE(h.batcher->Enqueue(&r).ok());
  }
  h.batcher->Shutdown(absl::ZeroDuration());
  int unavailable = 0;
  for (int i = 0; i < kN; ++i) {
    ASSERT_TRUE(o[i].done.HasBeenNotified()) << i;
    EXPECT_EQ(o[i].calls, 1);
    if (!o[i].result.ok()) {
      EXPECT_EQ(o[i].result.status().code(), absl::StatusCode::kUnavailable);
      ++unavailable;
    }
  }
  EXPECT_GE(unavailable, kN - 1);  // at most the one already running finished
}

TEST(DynamicBatcherTest, VariableLengthRequestsArePaddedAndSlicedBack) {
  FakeClock clock;
  ModelOptions m = Model(2, /*variable=*/true);
  BatcherOptions options =
      Options(m, 1'000'000);               // the two requests fill the batch
  options.policy.max_padding_waste = 1.0;  // batch everything together
  Harness h(m, std::move(options), &clock);
  Outcome a, b;
  auto make = [](std::vector<int64_t> ids, Outcome* out) {
    return RequestOf(*Tensor::FromValues<int64_t>(
                         "x", {1, static_cast<int64_t>(ids.size())}, ids),
                     out);
  };
  auto ra = make({1, 2, 3}, &a);
  auto rb = make({4, 5, 6, 7, 8}, &b);
  ASSERT_TRUE(h.batcher->Enqueue(&ra).ok());
  ASSERT_TRUE(h.batcher->Enqueue(&rb).ok());
  a.done.WaitForNotification();
  b.done.WaitForNotification();
  ASSERT_TRUE(a.result.ok()) << a.result.status();
  ASSERT_TRUE(b.result.ok()) << b.result.status();
  EXPECT_EQ((*a.result)[0].shape(), (Shape{1, 3}));
  auto av = (*a.result)[0].values<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(av.begin(), av.end()),
            (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ((*b.result)[0].shape(), (Shape{1, 5}));
  auto stats = h.batcher->stats();
  EXPECT_EQ(stats.batches, 1u);
  EXPECT_EQ(stats.padded_elements, 2u);  // [1,2,3] padded to length 5
  EXPECT_EQ(stats.total_elements, 10u);
}

TEST(DynamicBatcherTest, RequestThatCannotMeetItsDeadlineIsRefusedAtEnqueue) {
  ModelOptions m = Model(1);
  m.parameters["execute_delay_us"] = "20000";  // every batch takes >= 20 ms
  Harness h(m, Options(m, 0), RealClock::Get());
  for (int i = 0; i < 3; ++i) {  // teach the latency model
    Outcome o;
    auto r = MakeRequest({1}, &o);
    ASSERT_TRUE(h.batcher->Enqueue(&r).ok());
    o.done.WaitForNotification();
  }
  ASSERT_TRUE(h.batcher->latency_model().Predict(1).has_value());
  Outcome hopeless;
  auto r = MakeRequest({2}, &hopeless);
  r->deadline = absl::Now() + absl::Milliseconds(5);
  absl::Status s = h.batcher->Enqueue(&r);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("cannot finish by its deadline"));
  ASSERT_NE(r, nullptr);  // the caller still holds it
  Outcome fine;
  auto ok = MakeRequest({3}, &fine);
  ok->deadline = absl::Now() + absl::Seconds(10);
  ASSERT_TRUE(h.batcher->Enqueue(&ok).ok());
  fine.done.WaitForNotification();
  EXPECT_TRUE(fine.result.ok());
}

TEST(DynamicBatcherTest, ShortTimeoutQueuedBehindALongWaitStillFiresOnTime) {
  FakeClock clock;
  ModelOptions m = Model(8);
  m.dynamic_batching.default_queue_policy.allow_timeout_override = true;
  Harness h(m, Options(m, 1'000'000), &clock);  // the batch waits up to 1 s
  Outcome patient, hurried;
  auto a = MakeRequest({1}, &patient);
  ASSERT_TRUE(h.batcher->Enqueue(&a).ok());
  clock.BlockUntilWaiters(1);  // the scheduler is parked until the 1 s delay
  auto b = MakeRequest({2}, &hurried);
  b->timeout = absl::Milliseconds(5);
  ASSERT_TRUE(h.batcher->Enqueue(&b).ok());
  clock.BlockUntilWaiters(1);
  clock.Advance(absl::Milliseconds(5));
  hurried.done.WaitForNotification();
  EXPECT_EQ(hurried.result.status().code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_FALSE(patient.done.HasBeenNotified());
  clock.Advance(absl::Seconds(1));
  patient.done.WaitForNotification();
  EXPECT_TRUE(patient.result.ok());
}

}  // namespace
}  // namespace ferry::batcher_test
