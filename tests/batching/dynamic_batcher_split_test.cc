// SPDX-License-Identifier: Apache-2.0
// DynamicBatcher: requests split into parts (by rows or bytes), the byte cap,
// and requests that cannot share a batch.
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "batcher_harness.h"
#include "batching/dynamic_batcher.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ferry::batcher_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(DynamicBatcherTest, OversizedRequestIsSplitAndReassembledInOrder) {
  // 10 rows, max_batch_size 4: parts of 4, 4, 2; with a byte cap of two FP32
  // rows of width 1, parts of 2.
  for (const auto& [byte_cap, batches] :
       {std::pair<const char*, uint64_t>{nullptr, 3},
        std::pair<const char*, uint64_t>{"8", 5}}) {
    SCOPED_TRACE(byte_cap == nullptr ? "rows" : "bytes");
    FakeClock clock;
    ModelOptions m = Model(4);
    if (byte_cap != nullptr) m.parameters["max_batch_bytes"] = byte_cap;
    Harness h(m, Options(m, 0), &clock, /*instances=*/2);
    Outcome o;
    std::vector<float> rows;
    for (int i = 0; i < 10; ++i) rows.push_back(static_cast<float>(i));
    auto r = MakeRequest(rows, &o);
    ASSERT_TRUE(h.batcher->Enqueue(&r).ok());
    o.done.WaitForNotification();
    ASSERT_TRUE(o.result.ok()) << o.result.status();
    EXPECT_EQ((*o.result)[0].shape(), (Shape{10, 1}));
    EXPECT_EQ(Values(o), rows);
    EXPECT_EQ(o.calls, 1);
    EXPECT_EQ(h.batcher->stats().batches, batches);
    EXPECT_EQ(h.batcher->stats().rows_executed, 10u);
  }
}

