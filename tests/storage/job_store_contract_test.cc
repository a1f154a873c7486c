// SPDX-License-Identifier: Apache-2.0
// The JobStore/WorkQueue contract, run against every implementation.
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/job_store.h"
#include "storage/job_store_test_util.h"
#include "storage/memory_job_store.h"
#include "storage/sqlite_job_store.h"
#include "test_util/temp_dir.h"

namespace ferry {
namespace {

using ::ferry::testing::Ids;
using ::ferry::testing::kT0;
using ::ferry::testing::MakeChunks;
using ::ferry::testing::MakeJob;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Both interfaces of one store object.
struct Stores {
  std::shared_ptr<void> owner;
  JobStore* jobs;
  WorkQueue* queue;
  WebhookOutbox* outbox;
};

template <typename T>
Stores Wrap(std::unique_ptr<T> store) {
  T* raw = store.get();
  return {std::shared_ptr<T>(std::move(store)), raw, raw, raw};
}

struct Implementation {
  std::string name;
  // Makes a fresh, empty store; `dir` is a directory of its own.
  std::function<Stores(const std::filesystem::path& dir)> make;
};

class JobStoreContractTest : public ::testing::TestWithParam<Implementation> {
 protected:
  void SetUp() override {
    stores_ = GetParam().make(dir_.path());
    ASSERT_NE(stores_.jobs, nullptr);
    jobs_ = stores_.jobs;
    queue_ = stores_.queue;
    outbox_ = stores_.outbox;
  }

  // A job in progress with `n` chunks of 10 records.
  void AddRunningJob(const std::string& id, absl::Time created_at, int n) {
    ASSERT_TRUE(jobs_->CreateJob(MakeJob(id, created_at)).ok());
    ASSERT_TRUE(jobs_->AddChunks(id, MakeChunks(n)).ok());
    ASSERT_TRUE(jobs_
                    ->Transition(id, {JobState::kValidating},
                                 JobState::kInProgress, created_at)
                    .ok());
  }

  // Leases and expects a chunk; returns {job_id, index}.
  std::pair<std::string, int64_t> MustLease(absl::string_view worker,
                                            absl::Time now,
                                            absl::string_view job_id = "") {
    auto leased = queue_->Lease(worker, now, absl::Minutes(1), job_id);
    EXPECT_TRUE(leased.ok()) << leased.status();
    if (!leased.ok() || !leased->has_value()) {
      ADD_FAILURE() << "nothing leased";
      return {"", -1};
    }
    return {(*leased)->job_id, (*leased)->index};
  }

  ChunkRecord Chunk(const std::string& job_id, int64_t index) {
    auto chunks = jobs_->ListChunks(job_id);
    EXPECT_TRUE(chunks.ok()) << chunks.status();
    if (!chunks.ok() || index >= static_cast<int64_t>(chunks->size())) {
      ADD_FAILURE() << "no chunk " << index;
      return {};
    }
    return (*chunks)[index];
  }

  testing::TempDir dir_;
  Stores stores_;
  JobStore* jobs_ = nullptr;
  WorkQueue* queue_ = nullptr;
  WebhookOutbox* outbox_ = nullptr;
};

TEST_P(JobStoreContractTest, CreatedJobReadsBackFieldForField) {
  JobRecord job = MakeJob("job-1", kT0 + absl::Microseconds(123456));
  job.counts = {7, 3, 1};
  job.compute_seconds = 2.5;
  job.error = "earlier error";
  job.in_progress_at = kT0 + absl::Seconds(1);
  job.cancelled_at = kT0 + absl::Seconds(9);
  ASSERT_TRUE(jobs_->CreateJob(job).ok());
  auto got = jobs_->GetJob("job-1");
  ASSERT_TRUE(got.ok()) << got.status();
  testing::ExpectSameJob(*got, job);
}

TEST_P(JobStoreContractTest, SetJobOptionsReplacesOnlyTheOptions) {
  JobRecord job = MakeJob("job-1", kT0);
  job.options_json = R"({"format":"csv"})";
  ASSERT_TRUE(jobs_->CreateJob(job).ok());
  const std::string found = R"({"format":"csv","header":["id","x"]})";
  ASSERT_TRUE(jobs_->SetJobOptions("job-1", found).ok());
  auto got = jobs_->GetJob("job-1");
  ASSERT_TRUE(got.ok()) << got.status();
  job.options_json = found;
  testing::ExpectSameJob(*got, job);
}

TEST_P(JobStoreContractTest, InfiniteTimesRoundTripExactly) {
  JobRecord job = MakeJob("job-1", absl::InfinitePast());
  job.expires_at = absl::InfiniteFuture();
  job.failed_at = absl::InfiniteFuture();
  ASSERT_TRUE(jobs_->CreateJob(job).ok());
  auto got = jobs_->GetJob("job-1");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->created_at, absl::InfinitePast());
  EXPECT_EQ(got->expires_at, absl::InfiniteFuture());
  EXPECT_EQ(got->failed_at, absl::InfiniteFuture());
  EXPECT_EQ(got->in_progress_at, absl::InfinitePast());

