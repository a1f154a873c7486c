// SPDX-License-Identifier: Apache-2.0
#include "jobs/file_store.h"

#include <filesystem>
#include <string>

#include "core/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jobs/files.h"
#include "test_util/temp_dir.h"

namespace ferry {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::Field;
using testing::ReadFile;
using testing::WriteFile;

class FileStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = FileStore::Open(tmp_.path() / "files", &clock_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  testing::TempDir tmp_;
  FakeClock clock_;
  std::unique_ptr<FileStore> store_;
};

TEST_F(FileStoreTest, CreateStoresContentAndMetadata) {
  auto f = store_->Create("line 1\nline 2\n", "in.jsonl", kFilePurposeBatch);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(FileStore::IsValidId(f->id)) << f->id;
  EXPECT_EQ(f->bytes, 14);
  EXPECT_EQ(f->created_at, clock_.Now());
  EXPECT_EQ(f->filename, "in.jsonl");
  EXPECT_EQ(f->purpose, "batch");
  EXPECT_EQ(f->path, store_->dir() / f->id);
  EXPECT_EQ(ReadFile(f->path), "line 1\nline 2\n");

  auto got = store_->Get(f->id);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->id, f->id);
  EXPECT_EQ(got->bytes, 14);
  EXPECT_EQ(got->created_at, f->created_at);
  EXPECT_EQ(got->filename, "in.jsonl");
  EXPECT_EQ(got->path, f->path);
  EXPECT_EQ(store_->UploadedIdOf(f->path), f->id);
}

TEST_F(FileStoreTest, SurvivesReopening) {
  auto f = store_->Create("x", "a.jsonl", kFilePurposeBatch);
  ASSERT_TRUE(f.ok());
  auto again = FileStore::Open(tmp_.path() / "files", &clock_);
  ASSERT_TRUE(again.ok());
  auto got = (*again)->Get(f->id);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->filename, "a.jsonl");
}

TEST_F(FileStoreTest, ListIsNewestFirstAndFiltersByPurpose) {
  auto a = store_->Create("a", "a", kFilePurposeBatch);
  clock_.Advance(absl::Seconds(1));
  WriteFile(tmp_.path() / "result.jsonl", "r\n");
  auto b = store_->Register(tmp_.path() / "result.jsonl", "result.jsonl",
                            kFilePurposeBatchOutput, "job-1/output");
  clock_.Advance(absl::Seconds(1));
  auto c = store_->Create("c", "c", kFilePurposeBatch);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  auto all = store_->List();
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_THAT(*all, ElementsAre(Field(&StoredFile::id, c->id),
                                Field(&StoredFile::id, b->id),
                                Field(&StoredFile::id, a->id)));
  auto batch = store_->List(kFilePurposeBatch);
  ASSERT_TRUE(batch.ok());
  EXPECT_THAT(*batch, ElementsAre(Field(&StoredFile::id, c->id),
                                  Field(&StoredFile::id, a->id)));
}

TEST_F(FileStoreTest, RegisterIsIdempotentAndKeepsTheFileWhereItIs) {
  const fs::path out = tmp_.path() / "out.jsonl";
  WriteFile(out, "12345");
  auto first = store_->Register(out, "out.jsonl", kFilePurposeBatchOutput,
                                "batch_1/output");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->id, FileStore::IdForKey("batch_1/output"));
  EXPECT_TRUE(FileStore::IsValidId(first->id));
  EXPECT_EQ(first->bytes, 5);
  EXPECT_EQ(first->path, out);
  EXPECT_FALSE(store_->UploadedIdOf(out).has_value());
  clock_.Advance(absl::Seconds(5));
  auto second =
      store_->Register(out, "other", kFilePurposeBatchOutput, "batch_1/output");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->id, first->id);
  EXPECT_EQ(second->created_at, first->created_at);
  EXPECT_EQ(second->filename, "out.jsonl");
  EXPECT_NE(FileStore::IdForKey("batch_1/errors"), first->id);
  EXPECT_EQ(
      store_
          ->Register(tmp_.path() / "missing", "m", kFilePurposeBatchOutput, "k")
          .status()
          .code(),
      absl::StatusCode::kNotFound);
}

TEST_F(FileStoreTest, DeleteRemovesContentAndMetadata) {
  auto f = store_->Create("x", "a", kFilePurposeBatch);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(store_->Delete(f->id).ok());
  EXPECT_FALSE(fs::exists(f->path));
  EXPECT_EQ(store_->Get(f->id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->Delete(f->id).code(), absl::StatusCode::kNotFound);
  auto all = store_->List();
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->empty());
}

TEST_F(FileStoreTest, MalformedIdsNeverReachTheFileSystem) {
  WriteFile(tmp_.path() / "secret.json", "{}");
  for (const char* id :
       {"", "file-", "../secret", "file-../../secret",
        "file-ABCDEF0123456789abcdef01", "file-0123456789abcdef0123456",
        "file-0123456789abcdef012345678", "x-0123456789abcdef01234567"}) {
    EXPECT_FALSE(FileStore::IsValidId(id)) << id;
    auto got = store_->Get(id);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound) << id;
    EXPECT_EQ(store_->Delete(id).code(), absl::StatusCode::kNotFound) << id;
  }
  EXPECT_TRUE(FileStore::IsValidId("file-0123456789abcdef01234567"));
}