TEST(DynamicBatcherTest, BatchFullByBytesGoesWithoutWaitingOutTheDelay) {
  FakeClock clock;  // never advanced: only "full" can dispatch
  ModelOptions m = Model(8);
  m.parameters["max_batch_bytes"] = "8";  // two one-row FP32 requests
  Harness h(m, Options(m, 10'000'000), &clock);
  Outcome a, b, c;
  auto ra = MakeRequest({1}, &a);
  auto rb = MakeRequest({2}, &b);
  auto rc = MakeRequest({3}, &c);
  ASSERT_TRUE(h.batcher->Enqueue(&ra).ok());
  clock.BlockUntilWaiters(1);  // the scheduler parks on the 10 s delay
  ASSERT_TRUE(h.batcher->Enqueue(&rb).ok());
  ASSERT_TRUE(h.batcher->Enqueue(&rc).ok());  // does not fit: a, b are full
  ASSERT_TRUE(a.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(b.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(c.done.HasBeenNotified());
  EXPECT_EQ(h.batcher->stats().dispatched(DispatchReason::kFull), 1u);
  h.batcher->Shutdown();  // runs c (drain) while its Outcome still exists
  EXPECT_TRUE(c.done.HasBeenNotified());
}

TEST(DynamicBatcherTest, SplitRequestWithMorePartsThanTheQueueBoundGetsIn) {
  FakeClock clock;
  ModelOptions m = Model(4);
  m.dynamic_batching.default_queue_policy.max_queue_size = 2;
  Harness h(m, Options(m, 0), &clock);
  Outcome o;
  std::vector<float> rows(16);
  for (int i = 0; i < 16; ++i) rows[i] = static_cast<float>(i);
  auto r = MakeRequest(rows, &o);  // 4 parts
  ASSERT_TRUE(h.batcher->Enqueue(&r).ok());
  o.done.WaitForNotification();
  ASSERT_TRUE(o.result.ok()) << o.result.status();
  EXPECT_EQ(Values(o), rows);
}

TEST(DynamicBatcherTest, RowLargerThanTheByteCapIsTheCallersError) {
  FakeClock clock;
  // Variable-length rows: the config cannot rule out a row over the cap (a
  // fixed-size row over it is refused when the options are read).
  ModelOptions m = Model(4, /*variable=*/true);
  m.parameters["max_batch_bytes"] = "16";  // two INT64 elements
  Harness h(m, Options(m, 0), &clock);
  Outcome o;
  auto r = RequestOf(*Tensor::FromValues<int64_t>(
                         "x", {2, 3}, std::vector<int64_t>{1, 2, 3, 4, 5, 6}),
                     &o);
  absl::Status s = h.batcher->Enqueue(&r);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("model 'id': row 0 of the request has 24 bytes of "
                        "input, more than max_batch_bytes (16)"));
  ASSERT_NE(r, nullptr);  // still the caller's
  EXPECT_EQ(o.calls, 0);
  EXPECT_EQ(h.batcher->stats().batches, 0u);
}

TEST(DynamicBatcherTest, BytesInputsOfDifferentShapesRunInSeparateBatches) {
  // BYTES inputs are never padded: [1,3] and [1,4] (padding waste 1/8, within
  // the bound) used to share a batch that assembly then refused, failing both.
  FakeClock clock;
  ModelOptions m = Model(4);
  m.inputs = {{"s", DataType::kBytes, {-1}}};
  m.outputs = {{"t", DataType::kBytes, {-1}}};
  m.parameters["execute_delay_us"] = "30000";  // keeps the instance busy
  Harness h(m, Options(m, 0), &clock);
  auto make = [](std::vector<std::string> words, Outcome* out) {
    return RequestOf(*Tensor::FromStrings(
                         "s", {1, static_cast<int64_t>(words.size())}, words),
                     out);
  };
  Outcome first, a, b;
  auto r0 = make({"x"}, &first);
  ASSERT_TRUE(h.batcher->Enqueue(&r0).ok());
  while (h.batcher->stats().batches == 0) std::this_thread::yield();
  auto ra = make({"a", "b", "c"}, &a);
  auto rb = make({"d", "e", "f", "g"}, &b);
  ASSERT_TRUE(h.batcher->Enqueue(&ra).ok());
  ASSERT_TRUE(h.batcher->Enqueue(&rb).ok());
  a.done.WaitForNotification();
  b.done.WaitForNotification();
  ASSERT_TRUE(a.result.ok()) << a.result.status();
  ASSERT_TRUE(b.result.ok()) << b.result.status();
  EXPECT_THAT((*a.result)[0].strings(), ElementsAre("a", "b", "c"));
  EXPECT_THAT((*b.result)[0].strings(), ElementsAre("d", "e", "f", "g"));
  EXPECT_EQ(h.batcher->stats().batches, 3u);
}

TEST(DynamicBatcherTest, SplitRequestTimingOutCountsOnceWithAllItsRows) {
  FakeClock clock;
  ModelOptions m = Model(4);
  m.dynamic_batching.default_queue_policy.default_timeout_us = 5'000;
  m.parameters["execute_delay_us"] = "300000";  // part 0 holds the instance
  Harness h(m, Options(m, 0), &clock);
  Outcome o;
  auto r = MakeRequest(std::vector<float>(12, 1.0f), &o);  // 3 parts of 4
  ASSERT_TRUE(h.batcher->Enqueue(&r).ok());
  while (h.batcher->stats().batches == 0) std::this_thread::yield();
  clock.BlockUntilWaiters(1);
  clock.Advance(absl::Milliseconds(5));  // parts 1 and 2 time out
  o.done.WaitForNotification();
  EXPECT_EQ(o.result.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(o.calls, 1);
  const BatcherStatsSnapshot s = h.batcher->stats();
  EXPECT_EQ(s.levels[0].timeouts, 1u);
  EXPECT_EQ(s.levels[0].rejected(RejectReason::kTimeout), 1u);
  EXPECT_EQ(s.levels[0].rows_rejected, 12u);
}

}  // namespace
}  // namespace ferry::batcher_test
