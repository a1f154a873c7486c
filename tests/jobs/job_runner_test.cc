// SPDX-License-Identifier: Apache-2.0
#include "jobs/job_runner.h"

#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/time/civil_time.h"
#include "engines/engine_registry.h"
#include "engines/identity/identity_engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jobs/job_test_util.h"
#include "repository/model_manager.h"
#include "storage/memory_job_store.h"
#include "storage/sqlite_job_store.h"
#include "test_util/temp_dir.h"

namespace ferry {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  for (absl::string_view l : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    out.emplace_back(l);
  }
  return out;
}

class JobRunnerTest : public testing::IdentityModelsTest {
 protected:
  JobRunner::Options RunnerOptions(Clock* clock = RealClock::Get()) {
    JobRunner::Options o;
    o.work_dir = dir_.path() / "parts";
    o.clock = clock;
    o.poll = absl::Milliseconds(10);
    o.backoff.initial = absl::Milliseconds(1);
    o.jitter = [] { return 0.0; };
    o.on_terminal = [this](const JobRecord& job) {
      MutexLock lock(&mu_);
      terminal_.push_back(job);
    };
    return o;
  }

  JobSpec Spec(const std::string& model, const std::string& csv,
               int64_t chunk) {
    const fs::path input = dir_.path() / "in.csv";
    testing::WriteFile(input, csv);
    JobSpec spec;
    spec.model = model;
    spec.input_path = input.string();
    spec.output_path = (dir_.path() / "out.csv").string();
    spec.options.csv.id_column = "id";
    spec.options.chunk_records = chunk;
    return spec;
  }

