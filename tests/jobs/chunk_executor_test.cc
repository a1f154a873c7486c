// SPDX-License-Identifier: Apache-2.0
#include "jobs/chunk_executor.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "core/mutex.h"
#include "engines/engine_registry.h"
#include "engines/identity/identity_engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jobs/job_test_util.h"
#include "repository/model_manager.h"
#include "test_util/temp_dir.h"

namespace ferry {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ChunkExecutorTest : public testing::IdentityModelsTest {
 protected:
  // Scans `csv` as one chunk and builds the codec for `model`.
  void Prepare(const std::string& model, const std::string& csv) {
    input_ = (dir_.path() / "in.csv").string();
    testing::WriteFile(input_, csv);
    absl::StatusOr<InputScan> scan =
        ScanInput(input_, RecordFormat::kCsv, 1'000'000);
    ASSERT_TRUE(scan.ok()) << scan.status();
    ASSERT_EQ(scan->chunks.size(), 1u);
    span_ = scan->chunks[0];
    CsvOptions csv_options;
    csv_options.id_column = "id";
    absl::StatusOr<ModelVersionInfo> info = manager_->Find(model, std::nullopt);
    ASSERT_TRUE(info.ok());
    absl::StatusOr<std::unique_ptr<RecordCodec>> codec = RecordCodec::Create(
        RecordFormat::kCsv, info->options, *scan, csv_options);
    ASSERT_TRUE(codec.ok()) << codec.status();
    codec_ = *std::move(codec);
    model_ = model;
  }

  InferFn Infer() {
    return [this](InferenceRequest r, InferDone done) {
      manager_->Infer(model_, std::nullopt, std::move(r), std::move(done));
    };
  }

  std::string input_;
  std::string model_;
  ChunkSpan span_;
  std::unique_ptr<RecordCodec> codec_;
};

TEST_F(ChunkExecutorTest, EveryRecordOnceInOrder) {
  Prepare("m", testing::MakeCsv(500));
  ChunkExecutorOptions o;
  o.clock = RealClock::Get();
  o.max_in_flight_records = 40;
  std::atomic<int64_t> done{0};
  o.records_done = &done;
  absl::StatusOr<ChunkOutcome> out =
      ExecuteChunk(input_, RecordFormat::kCsv, span_, *codec_, Infer(), o);
  ASSERT_TRUE(out.ok()) << out.status();
  std::string want;
  for (int i = 0; i < 500; ++i) want += testing::ExpectedLine(i);
  EXPECT_EQ(out->output, want);
  EXPECT_EQ(out->errors, "");
  EXPECT_EQ(out->result.completed, 500);
  EXPECT_EQ(out->result.failed, 0);
  EXPECT_EQ(done.load(), 500);
}

TEST_F(ChunkExecutorTest, MalformedRecordsFailAtOnceWithTheirLine) {
  Prepare("m", testing::MakeCsv(50, /*bad=*/{3, 40}));
  ChunkExecutorOptions o;
  o.clock = RealClock::Get();
  absl::StatusOr<ChunkOutcome> out =
      ExecuteChunk(input_, RecordFormat::kCsv, span_, *codec_, Infer(), o);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->result.completed, 48);
  EXPECT_EQ(out->result.failed, 2);
  // Header is line 1, so row i is line i + 2.
  EXPECT_THAT(out->errors, HasSubstr("\"line\":5,"));
  EXPECT_THAT(out->errors, HasSubstr("\"line\":42,"));
  EXPECT_THAT(out->errors, HasSubstr("invalid_record"));
  EXPECT_THAT(out->errors, HasSubstr("oops"));
  EXPECT_EQ(out->dead_letters, "");
  EXPECT_EQ(out->output.find("r3,"), std::string::npos);
}

