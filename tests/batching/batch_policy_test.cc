// SPDX-License-Identifier: Apache-2.0
#include "batching/batch_policy.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ferry {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'000'000);
absl::Time At(int64_t ms) { return kT0 + absl::Milliseconds(ms); }

std::optional<absl::Duration> Unknown(int64_t) { return std::nullopt; }
// 2 ms + 1 ms per row.
std::optional<absl::Duration> Linear(int64_t rows) {
  return absl::Milliseconds(2 + rows);
}

QueuedRequest Req(uint64_t seq, int64_t rows = 1, int level = 0,
                  int64_t enqueue_ms = 0) {
  QueuedRequest r;
  r.seq = seq;
  r.rows = rows;
  r.level = level;
  r.enqueue_time = At(enqueue_ms);
  return r;
}

BatchPolicyOptions Opts(int64_t max_rows, int64_t delay_ms = 10) {
  BatchPolicyOptions o;
  o.max_batch_rows = max_rows;
  o.max_queue_delay = absl::Milliseconds(delay_ms);
  return o;
}

std::vector<uint64_t> Seqs(const std::vector<QueuedRequest>& q,
                           const std::vector<size_t>& idx) {
  std::vector<uint64_t> out;
  for (size_t i : idx) out.push_back(q[i].seq);
  return out;
}

struct Case {
  std::string name;
  std::vector<QueuedRequest> queue = {};
  BatchPolicyOptions options = {};
  PolicyContext context = {};
  bool known_latency = false;
  // expectations
  std::vector<uint64_t> dispatch = {};  // seqs in batch order; empty: none
  std::optional<DispatchReason> reason = std::nullopt;
  std::vector<uint64_t> timed_out = {};
  std::vector<uint64_t> infeasible = {};
  std::vector<uint64_t> delayed = {};
  absl::Time wake_at =
      absl::InfiniteFuture();  // checked when nothing is dispatched
};