  // Waits (real time) until the job is terminal.
  JobRecord WaitTerminal(JobStore& store, const std::string& id) {
    for (int i = 0; i < 3000; ++i) {
      absl::StatusOr<JobRecord> job = store.GetJob(id);
      if (job.ok() && IsTerminal(job->state)) return *job;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ADD_FAILURE() << "job " << id << " did not finish";
    return *store.GetJob(id);
  }

  static std::string Want(int rows, const std::set<int>& skip = {}) {
    std::string want = "id,y_0,y_1,y_2\n";
    for (int i = 0; i < rows; ++i) {
      if (!skip.count(i)) want += testing::ExpectedLine(i);
    }
    return want;
  }

  Mutex mu_;
  std::vector<JobRecord> terminal_ ABSL_GUARDED_BY(mu_);
};

TEST_F(JobRunnerTest, CompletesWithEveryRecordInInputOrder) {
  MemoryJobStore store;
  JobRunner runner(&store, &store, manager_.get(), RunnerOptions());
  absl::StatusOr<JobRecord> job =
      runner.Submit(Spec("m", testing::MakeCsv(1000), 64));
  ASSERT_TRUE(job.ok()) << job.status();
  // Validated by a worker once the runner starts.
  EXPECT_EQ(job->state, JobState::kValidating);
  EXPECT_EQ(job->counts.total, 0);
  runner.Start();
  const JobRecord done = WaitTerminal(store, job->id);
  runner.Stop();
  EXPECT_EQ(done.state, JobState::kCompleted);
  EXPECT_EQ(done.counts, (RequestCounts{1000, 1000, 0}));
  EXPECT_GT(done.compute_seconds, 0);
  EXPECT_EQ(testing::ReadFile(done.output_path), Want(1000));
  EXPECT_EQ(testing::ReadFile(done.error_path), "");
  EXPECT_EQ(testing::ReadFile(done.dead_letter_path), "");
  EXPECT_FALSE(fs::exists(dir_.path() / "parts" / job->id));
  MutexLock lock(&mu_);
  ASSERT_EQ(terminal_.size(), 1u);
  EXPECT_EQ(terminal_[0].state, JobState::kCompleted);
}

TEST_F(JobRunnerTest, OnePercentMalformedLinesGoToTheErrorFile) {
  std::set<int> bad;
  for (int i = 7; i < 2000; i += 100) bad.insert(i);
  SqliteJobStore* raw = nullptr;
  absl::StatusOr<std::unique_ptr<SqliteJobStore>> store =
      SqliteJobStore::Open((dir_.path() / "jobs.db").string());
  ASSERT_TRUE(store.ok()) << store.status();
  raw = store->get();
  JobRunner runner(raw, raw, manager_.get(), RunnerOptions());
  absl::StatusOr<JobRecord> job =
      runner.Submit(Spec("m", testing::MakeCsv(2000, bad), 128));
  ASSERT_TRUE(job.ok()) << job.status();
  runner.Start();
  const JobRecord done = WaitTerminal(*raw, job->id);
  runner.Stop();
  EXPECT_EQ(done.state, JobState::kCompleted);
  EXPECT_EQ(done.counts, (RequestCounts{2000, 1980, 20}));
  EXPECT_EQ(testing::ReadFile(done.output_path), Want(2000, bad));
  const std::vector<std::string> errors =
      Lines(testing::ReadFile(done.error_path));
  ASSERT_EQ(errors.size(), bad.size());
  size_t k = 0;
  for (int i : bad) {
    EXPECT_THAT(errors[k], HasSubstr(absl::StrCat("\"line\":", i + 2, ",")));
    EXPECT_THAT(errors[k], HasSubstr("invalid_record"));
    ++k;
  }
}

TEST_F(JobRunnerTest, DeadLettersReplayAsANewJobOverExactlyThoseRecords) {
  MemoryJobStore store;
  JobRunner runner(&store, &store, manager_.get(), RunnerOptions());
  const std::set<int> poison = {5, 17, 90};
  absl::StatusOr<JobRecord> job =
      runner.Submit(Spec("one", testing::MakeCsv(100, {}, poison), 16));
  ASSERT_TRUE(job.ok()) << job.status();
  runner.Start();
  const JobRecord done = WaitTerminal(store, job->id);
  EXPECT_EQ(done.state, JobState::kCompleted);
  EXPECT_EQ(done.counts, (RequestCounts{100, 97, 3}));
  EXPECT_EQ(testing::ReadFile(done.output_path), Want(100, poison));
  const std::vector<std::string> dead =
      Lines(testing::ReadFile(done.dead_letter_path));
  ASSERT_EQ(dead.size(), 3u);
  EXPECT_THAT(dead[0], HasSubstr("r5,-7777,5.5,-5"));
  EXPECT_THAT(dead[0], HasSubstr("\"attempts\":3"));
  EXPECT_THAT(testing::ReadFile(done.error_path),
              HasSubstr("inference_failed"));

  const std::string replay_out = (dir_.path() / "replay.csv").string();
  absl::StatusOr<JobRecord> replay = runner.SubmitReplay(job->id, replay_out);
  ASSERT_TRUE(replay.ok()) << replay.status();
  EXPECT_EQ(replay->state, JobState::kValidating);
  EXPECT_EQ(
      testing::ReadFile(replay->input_path),
      "id,a,b,c\nr5,-7777,5.5,-5\nr17,-7777,17.5,-17\nr90,-7777,90.5,-90\n");
  const JobRecord replayed = WaitTerminal(store, replay->id);
  runner.Stop();
  // Still poisoned: the replay dead-letters them again, nothing else.
  EXPECT_EQ(replayed.counts, (RequestCounts{3, 0, 3}));
  EXPECT_EQ(runner.SubmitReplay(replay->id, replay_out + "2").ok(), true);
}

TEST_F(JobRunnerTest, AStoppedRunnerIsResumedByAnotherWithIdenticalOutput) {
  absl::StatusOr<std::unique_ptr<SqliteJobStore>> store =
      SqliteJobStore::Open((dir_.path() / "jobs.db").string());
  ASSERT_TRUE(store.ok());
  SqliteJobStore* s = store->get();
  std::string id;
  {
    JobRunner first(s, s, manager_.get(), RunnerOptions());
    absl::StatusOr<JobRecord> job =
        first.Submit(Spec("slow", testing::MakeCsv(400), 20));
    ASSERT_TRUE(job.ok());
    id = job->id;
    first.Start();
    // Let a few chunks finish, then stop in the middle.
    for (int i = 0; i < 2000; ++i) {
      if (s->GetJob(id)->counts.completed >= 60) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    first.Stop();
  }
  JobRecord mid = *s->GetJob(id);
  EXPECT_EQ(mid.state, JobState::kInProgress);
  EXPECT_LT(mid.counts.completed, 400);
  absl::StatusOr<ChunkProgress> progress = s->Progress(id);
  ASSERT_TRUE(progress.ok());
  EXPECT_EQ(progress->leased, 0);  // Stop gave the running chunks back

  JobRunner second(s, s, manager_.get(), RunnerOptions());
  second.Start();
  const JobRecord done = WaitTerminal(*s, id);
  second.Stop();
  EXPECT_EQ(done.state, JobState::kCompleted);
  EXPECT_EQ(done.counts, (RequestCounts{400, 400, 0}));
  EXPECT_EQ(testing::ReadFile(done.output_path), Want(400));
}

TEST_F(JobRunnerTest, RestartUnderTheSameWorkerIdTakesBackItsLeasesAtOnce) {
  MemoryJobStore store;
  JobRunner::Options o = RunnerOptions();
  o.worker_id = "local";
  o.lease = absl::Hours(1);  // a dead holder's lease would block for an hour
  std::string id;
  {
    JobRunner first(&store, &store, manager_.get(), o);
    absl::StatusOr<JobRecord> job =
        first.Submit(Spec("m", testing::MakeCsv(100), 10));
    ASSERT_TRUE(job.ok());
    first.ValidatePending();
    id = job->id;
  }
  // What a process killed mid-chunk leaves behind.
  ASSERT_TRUE(
      store.Lease("local-w0", absl::Now(), absl::Hours(1), id)->has_value());
  ASSERT_TRUE(
      store.Lease("local-w1", absl::Now(), absl::Hours(1), id)->has_value());
  o.reclaim_own_leases = true;
  JobRunner second(&store, &store, manager_.get(), o);
  second.Start();
  const JobRecord done = WaitTerminal(store, id);
  second.Stop();
  EXPECT_EQ(done.state, JobState::kCompleted);
  EXPECT_EQ(testing::ReadFile(done.output_path), Want(100));
  EXPECT_EQ(store.ListChunks(id)->front().attempts, 2);
}

// A process that stopped before its workers validated a job leaves it
// validating; the next runner validates and runs it.
TEST_F(JobRunnerTest, AJobLeftValidatingIsValidatedByTheNextRunner) {
  MemoryJobStore store;
  std::string id;
  {
    JobRunner first(&store, &store, manager_.get(), RunnerOptions());
    absl::StatusOr<JobRecord> job =
        first.Submit(Spec("m", testing::MakeCsv(100), 10));
    ASSERT_TRUE(job.ok());
    id = job->id;
  }
  EXPECT_EQ(store.GetJob(id)->state, JobState::kValidating);
  EXPECT_TRUE(store.ListChunks(id)->empty());
  JobRunner second(&store, &store, manager_.get(), RunnerOptions());
  second.Start();
  const JobRecord done = WaitTerminal(store, id);
  second.Stop();
  EXPECT_EQ(done.state, JobState::kCompleted);
  EXPECT_EQ(done.counts.total, 100);
  EXPECT_EQ(testing::ReadFile(done.output_path), Want(100));
}

TEST_F(JobRunnerTest, CancelKeepsPartialOutputAndAccountsForEveryRecord) {
  MemoryJobStore store;
  JobRunner::Options o = RunnerOptions();
  o.parallel_chunks = 1;
  JobRunner runner(&store, &store, manager_.get(), o);
  absl::StatusOr<JobRecord> job =
      runner.Submit(Spec("slow", testing::MakeCsv(400), 8));
  ASSERT_TRUE(job.ok());
  runner.Start();
  for (int i = 0; i < 2000; ++i) {
    if (store.GetJob(job->id)->counts.completed >= 16) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(runner.Cancel(job->id).ok());
  EXPECT_EQ(store.GetJob(job->id)->state, JobState::kCancelling);
  const JobRecord done = WaitTerminal(store, job->id);
  runner.Stop();
  EXPECT_EQ(done.state, JobState::kCancelled);
  EXPECT_EQ(done.counts.total, 400);
  EXPECT_EQ(done.counts.completed + done.counts.failed, 400);
  EXPECT_GE(done.counts.completed, 16);
  EXPECT_LT(done.counts.completed, 400);
  // The output holds the finished chunks' rows, in order, from the start.
  EXPECT_EQ(testing::ReadFile(done.output_path),
            Want(static_cast<int>(done.counts.completed)));
  const std::vector<std::string> errors =
      Lines(testing::ReadFile(done.error_path));
  EXPECT_EQ(static_cast<int64_t>(errors.size()), done.counts.failed);
  EXPECT_THAT(errors.front(), HasSubstr("\"cancelled\""));
  EXPECT_EQ(runner.Cancel(job->id).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(JobRunnerTest, AJobCancelledBeforeValidationIsCancelledNotFailed) {
  FakeClock clock;
  MemoryJobStore store;
  JobRunner runner(&store, &store, manager_.get(), RunnerOptions(&clock));
  absl::StatusOr<JobRecord> job =
      runner.Submit(Spec("m", testing::MakeCsv(30), 10));
  ASSERT_TRUE(job.ok());
  // Cancelled while still validating (e.g. its input still downloading).
  ASSERT_TRUE(runner.Cancel(job->id).ok());
  runner.Housekeep();
  const JobRecord done = *store.GetJob(job->id);
  EXPECT_EQ(done.state, JobState::kCancelled) << done.error;
  EXPECT_EQ(done.cancelled_at, clock.Now());
  EXPECT_EQ(done.counts, (RequestCounts{0, 0, 0}));
  // The validation that was under way ends without reviving it.
  runner.ValidatePending();
  EXPECT_EQ(store.GetJob(job->id)->state, JobState::kCancelled);
  MutexLock lock(&mu_);
  ASSERT_EQ(terminal_.size(), 1u);
  EXPECT_EQ(terminal_[0].state, JobState::kCancelled);
}

TEST_F(JobRunnerTest, ExpiryWritesBatchExpiredForRecordsThatNeverRan) {
  FakeClock clock;
  MemoryJobStore store;
  JobRunner runner(&store, &store, manager_.get(), RunnerOptions(&clock));
  JobSpec spec = Spec("m", testing::MakeCsv(30), 10);
  spec.options.completion_window = absl::Hours(1);
  absl::StatusOr<JobRecord> job = runner.Submit(spec);
  ASSERT_TRUE(job.ok());
  runner.ValidatePending();
  EXPECT_EQ(job->expires_at, clock.Now() + absl::Hours(1));
  runner.Housekeep();  // inside the window: nothing happens
  EXPECT_EQ(store.GetJob(job->id)->state, JobState::kInProgress);
  clock.Advance(absl::Minutes(59));
  runner.Housekeep();
  EXPECT_EQ(store.GetJob(job->id)->state, JobState::kInProgress);
  clock.Advance(absl::Minutes(1));
  runner.Housekeep();
  const JobRecord done = *store.GetJob(job->id);
  EXPECT_EQ(done.state, JobState::kExpired);
  EXPECT_EQ(done.expired_at, clock.Now());
  EXPECT_EQ(done.counts, (RequestCounts{30, 0, 30}));
  const std::vector<std::string> errors =
      Lines(testing::ReadFile(done.error_path));
  ASSERT_EQ(errors.size(), 30u);
  EXPECT_THAT(errors[0], HasSubstr("batch_expired"));
  EXPECT_THAT(errors[0], HasSubstr("\"line\":2,"));
  EXPECT_EQ(testing::ReadFile(done.output_path), "id,y_0,y_1,y_2\n");
}

TEST_F(JobRunnerTest, RunWindowHoldsTheJobUntilItOpens) {
  FakeClock clock(absl::FromCivil(absl::CivilMinute(2026, 11, 29, 1, 0),
                                  absl::UTCTimeZone()));
  MemoryJobStore store;
  JobRunner runner(&store, &store, manager_.get(), RunnerOptions(&clock));
  JobSpec spec = Spec("m", testing::MakeCsv(50), 10);
  spec.options.run_window = RunWindow{2 * 60, 6 * 60};
  spec.options.time_zone = "UTC";
  absl::StatusOr<JobRecord> job = runner.Submit(spec);
  ASSERT_TRUE(job.ok());
  runner.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  absl::StatusOr<ChunkProgress> before = store.Progress(job->id);
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->done + before->leased, 0);  // 01:00: closed
  clock.Advance(absl::Minutes(75));             // 02:15: open
  // The runner's idle waits are on the fake clock: nudge it until done.
  for (int i = 0; i < 2000 && !IsTerminal(store.GetJob(job->id)->state); ++i) {
    clock.Advance(absl::Milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  runner.Stop();
  const JobRecord done = *store.GetJob(job->id);
  EXPECT_EQ(done.state, JobState::kCompleted);
  // Nothing ran before the window opened at 02:00.
  const absl::Time open = absl::FromCivil(absl::CivilMinute(2026, 11, 29, 2, 0),
                                          absl::UTCTimeZone());
  EXPECT_GE(done.finalizing_at, open);
  absl::StatusOr<std::vector<ChunkRecord>> chunks = store.ListChunks(job->id);
  ASSERT_TRUE(chunks.ok());
  for (const ChunkRecord& c : *chunks) EXPECT_EQ(c.state, ChunkState::kDone);
  EXPECT_EQ(testing::ReadFile(done.output_path), Want(50));
}

TEST_F(JobRunnerTest, UnreadableOrUnmappableInputFailsTheJobUpFront) {
  MemoryJobStore store;
  JobRunner runner(&store, &store, manager_.get(), RunnerOptions());
  JobSpec spec = Spec("m", "id,a,b\nr0,1,2\n", 10);  // 2 features, model has 3
  absl::StatusOr<JobRecord> job = runner.Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state, JobState::kValidating);
  runner.ValidatePending();
  job = store.GetJob(job->id);
  EXPECT_EQ(job->state, JobState::kFailed);
  EXPECT_THAT(job->error, HasSubstr("x"));
  spec.input_path = (dir_.path() / "missing.csv").string();
  job = runner.Submit(spec);
  ASSERT_TRUE(job.ok());
  runner.ValidatePending();
  job = store.GetJob(job->id);
  EXPECT_EQ(job->state, JobState::kFailed);
  EXPECT_THAT(job->error, HasSubstr("missing.csv"));
  {
    MutexLock lock(&mu_);  // each failure reported once, like a webhook
    EXPECT_EQ(terminal_.size(), 2u);
  }
  spec = Spec("no_such_model", testing::MakeCsv(3), 10);
  EXPECT_EQ(runner.Submit(spec).status().code(), absl::StatusCode::kNotFound);
  spec = Spec("m", testing::MakeCsv(3), 0);
  EXPECT_EQ(runner.Submit(spec).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ferry