TEST_F(FileStoreTest, ResultsOfATerminalJobInTheDirectoryAreRegistered) {
  JobRecord job;
  job.id = "batch_1";
  job.state = JobState::kInProgress;
  job.output_path = (store_->dir() / "batch_1-output.jsonl").string();
  job.error_path = (store_->dir() / "batch_1-errors.jsonl").string();
  WriteFile(job.output_path, "{}\n");
  WriteFile(job.error_path, "");
  JobResultFiles r = RegisterJobResults(*store_, job);
  EXPECT_EQ(r.output_file_id, "");  // still running
  job.state = JobState::kCompleted;
  r = RegisterJobResults(*store_, job);
  EXPECT_EQ(r.output_file_id, FileStore::IdForKey("batch_1/output"));
  EXPECT_EQ(r.error_file_id, "");  // empty: no error file, as OpenAI
  auto f = store_->Get(r.output_file_id);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->purpose, "batch_output");
  EXPECT_EQ(f->filename, "batch_1-output.jsonl");

  JobRecord native = job;
  native.id = "batch_2";
  native.output_path = (tmp_.path() / "elsewhere.csv").string();
  WriteFile(native.output_path, "id\n");
  EXPECT_EQ(RegisterJobResults(*store_, native).output_file_id, "");
}

TEST_F(FileStoreTest, ADownloadedInputBecomesABatchFileWhenTheJobEnds) {
  JobRecord job;
  job.id = "job_7";
  job.state = JobState::kFailed;
  job.input_path = (store_->dir() / "job_7-input.csv").string();
  job.output_path = (tmp_.path() / "out.csv").string();  // not in the store
  WriteFile(job.input_path, "id,x\n1,2\n");
  RegisterJobResults(*store_, job);
  auto f = store_->Get(FileStore::IdForKey("job_7/input"));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->purpose, "batch");
  EXPECT_EQ(f->filename, "job_7-input.csv");
  // Another job's file of that shape is not this job's download.
  job.id = "job_8";
  RegisterJobResults(*store_, job);
  EXPECT_FALSE(store_->Get(FileStore::IdForKey("job_8/input")).ok());
}

TEST_F(FileStoreTest, OpeningRemovesUploadBodiesAStoppedServerLeft) {
  WriteFile(store_->dir() / ".upload-123-0", "partial");
  WriteFile(store_->dir() / "keep.txt", "mine");
  ASSERT_TRUE(FileStore::Open(tmp_.path() / "files", &clock_).ok());
  EXPECT_FALSE(fs::exists(store_->dir() / ".upload-123-0"));
  EXPECT_TRUE(fs::exists(store_->dir() / "keep.txt"));
}

TEST(MappedFileTest, MapsWholeFilesReadOnly) {
  testing::TempDir tmp;
  WriteFile(tmp.path() / "a", std::string("hello\0world", 11));
  absl::StatusOr<MappedFile> a = MappedFile::Open(tmp.path() / "a");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->data(), absl::string_view("hello\0world", 11));
  MappedFile moved = *std::move(a);
  EXPECT_EQ(moved.data().size(), 11u);
  WriteFile(tmp.path() / "empty", "");
  absl::StatusOr<MappedFile> empty = MappedFile::Open(tmp.path() / "empty");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->data().empty());
  absl::StatusOr<MappedFile> missing = MappedFile::Open(tmp.path() / "nope");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), ::testing::HasSubstr("nope"));
}

TEST(RenameDurablyTest, MovesAWholeFileAndNamesWhatFails) {
  testing::TempDir tmp;
  WriteFile(tmp.path() / "a.download", "id,x\n1,2\n");
  ASSERT_TRUE(RenameDurably(tmp.path() / "a.download", tmp.path() / "a").ok());
  EXPECT_FALSE(fs::exists(tmp.path() / "a.download"));
  absl::StatusOr<MappedFile> a = MappedFile::Open(tmp.path() / "a");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->data(), "id,x\n1,2\n");
  const absl::Status missing =
      RenameDurably(tmp.path() / "gone", tmp.path() / "b");
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound) << missing;
  EXPECT_THAT(missing.message(), ::testing::HasSubstr("gone"));
  // Into a directory that does not exist: the source is removed, the error
  // names the target.
  WriteFile(tmp.path() / "c.download", "x");
  const absl::Status nowhere =
      RenameDurably(tmp.path() / "c.download", tmp.path() / "no" / "c");
  EXPECT_FALSE(nowhere.ok());
  EXPECT_THAT(nowhere.message(), ::testing::HasSubstr("no/c"));
  EXPECT_FALSE(fs::exists(tmp.path() / "c.download"));
}

}  // namespace
}  // namespace ferry