// Transient failures retry after 1 s and 2 s of the injected clock, then the
// record is dead-lettered; its neighbours in the same request are unharmed.
TEST_F(ChunkExecutorTest, TransientFailuresBackOffThenDeadLetter) {
  Prepare("m", testing::MakeCsv(8, {}, /*poison=*/{0}));
  FakeClock clock;
  const absl::Time t0 = clock.Now();
  Mutex mu;
  std::vector<absl::Duration> poison_attempts;
  InferFn infer = [&](InferenceRequest r, InferDone done) {
    if (r.inputs[0].values<float>()[0] == -7777.0f) {
      MutexLock lock(&mu);
      poison_attempts.push_back(clock.Now() - t0);
    }
    manager_->Infer("m", std::nullopt, std::move(r), std::move(done));
  };
  ChunkExecutorOptions o;
  o.clock = &clock;
  // Jitter spreads the records that retry together over separate batches
  // (the identity engine fails a whole batch that starts with -7777).
  int calls = 0;
  o.jitter = [&calls] { return std::min(1.0, -1.0 + 0.25 * calls++); };
  o.max_attempts = 3;
  o.model_version = 1;
  absl::StatusOr<ChunkOutcome> out;
  std::thread run([&] {
    out = ExecuteChunk(input_, RecordFormat::kCsv, span_, *codec_, infer, o);
  });
  std::atomic<bool> finished{false};
  // Moves time in 10 ms steps whenever the executor is parked on the clock
  // (never blocking: the executor may already be done).
  std::thread driver([&] {
    while (!finished.load()) {
      if (clock.num_waiters() > 0) clock.Advance(absl::Milliseconds(10));
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  run.join();
  finished.store(true);
  driver.join();
  ASSERT_TRUE(out.ok()) << out.status();
  {
    MutexLock lock(&mu);
    ASSERT_EQ(poison_attempts.size(), 3u);
    // 1 s after the first failure, then 2 s after the second, each +-10 %
    // jitter (and up to the 10 ms steps the test advances the clock by).
    const absl::Duration first = poison_attempts[1] - poison_attempts[0];
    const absl::Duration second = poison_attempts[2] - poison_attempts[1];
    EXPECT_GE(first, absl::Milliseconds(900));
    EXPECT_LE(first, absl::Milliseconds(1130));
    EXPECT_GE(second, absl::Milliseconds(1800));
    EXPECT_LE(second, absl::Milliseconds(2230));
  }
  EXPECT_EQ(out->result.failed, 1);
  EXPECT_EQ(out->result.completed, 7);
  EXPECT_THAT(out->errors, HasSubstr("inference_failed"));
  EXPECT_THAT(out->errors, HasSubstr("\"attempts\":3"));
  EXPECT_THAT(out->dead_letters, HasSubstr("r0,-7777,0.5,0"));
  EXPECT_THAT(out->dead_letters, HasSubstr("\"model_version\":1"));
  std::string want;
  for (int i = 1; i < 8; ++i) want += testing::ExpectedLine(i);
  EXPECT_EQ(out->output, want);
}

TEST_F(ChunkExecutorTest, StopAbandonsWithCancelled) {
  Prepare("slow", testing::MakeCsv(64));
  ChunkExecutorOptions o;
  o.clock = RealClock::Get();
  o.keep_alive_every = absl::Milliseconds(5);
  std::atomic<int> checks{0};
  o.should_stop = [&] { return ++checks > 2; };
  absl::StatusOr<ChunkOutcome> out =
      ExecuteChunk(input_, RecordFormat::kCsv, span_, *codec_, Infer(), o);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kCancelled);
}

TEST_F(ChunkExecutorTest, LostLeaseAbandonsWithItsError) {
  Prepare("slow", testing::MakeCsv(64));
  ChunkExecutorOptions o;
  o.clock = RealClock::Get();
  o.keep_alive_every = absl::Milliseconds(5);
  o.keep_alive = [] { return absl::FailedPreconditionError("lease lost"); };
  absl::StatusOr<ChunkOutcome> out =
      ExecuteChunk(input_, RecordFormat::kCsv, span_, *codec_, Infer(), o);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace ferry