PolicyContext Now(int64_t ms, bool free = true, bool draining = false) {
  return PolicyContext{At(ms), free, draining};
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  cases.push_back({"EmptyQueueWaitsForever", {}, Opts(8), Now(0)});
  cases.push_back({"LoneRequestWaitsForTheDelay",
                   {Req(1)},
                   Opts(8),
                   Now(0),
                   false,
                   {},
                   {},
                   {},
                   {},
                   {},
                   At(10)});
  cases.push_back({"DelayExpiredDispatches",
                   {Req(1), Req(2, 1, 0, 3)},
                   Opts(8),
                   Now(10),
                   false,
                   {1, 2},
                   DispatchReason::kDelayExpired});
  cases.push_back({"ZeroDelayDispatchesAtOnce",
                   {Req(1)},
                   Opts(8, 0),
                   Now(0),
                   false,
                   {1},
                   DispatchReason::kDelayExpired});
  {
    std::vector<QueuedRequest> q;
    for (uint64_t s = 1; s <= 9; ++s) q.push_back(Req(s));
    cases.push_back({"FullBatchCountsRowsAndGoesAtOnce",
                     q,
                     Opts(8),
                     Now(0),
                     false,
                     {1, 2, 3, 4, 5, 6, 7, 8},
                     DispatchReason::kFull});
  }
  cases.push_back({"MultiRowRequestsCountRowsNotRequests",
                   {Req(1, 3), Req(2, 3), Req(3, 3)},
                   Opts(8),
                   Now(0),
                   false,
                   {1, 2},
                   DispatchReason::kFull});
  cases.push_back({"SmallerLaterRequestFillsTheGap",
                   {Req(1, 5), Req(2, 4), Req(3, 3)},
                   Opts(8),
                   Now(0),
                   false,
                   {1, 3},
                   DispatchReason::kFull});
  {
    BatchPolicyOptions o = Opts(16);
    o.preferred_batch_sizes = {4, 8};
    std::vector<QueuedRequest> q;
    for (uint64_t s = 1; s <= 5; ++s) q.push_back(Req(s));
    cases.push_back({"LargestPreferredSizeReachableGoesAtOnce",
                     q,
                     o,
                     Now(0),
                     false,
                     {1, 2, 3, 4},
                     DispatchReason::kPreferredSize});
    cases.push_back({"PreferredSizeNeedsAnExactPrefix",
                     {Req(1, 3), Req(2, 3)},
                     o,
                     Now(0),
                     false,
                     {},
                     {},
                     {},
                     {},
                     {},
                     At(10)});
  }
  cases.push_back({"HigherPriorityFirst",
                   {Req(1, 1, 1), Req(2, 1, 0)},
                   Opts(1),
                   Now(0),
                   false,
                   {2},
                   DispatchReason::kFull});
  {
    BatchPolicyOptions o = Opts(1);
    o.aging_interval = absl::Milliseconds(100);
    cases.push_back({"AgedLowPriorityRequestOvertakesNewerHighPriority",
                     {Req(1, 1, 1, 0), Req(2, 1, 0, 250)},
                     o,
                     Now(250),
                     false,
                     {1},
                     DispatchReason::kFull});
    cases.push_back({"NotYetAgedStaysBehind",
                     {Req(1, 1, 1, 200), Req(2, 1, 0, 250)},
                     o,
                     Now(250),
                     false,
                     {2},
                     DispatchReason::kFull});
    o.aging_interval = absl::ZeroDuration();
    cases.push_back({"AgingOffNeverOvertakes",
                     {Req(1, 1, 1, 0), Req(2, 1, 0, 9000)},
                     o,
                     Now(9000),
                     false,
                     {2},
                     DispatchReason::kFull});
    o.aging_interval = absl::Milliseconds(100);
    o.max_aging_levels = 1;
    cases.push_back({"AgingIsBounded",
                     {Req(1, 1, 2, 0), Req(2, 1, 0, 900)},
                     o,
                     Now(900),
                     false,
                     {2},
                     DispatchReason::kFull});
  }
  {
    QueuedRequest expired = Req(1);
    expired.timeout_at = At(5);
    QueuedRequest pending = Req(2);
    pending.timeout_at = At(7);
    cases.push_back({"RejectTimeoutFiresAndIsNotDispatched",
                     {expired, pending},
                     Opts(8, 50),
                     Now(5),
                     false,
                     {},
                     {},
                     {1},
                     {},
                     {},
                     At(7)});
    QueuedRequest delayed = Req(1);
    delayed.timeout_at = At(5);
    delayed.timeout_action = TimeoutAction::kDelay;
    cases.push_back({"DelayTimeoutMovesBehindTheOthers",
                     {delayed, Req(2)},
                     Opts(1, 0),
                     Now(5),
                     false,
                     {2},
                     DispatchReason::kFull,
                     {},
                     {},
                     {1}});
    QueuedRequest already = delayed;
    already.delayed = true;
    // One aging interval (100 ms) after its timeout it competes by age again.
    cases.push_back({"DelayedStaysBehindForAnAgingInterval",
                     {already, Req(2)},
                     Opts(1, 0),
                     Now(104),
                     false,
                     {2},
                     DispatchReason::kFull});
    cases.push_back({"DelayedCompetesByAgeAfterAnAgingInterval",
                     {already, Req(2)},
                     Opts(1, 0),
                     Now(105),
                     false,
                     {1},
                     DispatchReason::kFull});
    BatchPolicyOptions no_aging = Opts(1, 0);
    no_aging.aging_interval = absl::ZeroDuration();
    cases.push_back({"WithoutAgingDelayedStaysBehind",
                     {already, Req(2)},
                     no_aging,
                     Now(100000),
                     false,
                     {2},
                     DispatchReason::kFull});
    cases.push_back({"AlreadyDelayedIsNotReportedAgain",
                     {already},
                     Opts(1, 0),
                     Now(6),
                     false,
                     {1},
                     DispatchReason::kFull});
  }
  {
    QueuedRequest late = Req(1);
    late.deadline = At(0);
    QueuedRequest tight = Req(2);
    tight.deadline = At(2);  // alone needs 3 ms
    QueuedRequest fine = Req(3);
    fine.deadline = At(40);
    cases.push_back({"DeadlinesThatCannotBeMetAreRejectedAtOnce",
                     {late, tight, fine},
                     Opts(8, 100),
                     Now(0),
                     true,
                     {},
                     {},
                     {},
                     {1, 2},
                     {},
                     // fine: latest start 40 - (2+1) = 37
                     At(37)});
    cases.push_back({"DeadlinePressureDispatchesEarly",
                     {fine},
                     Opts(8, 100),
                     Now(37),
                     true,
                     {3},
                     DispatchReason::kDeadline});
    cases.push_back({"UnknownLatencyOnlyRejectsPassedDeadlines",
                     {late, tight},
                     Opts(8, 100),
                     Now(0),
                     false,
                     {},
                     {},
                     {},
                     {1},
                     {},
                     At(2)});
  }
  {
    std::vector<QueuedRequest> q;
    for (uint64_t s = 1; s <= 8; ++s) q.push_back(Req(s));
    QueuedRequest t = Req(9);
    t.timeout_at = At(0);
    q.push_back(t);
    cases.push_back({"BusyInstancesKeepTheBatchOpenButTimeoutsFire",
                     q,
                     Opts(8),
                     Now(0, /*free=*/false),
                     false,
                     {},
                     {},
                     {9}});
  }
  cases.push_back({"DrainDispatchesWithoutWaiting",
                   {Req(1), Req(2)},
                   Opts(8, 1000),
                   Now(0, true, /*draining=*/true),
                   false,
                   {1, 2},
                   DispatchReason::kDrain});
  {
    // A candidate that cannot join the batch (it would pad too much, or its
    // key differs: an optional input only one carries, BYTES inputs of other
    // shapes) waits for its own batch; with ordering kept it ends the batch.
    QueuedRequest a = Req(1), b = Req(2), c = Req(3);
    a.length = 10;
    b.length = 100;
    c.length = 11;
    QueuedRequest keyed = Req(2);
    keyed.length = 10;  // fits by padding; only the key keeps it out
    keyed.key = 7;
    BatchPolicyOptions ordered = Opts(8);
    ordered.preserve_ordering = true;
    for (const auto& [why, misfit] :
         {std::pair<std::string, QueuedRequest>{"Length", b},
          std::pair<std::string, QueuedRequest>{"Key", keyed}}) {
      cases.push_back({why + "MisfitWaitsForItsOwnBatch",
                       {a, misfit, c},
                       Opts(8),
                       Now(10),
                       false,
                       {1, 3},
                       DispatchReason::kDelayExpired});
      cases.push_back({"Ordered" + why + "BreakDispatchesTheBatchSoFar",
                       {a, misfit, c},
                       ordered,
                       Now(0),
                       false,
                       {1},
                       DispatchReason::kShapeBreak});
    }
    cases.push_back({"TheOtherKeyGoesNextInItsOwnBatch",
                     {keyed, c},
                     ordered,
                     Now(0),
                     false,
                     {2},
                     DispatchReason::kShapeBreak});
    BatchPolicyOptions no_bucketing = Opts(8);
    no_bucketing.max_padding_waste = 1.0;
    cases.push_back({"BucketingOffPadsEverything",
                     {a, b, c},
                     no_bucketing,
                     Now(10),
                     false,
                     {1, 2, 3},
                     DispatchReason::kDelayExpired});
  }
  {
    BatchPolicyOptions o = Opts(8);
    o.max_batch_bytes = 1000;
    QueuedRequest a = Req(1), b = Req(2), c = Req(3);
    a.bytes = b.bytes = c.bytes = 400;
    cases.push_back({"ByteCapBoundsTheBatch",
                     {a, b, c},
                     o,
                     Now(0),
                     false,
                     {1, 2},
                     DispatchReason::kFull});
  }
  {
    BatchPolicyOptions o = Opts(8);
    o.preserve_ordering = true;
    cases.push_back({"PreserveOrderingIsArrivalOrder",
                     {Req(2, 1, 0), Req(1, 1, 1)},
                     o,
                     Now(10),
                     false,
                     {1, 2},
                     DispatchReason::kDelayExpired});
    cases.push_back({"PreserveOrderingStopsAtTheFirstMisfit",
                     {Req(1, 5), Req(2, 4), Req(3, 3)},
                     o,
                     Now(0),
                     false,
                     {1},
                     DispatchReason::kFull});
  }
  {
    BatchPolicyOptions o = Opts(8, 1000);
    o.dynamic_batching = false;
    cases.push_back({"WithoutDynamicBatchingEachRequestRunsAlone",
                     {Req(1), Req(2)},
                     o,
                     Now(0),
                     false,
                     {1},
                     DispatchReason::kFull});
  }
  {
    // Offline rows (level 1 here) stop at the cap; online rows still join;
    // the capped batch goes at once.
    BatchPolicyOptions o = Opts(16);
    o.offline_level = 1;
    o.max_offline_rows = 4;
    cases.push_back({"OfflineRowsStopAtTheirCapAndTheBatchGoes",
                     {Req(1, 3, 1), Req(2, 2, 1), Req(3, 1, 0), Req(4, 1, 1)},
                     o,
                     Now(0),
                     false,
                     {3, 1, 4},
                     DispatchReason::kFull});
    // A 5 ms budget with compute 2 ms + 1 ms/row: 3 offline rows at most.
    BatchPolicyOptions budget = Opts(16);
    budget.offline_level = 1;
    budget.offline_batch_budget = absl::Milliseconds(5);
    cases.push_back({"OfflineRowsStopAtTheTimeBudget",
                     {Req(1, 2, 1), Req(2, 1, 1), Req(3, 1, 1), Req(4, 1, 0)},
                     budget,
                     Now(0),
                     true,
                     {4, 1, 2},
                     DispatchReason::kFull});
    PolicyContext quiet = Now(0);
    quiet.online_active = false;
    cases.push_back({"WithoutOnlineTrafficOfflineBatchesAreNotCapped",
                     {Req(1, 3, 1), Req(2, 2, 1), Req(3, 1, 1)},
                     o,
                     quiet,
                     false,
                     {},
                     {},
                     {},
                     {},
                     {},
                     At(10)});
    // Taking an instance would leave none free for online requests (the
    // batcher's call): a batch of offline rows alone waits, with no timer
    // (an instance finishing decides again); one with an online request
    // goes, topped up with offline rows; draining runs everything.
    PolicyContext reserved = Now(0);
    reserved.offline_only_allowed = false;
    cases.push_back({"OfflineOnlyBatchLeavesTheLastFreeInstance",
                     {Req(1, 3, 1), Req(2, 2, 1)},
                     o,
                     reserved,
                     false,
                     {},
                     {},
                     {},
                     {},
                     {},
                     absl::InfiniteFuture()});
    cases.push_back({"AnOnlineRequestStillTakesItWithOfflineRows",
                     {Req(1, 3, 1), Req(2, 2, 1), Req(3, 1, 0)},
                     o,
                     reserved,
                     false,
                     {3, 1},
                     DispatchReason::kFull});
    PolicyContext reserved_draining = Now(0, true, true);
    reserved_draining.offline_only_allowed = false;
    cases.push_back({"DrainingRunsOfflineOnlyBatchesToo",
                     {Req(1, 3, 1)},
                     o,
                     reserved_draining,
                     false,
                     {1},
                     DispatchReason::kDrain});
    BatchPolicyOptions uncapped = o;
    uncapped.max_offline_rows = 0;
    cases.push_back({"NoOfflineCapWaitsForMore",
                     {Req(1, 3, 1), Req(2, 2, 1)},
                     uncapped,
                     Now(0),
                     false,
                     {},
                     {},
                     {},
                     {},
                     {},
                     At(10)});
  }
  return cases;
}