  // An infinite lease never expires.
  ASSERT_TRUE(jobs_->AddChunks("job-1", MakeChunks(1)).ok());
  ASSERT_TRUE(jobs_
                  ->Transition("job-1", {JobState::kValidating},
                               JobState::kInProgress, kT0)
                  .ok());
  auto leased = queue_->Lease("w1", kT0, absl::InfiniteDuration());
  ASSERT_TRUE(leased.ok() && leased->has_value());
  EXPECT_EQ((*leased)->lease_expiry, absl::InfiniteFuture());
  EXPECT_EQ(Chunk("job-1", 0).lease_expiry, absl::InfiniteFuture());
  auto again = queue_->Lease("w2", absl::FromUnixSeconds(4'000'000'000),
                             absl::Minutes(1));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->has_value());
}

TEST_P(JobStoreContractTest, DuplicateIdIsAlreadyExists) {
  ASSERT_TRUE(jobs_->CreateJob(MakeJob("job-1", kT0)).ok());
  JobRecord other = MakeJob("job-1", kT0 + absl::Seconds(5));
  other.model = "other";
  absl::Status status = jobs_->CreateJob(other);
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(status.message(), HasSubstr("job-1"));
  EXPECT_EQ(jobs_->GetJob("job-1")->model, "resnet");
}

TEST_P(JobStoreContractTest, EmptyJobIdIsInvalidArgument) {
  EXPECT_EQ(jobs_->CreateJob(MakeJob("", kT0)).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(JobStoreContractTest, UnknownJobIsNotFoundEverywhere) {
  auto expect_not_found = [](const absl::Status& status) {
    EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
    EXPECT_THAT(status.message(), HasSubstr("nope"));
  };
  expect_not_found(jobs_->GetJob("nope").status());
  expect_not_found(jobs_->ListJobs(10, "nope").status());
  expect_not_found(jobs_->Transition("nope", {JobState::kValidating},
                                     JobState::kInProgress, kT0));
  expect_not_found(jobs_->AddChunks("nope", MakeChunks(2)));
  expect_not_found(jobs_->SetJobOptions("nope", "{}"));
  expect_not_found(jobs_->ListChunks("nope").status());
  expect_not_found(queue_->Renew("nope", 0, "w1", kT0));
  expect_not_found(queue_->Complete("nope", 0, "w1", {}));
  expect_not_found(queue_->Release("nope", 0, "w1"));
  expect_not_found(queue_->Progress("nope").status());
}

TEST_P(JobStoreContractTest, UnknownChunkIsNotFound) {
  AddRunningJob("job-1", kT0, 2);
  for (int64_t index : {int64_t{-1}, int64_t{2}, int64_t{99}}) {
    absl::Status status = queue_->Complete("job-1", index, "w1", {});
    EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
    EXPECT_THAT(status.message(),
                AllOf(HasSubstr("job-1"), HasSubstr(absl::StrCat(index))));
    EXPECT_EQ(queue_->Renew("job-1", index, "w1", kT0).code(),
              absl::StatusCode::kNotFound);
    EXPECT_EQ(queue_->Release("job-1", index, "w1").code(),
              absl::StatusCode::kNotFound);
  }
}

TEST_P(JobStoreContractTest, ListJobsPagesNewestFirstWithTiesById) {
  // c and d share a creation time; ties go by id, in the same direction.
  ASSERT_TRUE(jobs_->CreateJob(MakeJob("a", kT0 + absl::Seconds(1))).ok());
  ASSERT_TRUE(jobs_->CreateJob(MakeJob("e", kT0 + absl::Seconds(2))).ok());
  ASSERT_TRUE(jobs_->CreateJob(MakeJob("c", kT0 + absl::Seconds(3))).ok());
  ASSERT_TRUE(jobs_->CreateJob(MakeJob("d", kT0 + absl::Seconds(3))).ok());
  ASSERT_TRUE(jobs_->CreateJob(MakeJob("b", kT0 + absl::Seconds(4))).ok());

  auto all = jobs_->ListJobs(100);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_THAT(Ids(*all), ElementsAre("b", "d", "c", "e", "a"));

  std::vector<std::string> paged;
  std::string after;
  int pages = 0;
  while (true) {
    auto page = jobs_->ListJobs(2, after);
    ASSERT_TRUE(page.ok()) << page.status();
    if (page->empty()) break;
    EXPECT_LE(page->size(), 2u);
    for (const JobRecord& j : *page) paged.push_back(j.id);
    after = page->back().id;
    ++pages;
  }
  EXPECT_EQ(pages, 3);
  EXPECT_THAT(paged, ElementsAre("b", "d", "c", "e", "a"));

  EXPECT_THAT(Ids(*jobs_->ListJobs(1, "d")), ElementsAre("c"));
  EXPECT_TRUE(jobs_->ListJobs(0)->empty());
  EXPECT_EQ(jobs_->ListJobs(-1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(JobStoreContractTest, ListJobsInStatesIsOldestFirst) {
  ASSERT_TRUE(jobs_
                  ->CreateJob(MakeJob("new", kT0 + absl::Seconds(3),
                                      JobState::kInProgress))
                  .ok());
  ASSERT_TRUE(jobs_
                  ->CreateJob(MakeJob("done", kT0 + absl::Seconds(2),
                                      JobState::kCompleted))
                  .ok());
  ASSERT_TRUE(jobs_
                  ->CreateJob(MakeJob("old", kT0 + absl::Seconds(1),
                                      JobState::kCancelling))
                  .ok());
  ASSERT_TRUE(jobs_->CreateJob(MakeJob("mid", kT0 + absl::Seconds(2))).ok());

  auto active = jobs_->ListJobsInStates(
      {JobState::kInProgress, JobState::kCancelling, JobState::kValidating});
  ASSERT_TRUE(active.ok()) << active.status();
  EXPECT_THAT(Ids(*active), ElementsAre("old", "mid", "new"));
  EXPECT_THAT(Ids(*jobs_->ListJobsInStates({JobState::kCompleted})),
              ElementsAre("done"));
  EXPECT_TRUE(jobs_->ListJobsInStates({JobState::kFailed})->empty());
  EXPECT_TRUE(jobs_->ListJobsInStates({})->empty());
}

TEST_P(JobStoreContractTest, TransitionMovesStampsAndStoresError) {
  ASSERT_TRUE(jobs_->CreateJob(MakeJob("job-1", kT0)).ok());
  const absl::Time t1 = kT0 + absl::Seconds(10);
  ASSERT_TRUE(jobs_
                  ->Transition("job-1",
                               {JobState::kFinalizing, JobState::kValidating},
                               JobState::kInProgress, t1)
                  .ok());
  auto job = jobs_->GetJob("job-1");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state, JobState::kInProgress);
  EXPECT_EQ(job->in_progress_at, t1);
  EXPECT_EQ(job->failed_at, absl::InfinitePast());
  EXPECT_EQ(job->error, "");

  const absl::Time t2 = kT0 + absl::Seconds(20);
  ASSERT_TRUE(jobs_
                  ->Transition("job-1", {JobState::kInProgress},
                               JobState::kFailed, t2, "model went away")
                  .ok());
  job = jobs_->GetJob("job-1");
  EXPECT_EQ(job->state, JobState::kFailed);
  EXPECT_EQ(job->in_progress_at, t1);
  EXPECT_EQ(job->failed_at, t2);
  EXPECT_EQ(job->error, "model went away");
}

TEST_P(JobStoreContractTest, TransitionFromOtherStateIsFailedPrecondition) {
  ASSERT_TRUE(
      jobs_->CreateJob(MakeJob("job-1", kT0, JobState::kCompleted)).ok());
  absl::Status status = jobs_->Transition(
      "job-1", {JobState::kInProgress, JobState::kValidating},
      JobState::kCancelling, kT0 + absl::Seconds(1), "ignored");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("job-1"), HasSubstr("completed"),
                    HasSubstr("cancelling")));
  auto job = jobs_->GetJob("job-1");
  EXPECT_EQ(job->state, JobState::kCompleted);
  EXPECT_EQ(job->cancelling_at, absl::InfinitePast());
  EXPECT_EQ(job->error, "");
  EXPECT_EQ(jobs_->Transition("job-1", {}, JobState::kFailed, kT0).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_P(JobStoreContractTest, AddChunksStoresThemAndSetsTotal) {
  ASSERT_TRUE(jobs_->CreateJob(MakeJob("job-1", kT0)).ok());
  std::vector<ChunkRecord> given = MakeChunks(3, 7);
  given[2].record_count = 4;
  // Lease state in the input is not the caller's to set.
  given[1].state = ChunkState::kDone;
  given[1].attempts = 5;
  given[1].worker = "someone";
  ASSERT_TRUE(jobs_->AddChunks("job-1", given).ok());
  EXPECT_EQ(jobs_->GetJob("job-1")->counts,
            (RequestCounts{.total = 18, .completed = 0, .failed = 0}));

  auto chunks = jobs_->ListChunks("job-1");
  ASSERT_TRUE(chunks.ok()) << chunks.status();
  ASSERT_EQ(chunks->size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const ChunkRecord& c = (*chunks)[i];
    EXPECT_EQ(c.job_id, "job-1");
    EXPECT_EQ(c.index, i);
    EXPECT_EQ(c.begin_offset, given[i].begin_offset);
    EXPECT_EQ(c.end_offset, given[i].end_offset);
    EXPECT_EQ(c.first_record, given[i].first_record);
    EXPECT_EQ(c.first_line, given[i].first_line);
    EXPECT_EQ(c.record_count, given[i].record_count);
    EXPECT_EQ(c.state, ChunkState::kPending);
    EXPECT_EQ(c.worker, "");
    EXPECT_EQ(c.attempts, 0);
    EXPECT_EQ(c.lease_expiry, absl::InfinitePast());
  }
  EXPECT_EQ(queue_->Progress("job-1")->pending, 3);
}

TEST_P(JobStoreContractTest, AddChunksTwiceIsFailedPrecondition) {
  ASSERT_TRUE(jobs_->CreateJob(MakeJob("job-1", kT0)).ok());
  ASSERT_TRUE(jobs_->AddChunks("job-1", MakeChunks(3)).ok());
  absl::Status status = jobs_->AddChunks("job-1", MakeChunks(5));
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("job-1"), HasSubstr("3")));
  EXPECT_EQ(jobs_->ListChunks("job-1")->size(), 3u);
  EXPECT_EQ(jobs_->GetJob("job-1")->counts.total, 30);
}

TEST_P(JobStoreContractTest, AddChunksWithBadIndexesIsInvalidArgument) {
  ASSERT_TRUE(jobs_->CreateJob(MakeJob("job-1", kT0)).ok());
  std::vector<ChunkRecord> gap = MakeChunks(3);
  gap[2].index = 3;
  std::vector<ChunkRecord> from_one = MakeChunks(2);
  from_one[0].index = 1;
  from_one[1].index = 2;
  std::vector<ChunkRecord> swapped = MakeChunks(2);
  std::swap(swapped[0], swapped[1]);
  std::vector<ChunkRecord> foreign = MakeChunks(2);
  foreign[1].job_id = "job-2";
  for (const auto& bad : {gap, from_one, swapped, foreign}) {
    absl::Status status = jobs_->AddChunks("job-1", bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(status.message(), HasSubstr("job-1"));
  }
  // Nothing of the refused calls was stored.
  EXPECT_TRUE(jobs_->ListChunks("job-1")->empty());
  EXPECT_EQ(jobs_->GetJob("job-1")->counts.total, 0);
  EXPECT_TRUE(jobs_->AddChunks("job-1", MakeChunks(2)).ok());
}

TEST_P(JobStoreContractTest, LeaseTakesLowestIndexOfOldestJobFirst) {
  // "b" is older than "a": creation time decides, not the id.
  AddRunningJob("a", kT0 + absl::Seconds(2), 2);
  AddRunningJob("b", kT0 + absl::Seconds(1), 2);
  const absl::Time now = kT0 + absl::Minutes(1);
  using P = std::pair<std::string, int64_t>;
  EXPECT_EQ(MustLease("w1", now), P("b", 0));
  EXPECT_EQ(MustLease("w2", now), P("b", 1));
  EXPECT_EQ(MustLease("w1", now), P("a", 0));
  EXPECT_EQ(MustLease("w1", now), P("a", 1));
  auto none = queue_->Lease("w1", now, absl::Minutes(1));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());
}

TEST_P(JobStoreContractTest, LeaseReturnsTheLeasedChunk) {
  AddRunningJob("job-1", kT0, 1);
  const absl::Time now = kT0 + absl::Seconds(30);
  auto leased = queue_->Lease("w1", now, absl::Seconds(45));
  ASSERT_TRUE(leased.ok() && leased->has_value());
  const ChunkRecord& c = **leased;
  EXPECT_EQ(c.job_id, "job-1");
  EXPECT_EQ(c.index, 0);
  EXPECT_EQ(c.state, ChunkState::kLeased);
  EXPECT_EQ(c.worker, "w1");
  EXPECT_EQ(c.lease_expiry, now + absl::Seconds(45));
  EXPECT_EQ(c.attempts, 1);
  EXPECT_EQ(c.record_count, 10);
  EXPECT_EQ(c.first_line, 2);
  EXPECT_EQ(c.end_offset, 100);
  ChunkRecord stored = Chunk("job-1", 0);
  EXPECT_EQ(stored.state, ChunkState::kLeased);
  EXPECT_EQ(stored.worker, "w1");
  EXPECT_EQ(stored.lease_expiry, now + absl::Seconds(45));
  EXPECT_EQ(stored.attempts, 1);
}

TEST_P(JobStoreContractTest, LeaseOnlyFromInProgressJobs) {
  for (JobState state :
       {JobState::kValidating, JobState::kFinalizing, JobState::kCancelling,
        JobState::kCompleted, JobState::kFailed}) {
    std::string id(JobStateName(state));
    ASSERT_TRUE(jobs_->CreateJob(MakeJob(id, kT0, state)).ok());
    ASSERT_TRUE(jobs_->AddChunks(id, MakeChunks(2)).ok());
  }
  auto none = queue_->Lease("w1", kT0, absl::Minutes(1));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());

  ASSERT_TRUE(jobs_
                  ->Transition("validating", {JobState::kValidating},
                               JobState::kInProgress, kT0)
                  .ok());
  EXPECT_EQ(MustLease("w1", kT0).first, "validating");
  // A job leaving in_progress stops handing out its chunks.
  ASSERT_TRUE(jobs_
                  ->Transition("validating", {JobState::kInProgress},
                               JobState::kCancelling, kT0)
                  .ok());
  none = queue_->Lease("w1", kT0, absl::Minutes(1));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST_P(JobStoreContractTest, LeaseWithJobFilterTakesOnlyThatJob) {
  AddRunningJob("old", kT0, 1);
  AddRunningJob("new", kT0 + absl::Seconds(1), 2);
  using P = std::pair<std::string, int64_t>;
  EXPECT_EQ(MustLease("w1", kT0, "new"), P("new", 0));
  EXPECT_EQ(MustLease("w1", kT0, "new"), P("new", 1));
  auto none = queue_->Lease("w1", kT0, absl::Minutes(1), "new");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  none = queue_->Lease("w1", kT0, absl::Minutes(1), "unknown");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());
  EXPECT_EQ(MustLease("w1", kT0), P("old", 0));
}

TEST_P(JobStoreContractTest, NothingAvailableIsNullopt) {
  auto none = queue_->Lease("w1", kT0, absl::Minutes(1));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());

  AddRunningJob("job-1", kT0, 2);
  MustLease("w1", kT0);
  MustLease("w1", kT0);
  // Both leases run until kT0 + 1 min.
  none = queue_->Lease("w2", kT0 + absl::Seconds(59), absl::Minutes(1));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST_P(JobStoreContractTest, EmptyWorkerIsInvalidArgument) {
  AddRunningJob("job-1", kT0, 1);
  EXPECT_EQ(queue_->Lease("", kT0, absl::Minutes(1)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(JobStoreContractTest, ExpiredLeaseIsTakenOverByAnotherWorker) {
  AddRunningJob("job-1", kT0, 2);
  ASSERT_EQ(MustLease("w1", kT0).second, 0);
  // At exactly the expiry the lease is over (lease_expiry <= now).
  const absl::Time later = kT0 + absl::Minutes(1);
  auto taken = queue_->Lease("w2", later, absl::Minutes(5));
  ASSERT_TRUE(taken.ok() && taken->has_value());
  EXPECT_EQ((*taken)->index, 0);  // lower than the pending chunk 1
  EXPECT_EQ((*taken)->worker, "w2");
  EXPECT_EQ((*taken)->attempts, 2);
  EXPECT_EQ((*taken)->lease_expiry, later + absl::Minutes(5));

  // The first worker lost it: none of its calls count.
  for (const absl::Status& status :
       {queue_->Renew("job-1", 0, "w1", later + absl::Hours(1)),
        queue_->Complete("job-1", 0, "w1", {10, 0, 1.0}),
        queue_->Release("job-1", 0, "w1")}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
    EXPECT_THAT(status.message(), AllOf(HasSubstr("job-1"), HasSubstr("w1"),
                                        HasSubstr("w2"), HasSubstr("leased")));
  }
  ASSERT_TRUE(queue_->Complete("job-1", 0, "w2", {10, 0, 1.0}).ok());
  EXPECT_EQ(jobs_->GetJob("job-1")->counts,
            (RequestCounts{.total = 20, .completed = 10, .failed = 0}));
}

TEST_P(JobStoreContractTest, RenewByHolderKeepsTheChunk) {
  AddRunningJob("job-1", kT0, 1);
  MustLease("w1", kT0);
  ASSERT_TRUE(queue_->Renew("job-1", 0, "w1", kT0 + absl::Minutes(10)).ok());
  EXPECT_EQ(Chunk("job-1", 0).lease_expiry, kT0 + absl::Minutes(10));
  auto none = queue_->Lease("w2", kT0 + absl::Minutes(5), absl::Minutes(1));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  // Expired but not taken over: still the holder's to renew.
  ASSERT_TRUE(queue_->Renew("job-1", 0, "w1", kT0 + absl::Minutes(30)).ok());
  EXPECT_EQ(Chunk("job-1", 0).lease_expiry, kT0 + absl::Minutes(30));

  absl::Status status =
      queue_->Renew("job-1", 0, "w2", kT0 + absl::Minutes(40));
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Chunk("job-1", 0).lease_expiry, kT0 + absl::Minutes(30));
  EXPECT_EQ(Chunk("job-1", 0).worker, "w1");
}

TEST_P(JobStoreContractTest, CompleteCountsExactlyOnce) {
  AddRunningJob("job-1", kT0, 3);
  MustLease("w1", kT0);
  MustLease("w2", kT0);
  ASSERT_TRUE(queue_->Complete("job-1", 0, "w1", {8, 2, 1.5}).ok());
  ASSERT_TRUE(queue_->Complete("job-1", 1, "w2", {10, 0, 0.25}).ok());

  auto job = jobs_->GetJob("job-1");
  EXPECT_EQ(job->counts,
            (RequestCounts{.total = 30, .completed = 18, .failed = 2}));
  EXPECT_DOUBLE_EQ(job->compute_seconds, 1.75);
  ChunkRecord c = Chunk("job-1", 0);
  EXPECT_EQ(c.state, ChunkState::kDone);
  EXPECT_EQ(c.worker, "w1");
  EXPECT_EQ(c.completed, 8);
  EXPECT_EQ(c.failed, 2);
  EXPECT_DOUBLE_EQ(c.compute_seconds, 1.5);

  // Again, by the same worker or another: refused, counts unchanged.
  for (const absl::Status& status :
       {queue_->Complete("job-1", 0, "w1", {8, 2, 1.5}),
        queue_->Complete("job-1", 0, "w2", {8, 2, 1.5}),
        queue_->Renew("job-1", 0, "w1", kT0 + absl::Hours(1)),
        queue_->Release("job-1", 0, "w1")}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
    EXPECT_THAT(status.message(), AllOf(HasSubstr("chunk 0"),
                                        HasSubstr("job-1"), HasSubstr("done")));
  }
  // A pending chunk was never leased: nobody holds it.
  absl::Status pending = queue_->Complete("job-1", 2, "w1", {10, 0, 0});
  EXPECT_EQ(pending.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(pending.message(), HasSubstr("pending"));

  job = jobs_->GetJob("job-1");
  EXPECT_EQ(job->counts,
            (RequestCounts{.total = 30, .completed = 18, .failed = 2}));
  EXPECT_DOUBLE_EQ(job->compute_seconds, 1.75);
  // A done chunk is not leased again.
  using P = std::pair<std::string, int64_t>;
  EXPECT_EQ(MustLease("w3", kT0 + absl::Hours(1)), P("job-1", 2));
}

TEST_P(JobStoreContractTest, NegativeResultIsInvalidArgument) {
  AddRunningJob("job-1", kT0, 1);
  MustLease("w1", kT0);
  EXPECT_EQ(queue_->Complete("job-1", 0, "w1", {-1, 0, 0}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Chunk("job-1", 0).state, ChunkState::kLeased);
}

TEST_P(JobStoreContractTest, ReleaseReturnsTheChunkWithoutCountingTheAttempt) {
  AddRunningJob("job-1", kT0, 2);
  MustLease("w1", kT0);
  // Expire and re-lease once, so the attempt count is 2 before the release.
  auto taken = queue_->Lease("w2", kT0 + absl::Minutes(2), absl::Minutes(1));
  ASSERT_TRUE(taken.ok() && taken->has_value());
  ASSERT_EQ((*taken)->attempts, 2);
  ASSERT_TRUE(queue_->Release("job-1", 0, "w2").ok());
  ChunkRecord c = Chunk("job-1", 0);
  EXPECT_EQ(c.state, ChunkState::kPending);
  EXPECT_EQ(c.worker, "");
  EXPECT_EQ(c.attempts, 1);
  EXPECT_EQ(queue_->Release("job-1", 0, "w2").code(),
            absl::StatusCode::kFailedPrecondition);

  // Pending again: the next lease takes it, well before any expiry.
  auto again = queue_->Lease("w3", kT0 + absl::Minutes(2), absl::Minutes(1));
  ASSERT_TRUE(again.ok() && again->has_value());
  EXPECT_EQ((*again)->index, 0);
  EXPECT_EQ((*again)->attempts, 2);
}

TEST_P(JobStoreContractTest, ReclaimLeasesFreesOnlyThatWorkersChunks) {
  AddRunningJob("job-1", kT0, 3);
  AddRunningJob("job-2", kT0 + absl::Seconds(1), 1);
  MustLease("local-w0", kT0);  // job-1 chunk 0
  MustLease("local-w1", kT0);  // job-1 chunk 1
  MustLease("other-w0", kT0);  // job-1 chunk 2
  MustLease("local-w0", kT0);  // job-2 chunk 0
  absl::StatusOr<int64_t> n = queue_->ReclaimLeases("local");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 3);
  EXPECT_EQ(Chunk("job-1", 0).state, ChunkState::kPending);
  EXPECT_EQ(Chunk("job-1", 0).attempts, 1);  // the lost attempt counts
  EXPECT_EQ(Chunk("job-1", 1).state, ChunkState::kPending);
  EXPECT_EQ(Chunk("job-1", 2).state, ChunkState::kLeased);
  EXPECT_EQ(Chunk("job-2", 0).state, ChunkState::kPending);
  // Their leases have not expired, yet they lease again at once.
  auto again = queue_->Lease("local-w0", kT0, absl::Minutes(1), "job-1");
  ASSERT_TRUE(again.ok() && again->has_value());
  EXPECT_EQ((*again)->index, 0);
  EXPECT_EQ((*again)->attempts, 2);
  EXPECT_EQ(*queue_->ReclaimLeases("nobody"), 0);
}

TEST_P(JobStoreContractTest,
       FreezeChunksRevokesLeasesSoLateWorkersCannotCount) {
  AddRunningJob("job-1", kT0, 3);
  MustLease("w1", kT0);  // chunk 0
  MustLease("w2", kT0);  // chunk 1
  ASSERT_TRUE(queue_->Complete("job-1", 0, "w1", {10, 0, 1.0}).ok());
  ASSERT_TRUE(jobs_
                  ->Transition("job-1", {JobState::kInProgress},
                               JobState::kFinalizing, kT0)
                  .ok());
  absl::StatusOr<std::vector<ChunkRecord>> chunks =
      queue_->FreezeChunks("job-1");
  ASSERT_TRUE(chunks.ok()) << chunks.status();
  ASSERT_EQ(chunks->size(), 3u);
  EXPECT_EQ((*chunks)[0].state, ChunkState::kDone);
  EXPECT_EQ((*chunks)[1].state, ChunkState::kPending);
  EXPECT_EQ((*chunks)[2].state, ChunkState::kPending);
  // The worker of chunk 1 finishes late: its completion does not count.
  EXPECT_EQ(queue_->Complete("job-1", 1, "w2", {10, 0, 1.0}).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(queue_->Renew("job-1", 1, "w2", kT0 + absl::Hours(1)).code(),
            absl::StatusCode::kFailedPrecondition);
  // Nothing leases from a job that is not in_progress.
  EXPECT_FALSE(
      queue_->Lease("w3", kT0, absl::Minutes(1), "job-1")->has_value());
  EXPECT_EQ(jobs_->GetJob("job-1")->counts.completed, 10);
  EXPECT_EQ(queue_->FreezeChunks("nope").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_P(JobStoreContractTest, TransitionAddsFailedInTheSameStep) {
  AddRunningJob("job-1", kT0, 2);
  ASSERT_TRUE(jobs_
                  ->Transition("job-1", {JobState::kInProgress},
                               JobState::kExpired, kT0, "", 7)
                  .ok());
  EXPECT_EQ(jobs_->GetJob("job-1")->counts.failed, 7);
  // Refused transitions add nothing.
  EXPECT_EQ(jobs_
                ->Transition("job-1", {JobState::kInProgress},
                             JobState::kExpired, kT0, "", 7)
                .code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(jobs_->GetJob("job-1")->counts.failed, 7);
  EXPECT_EQ(jobs_
                ->Transition("job-1", {JobState::kExpired}, JobState::kFailed,
                             kT0, "", -1)
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(JobStoreContractTest, ProgressCountsChunksByState) {
  AddRunningJob("job-1", kT0, 5);
  AddRunningJob("job-2", kT0 + absl::Seconds(1), 1);
  EXPECT_EQ(queue_->Progress("job-1")->pending, 5);
  MustLease("w1", kT0);
  MustLease("w1", kT0);
  MustLease("w1", kT0);
  ASSERT_TRUE(queue_->Complete("job-1", 1, "w1", {10, 0, 0}).ok());
  auto p = queue_->Progress("job-1");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->pending, 2);
  EXPECT_EQ(p->leased, 2);
  EXPECT_EQ(p->done, 1);
  p = queue_->Progress("job-2");
  EXPECT_EQ(p->pending, 1);
  EXPECT_EQ(p->leased, 0);
  EXPECT_EQ(p->done, 0);

  ASSERT_TRUE(jobs_->CreateJob(MakeJob("empty", kT0)).ok());
  p = queue_->Progress("empty");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->pending + p->leased + p->done, 0);
}

TEST_P(JobStoreContractTest, ConcurrentWorkersCompleteEachChunkOnce) {
  constexpr int kChunks = 200;
  constexpr int kThreads = 4;
  AddRunningJob("job-1", kT0, kChunks);
  std::vector<std::vector<int64_t>> done(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t, &done] {
      const std::string worker = absl::StrCat("w", t);
      while (true) {
        auto leased = queue_->Lease(worker, kT0, absl::Hours(1));
        if (!leased.ok()) {
          ADD_FAILURE() << leased.status();
          return;
        }
        if (!leased->has_value()) return;
        int64_t index = (*leased)->index;
        absl::Status status =
            queue_->Complete("job-1", index, worker, {9, 1, 0.5});
        if (!status.ok()) {
          ADD_FAILURE() << status;
          return;
        }
        done[t].push_back(index);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::set<int64_t> all;
  size_t total = 0;
  for (const auto& d : done) {
    all.insert(d.begin(), d.end());
    total += d.size();
  }
  EXPECT_EQ(total, static_cast<size_t>(kChunks));
  EXPECT_EQ(all.size(), static_cast<size_t>(kChunks));
  auto job = jobs_->GetJob("job-1");
  EXPECT_EQ(job->counts, (RequestCounts{.total = kChunks * 10,
                                        .completed = kChunks * 9,
                                        .failed = kChunks}));
  EXPECT_DOUBLE_EQ(job->compute_seconds, kChunks * 0.5);
  auto chunks = jobs_->ListChunks("job-1");
  ASSERT_TRUE(chunks.ok()) << chunks.status();
  for (const ChunkRecord& c : *chunks) {
    EXPECT_EQ(c.attempts, 1) << "chunk " << c.index;
  }
}

WebhookRecord MakeWebhook(const std::string& job_id, absl::Time next) {
  WebhookRecord w;
  w.job_id = job_id;
  w.url = "http://127.0.0.1:9/hook";
  w.body = absl::StrCat(R"({"id":"evt_)", job_id, R"(","data":"ü\n"})");
  w.created_at = kT0;
  w.next_attempt_at = next;
  return w;
}

TEST_P(JobStoreContractTest, WebhookReadsBackFieldForField) {
  WebhookRecord w = MakeWebhook("job-1", kT0 + absl::Microseconds(7));
  w.attempts = 2;
  w.last_error = "HTTP 503";
  ASSERT_TRUE(outbox_->AddWebhook(w).ok());
  auto got = outbox_->GetWebhook("job-1");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->job_id, w.job_id);
  EXPECT_EQ(got->url, w.url);
  EXPECT_EQ(got->body, w.body);
  EXPECT_EQ(got->state, WebhookState::kPending);
  EXPECT_EQ(got->attempts, 2);
  EXPECT_EQ(got->created_at, w.created_at);
  EXPECT_EQ(got->next_attempt_at, w.next_attempt_at);
  EXPECT_EQ(got->last_error, "HTTP 503");
}

TEST_P(JobStoreContractTest, OneWebhookPerJob) {
  ASSERT_TRUE(outbox_->AddWebhook(MakeWebhook("job-1", kT0)).ok());
  EXPECT_EQ(outbox_->AddWebhook(MakeWebhook("job-1", kT0)).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(outbox_->GetWebhook("job-2").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(outbox_->UpdateWebhook(MakeWebhook("job-2", kT0)).code(),
            absl::StatusCode::kNotFound);
}

TEST_P(JobStoreContractTest, PendingWebhooksComeEarliestFirstAndLeaveWhenDone) {
  ASSERT_TRUE(
      outbox_->AddWebhook(MakeWebhook("b", kT0 + absl::Seconds(2))).ok());
  ASSERT_TRUE(
      outbox_->AddWebhook(MakeWebhook("a", kT0 + absl::Seconds(2))).ok());
  ASSERT_TRUE(
      outbox_->AddWebhook(MakeWebhook("c", kT0 + absl::Seconds(1))).ok());
  auto ids = [&](int limit) {
    std::vector<std::string> out;
    auto pending = outbox_->PendingWebhooks(limit);
    EXPECT_TRUE(pending.ok()) << pending.status();
    if (pending.ok()) {
      for (const WebhookRecord& w : *pending) out.push_back(w.job_id);
    }
    return out;
  };
  EXPECT_THAT(ids(10), ElementsAre("c", "a", "b"));
  EXPECT_THAT(ids(2), ElementsAre("c", "a"));
  EXPECT_EQ(outbox_->PendingWebhooks(-1).status().code(),
            absl::StatusCode::kInvalidArgument);

  // A failed attempt moves it back; delivered and given-up ones leave.
  WebhookRecord c = *outbox_->GetWebhook("c");
  c.attempts = 1;
  c.next_attempt_at = kT0 + absl::Seconds(5);
  c.last_error = "connection refused";
  ASSERT_TRUE(outbox_->UpdateWebhook(c).ok());
  EXPECT_THAT(ids(10), ElementsAre("a", "b", "c"));
  WebhookRecord a = *outbox_->GetWebhook("a");
  a.state = WebhookState::kDelivered;
  a.attempts = 1;
  ASSERT_TRUE(outbox_->UpdateWebhook(a).ok());
  WebhookRecord b = *outbox_->GetWebhook("b");
  b.state = WebhookState::kGaveUp;
  ASSERT_TRUE(outbox_->UpdateWebhook(b).ok());
  EXPECT_THAT(ids(10), ElementsAre("c"));
  EXPECT_EQ(outbox_->GetWebhook("a")->state, WebhookState::kDelivered);
  EXPECT_EQ(outbox_->GetWebhook("b")->state, WebhookState::kGaveUp);
  EXPECT_EQ(outbox_->GetWebhook("c")->last_error, "connection refused");
  // The url and body never change.
  c.body = "changed";
  ASSERT_TRUE(outbox_->UpdateWebhook(c).ok());
  EXPECT_NE(outbox_->GetWebhook("c")->body, "changed");
}

INSTANTIATE_TEST_SUITE_P(
    AllStores, JobStoreContractTest,
    ::testing::Values(
        Implementation{"Memory",
                       [](const std::filesystem::path&) {
                         return Wrap(std::make_unique<MemoryJobStore>());
                       }},
        Implementation{"Sqlite",
                       [](const std::filesystem::path& dir) -> Stores {
                         auto store =
                             SqliteJobStore::Open((dir / "jobs.db").string());
                         EXPECT_TRUE(store.ok()) << store.status();
                         if (!store.ok())
                           return {nullptr, nullptr, nullptr, nullptr};
                         return Wrap(std::move(*store));
                       }}),
    [](const ::testing::TestParamInfo<Implementation>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace ferry
