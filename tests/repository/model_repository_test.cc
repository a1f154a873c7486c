// SPDX-License-Identifier: Apache-2.0
#include "repository/model_repository.h"

#include "engines/identity/identity_engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util/temp_dir.h"

namespace ferry {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr char kIdentityConfig[] = R"(
  platform: "identity"
  max_batch_size: 8
  input [ { name: "x" data_type: TYPE_FP32 dims: [ 2 ] } ]
  output [ { name: "y" data_type: TYPE_FP32 dims: [ 2 ] } ]
)";

class ModelRepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(RegisterIdentityEngine(&engines_).ok()); }

  void AddModel(const std::string& name, const std::string& config,
                std::vector<int> versions = {1}) {
    if (!config.empty())
      testing::WriteFile(dir_.path() / name / "config.pbtxt", config);
    for (int v : versions)
      fs::create_directories(dir_.path() / name / std::to_string(v));
  }

  ModelStatus StatusOf(ModelRepository& repo, const std::string& name) {
    auto s = repo.Status(name);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *s : ModelStatus{};
  }

  EngineRegistry engines_;
  testing::TempDir dir_;
};

TEST_F(ModelRepositoryTest, BrokenModelsSitUnavailableBesideWorkingOnes) {
  AddModel("good", kIdentityConfig);
  AddModel("bad_type", R"(platform: "identity" max_batch_size: 8
      input [ { name: "x" data_type: TYPE_FOO dims: [ 2 ] } ]
      output [ { name: "y" data_type: TYPE_FP32 dims: [ 2 ] } ])");
  AddModel("bad_dims", R"(platform: "identity" max_batch_size: 8
      input [ { name: "x" data_type: TYPE_FP32 dims: [ 2 ] } ]
      output [ { name: "y" data_type: TYPE_FP32 dims: [ 3 ] } ])");
  AddModel("no_versions", kIdentityConfig, {});
  AddModel("unknown_platform", R"(platform: "tensorrt_plan" max_batch_size: 1
      input [ { name: "x" data_type: TYPE_FP32 dims: [ 2 ] } ]
      output [ { name: "y" data_type: TYPE_FP32 dims: [ 2 ] } ])");
  ModelRepository repo(dir_.path(), &engines_);
  ASSERT_TRUE(repo.LoadAll().ok());

  std::vector<ModelStatus> all = repo.List();
  ASSERT_EQ(all.size(), 5u);
  EXPECT_TRUE(StatusOf(repo, "good").ready());

  ModelStatus bad_type = StatusOf(repo, "bad_type");
  EXPECT_FALSE(bad_type.ready());
  EXPECT_THAT(bad_type.reason, HasSubstr("TYPE_FOO"));
  EXPECT_THAT(bad_type.reason, HasSubstr("data_type"));

  ModelStatus bad_dims = StatusOf(repo, "bad_dims");
  ASSERT_EQ(bad_dims.versions.size(), 1u);
  EXPECT_EQ(bad_dims.versions[0].state, ModelState::kUnavailable);
  EXPECT_THAT(bad_dims.versions[0].reason,
              HasSubstr("output 'y': config dims [3]"));

  EXPECT_THAT(StatusOf(repo, "no_versions").reason,
              HasSubstr("no version directory"));
  EXPECT_THAT(StatusOf(repo, "unknown_platform").reason,
              HasSubstr("no engine for platform 'tensorrt_plan'"));

  EXPECT_TRUE(repo.Get("good").ok());
  EXPECT_EQ(repo.Get("bad_dims").status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(repo.Get("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ModelRepositoryTest, VersionPolicyPicksWhatToServe) {
  AddModel("latest", kIdentityConfig, {1, 2, 3});
  AddModel("all", std::string(kIdentityConfig) + "version_policy: { all { } }",
           {1, 2});
  AddModel("specific",
           std::string(kIdentityConfig) +
               "version_policy: { specific { versions: [1, 9] } }",
           {1, 2});
  ModelRepository repo(dir_.path(), &engines_);
  ASSERT_TRUE(repo.LoadAll().ok());

  ModelStatus latest = StatusOf(repo, "latest");
  ASSERT_EQ(latest.versions.size(), 1u);
  EXPECT_EQ(latest.versions[0].version, 3);
  EXPECT_EQ((*repo.Get("latest"))->version(), 3);
  EXPECT_EQ(repo.Get("latest", 2).status().code(), absl::StatusCode::kNotFound);

  EXPECT_EQ(StatusOf(repo, "all").versions.size(), 2u);
  EXPECT_EQ((*repo.Get("all", 1))->version(), 1);
  EXPECT_EQ((*repo.Get("all"))->version(), 2);

  ModelStatus specific = StatusOf(repo, "specific");
  ASSERT_EQ(specific.versions.size(), 2u);
  EXPECT_EQ(specific.versions[0].state, ModelState::kReady);
  EXPECT_EQ(specific.versions[1].version, 9);
  EXPECT_EQ(specific.versions[1].state, ModelState::kUnavailable);
  EXPECT_THAT(specific.versions[1].reason, HasSubstr("directory is missing"));
  auto nine = repo.Get("specific", 9);
  EXPECT_EQ(nine.status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(ModelRepositoryTest, InstancesFollowInstanceGroupAndShareTheThreads) {
  AddModel("two",
           std::string(kIdentityConfig) +
               "instance_group [ { count: 2 kind: KIND_CPU }, { count: 1 } ]");
  ModelRepository repo(dir_.path(), &engines_, {.total_threads = 6});
  ASSERT_TRUE(repo.Load("two").ok());
  auto model = *repo.Get("two");
  EXPECT_EQ(model->instance_count(), 3);
  std::vector<Tensor> in;
  std::vector<float> x = {1, 2};
  in.push_back(*Tensor::FromValues<float>("x", {1, 2}, x));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(model->instance(i).Run(in).ok());
}

// Without a count, one CPU instance per core, one thread each; an explicit
// intra_op_threads makes fewer, wider instances; an explicit count stays.
TEST_F(ModelRepositoryTest, InstanceCountDefaultsToOnePerCore) {
  AddModel("none", kIdentityConfig);
  AddModel("cpu", std::string(kIdentityConfig) +
                      "instance_group [ { kind: KIND_CPU } ]");
  AddModel("wide", std::string(kIdentityConfig) +
                       "instance_group [ { kind: KIND_CPU } ]\n"
                       "parameters { key: \"intra_op_threads\" value: { "
                       "string_value: \"2\" } }");
  AddModel("fixed", std::string(kIdentityConfig) +
                        "instance_group [ { count: 1 kind: KIND_CPU } ]");
  ModelRepository repo(dir_.path(), &engines_, {.total_threads = 6});
  for (const char* name : {"none", "cpu", "wide", "fixed"}) {
    ASSERT_TRUE(repo.Load(name).ok()) << name;
  }
  EXPECT_EQ((*repo.Get("none"))->instance_count(), 6);
  EXPECT_EQ((*repo.Get("cpu"))->instance_count(), 6);
  EXPECT_EQ((*repo.Get("cpu"))->options().instance_groups[0].count, 6);
  EXPECT_EQ((*repo.Get("wide"))->instance_count(), 3);
  EXPECT_EQ((*repo.Get("fixed"))->instance_count(), 1);
}

TEST_F(ModelRepositoryTest, UnloadKeepsHeldVersionsAliveAndReloadReadsTheDisk) {
  AddModel("m", kIdentityConfig);
  ModelRepository repo(dir_.path(), &engines_);
  ASSERT_TRUE(repo.Load("m").ok());
  std::shared_ptr<const LoadedModel> held = *repo.Get("m");
  ASSERT_TRUE(repo.Unload("m").ok());
  EXPECT_EQ(repo.Get("m").status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(StatusOf(repo, "m").versions[0].state, ModelState::kUnloaded);
  std::vector<Tensor> in;
  std::vector<float> x = {1, 2};
  in.push_back(*Tensor::FromValues<float>("x", {1, 2}, x));
  EXPECT_TRUE(held->instance(0).Run(in).ok());

  AddModel("m", kIdentityConfig, {1, 2});
  ASSERT_TRUE(repo.Load("m").ok());
  EXPECT_EQ((*repo.Get("m"))->version(), 2);
  EXPECT_EQ(repo.Unload("never").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(repo.Load("never").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(repo.Load("../m").code(), absl::StatusCode::kNotFound);
}

TEST_F(ModelRepositoryTest, LoadReportsWhyAModelFailed) {
  AddModel("m", R"(platform: "identity" max_batch_size: -1
      input [ { name: "x" data_type: TYPE_FP32 dims: [ 2 ] } ]
      output [ { name: "y" data_type: TYPE_FP32 dims: [ 2 ] } ])");
  ModelRepository repo(dir_.path(), &engines_);
  absl::Status s = repo.Load("m");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(s.message()), HasSubstr("max_batch_size"));
}

TEST_F(ModelRepositoryTest, UnknownConfigFieldsAreWarnings) {
  AddModel("m", std::string(kIdentityConfig) + "some_future_field: 3");
  ModelRepository repo(dir_.path(), &engines_);
  ASSERT_TRUE(repo.Load("m").ok());
  ModelStatus s = StatusOf(repo, "m");
  ASSERT_FALSE(s.warnings.empty());
  EXPECT_THAT(s.warnings[0], HasSubstr("some_future_field"));
}

TEST_F(ModelRepositoryTest,
       MissingConfigWithNoRecognisableModelFileNamesTheProblem) {
  AddModel("bare", "", {1});
  testing::WriteFile(dir_.path() / "bare" / "1" / "weights.onnx", "x");
  ModelRepository repo(dir_.path(), &engines_);
  ASSERT_TRUE(repo.LoadAll().ok());
  EXPECT_THAT(StatusOf(repo, "bare").reason, HasSubstr("no config.pbtxt"));
}

TEST_F(ModelRepositoryTest, UnreadableRootIsAnError) {
  ModelRepository repo("/nonexistent/repo", &engines_);
  EXPECT_EQ(repo.LoadAll().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace ferry