TEST(BatchPolicyTest, Table) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    BatchDecision d = DecideBatch(
        c.queue, c.options, c.context,
        c.known_latency ? LatencyPredictor(Linear) : LatencyPredictor(Unknown));
    EXPECT_EQ(Seqs(c.queue, d.dispatch), c.dispatch);
    if (c.reason) {
      EXPECT_EQ(ToString(d.reason), ToString(*c.reason));
    }
    EXPECT_EQ(Seqs(c.queue, d.timed_out), c.timed_out);
    EXPECT_EQ(Seqs(c.queue, d.infeasible), c.infeasible);
    EXPECT_EQ(Seqs(c.queue, d.delayed), c.delayed);
    if (d.dispatch.empty()) {
      EXPECT_EQ(d.wake_at, c.wake_at);
    }
  }
}

TEST(BatchPolicyTest, EveryDispatchReasonIsReachable) {
  std::vector<bool> seen(kNumDispatchReasons, false);
  for (const Case& c : Cases()) {
    if (c.reason) seen[static_cast<int>(*c.reason)] = true;
  }
  for (DispatchReason r : kAllDispatchReasons) {
    EXPECT_TRUE(seen[static_cast<int>(r)]) << ToString(r);
  }
}

TEST(BatchPolicyTest, EffectiveLevelRisesOneLevelPerInterval) {
  BatchPolicyOptions o;
  o.aging_interval = absl::Milliseconds(100);
  QueuedRequest r = Req(1, 1, 3, 0);
  EXPECT_EQ(EffectiveLevel(r, o, At(0)), 3);
  EXPECT_EQ(EffectiveLevel(r, o, At(99)), 3);
  EXPECT_EQ(EffectiveLevel(r, o, At(100)), 2);
  EXPECT_EQ(EffectiveLevel(r, o, At(250)), 1);
  EXPECT_EQ(EffectiveLevel(r, o, At(10'000)), 0);
}

// A flood of fresh high-priority requests, one batch slot at a time: the
// low-priority request still gets out once it has aged.
TEST(BatchPolicyTest, FloodCannotStarveALowerLevel) {
  BatchPolicyOptions o = Opts(1, 0);
  o.aging_interval = absl::Milliseconds(50);
  std::vector<QueuedRequest> queue = {Req(0, 1, /*level=*/1, 0)};
  uint64_t seq = 1;
  for (int64_t ms = 0; ms < 1000; ms += 1) {
    queue.push_back(
        Req(seq++, 1, 0, ms));  // a new high-priority request every ms
    BatchDecision d = DecideBatch(queue, o, Now(ms), Unknown);
    ASSERT_EQ(d.dispatch.size(), 1u);
    if (queue[d.dispatch[0]].seq == 0) {
      EXPECT_LE(ms, 100) << "starved for " << ms << " ms";
      return;
    }
    queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(d.dispatch[0]));
    // The flood outpaces the single slot: keep one extra request arriving.
    queue.push_back(Req(seq++, 1, 0, ms));
  }
  FAIL() << "the level-1 request never left the queue";
}

}  // namespace
}  // namespace ferry
