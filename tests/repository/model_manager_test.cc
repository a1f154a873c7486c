// SPDX-License-Identifier: Apache-2.0
#include "repository/model_manager.h"

#include "engines/identity/identity_engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util/temp_dir.h"

namespace ferry {
namespace {

using ::testing::HasSubstr;

constexpr char kConfig[] = R"(
  platform: "identity"
  max_batch_size: 8
  input [ { name: "a" data_type: TYPE_FP32 dims: [ 1 ] },
          { name: "b" data_type: TYPE_INT64 dims: [ 1 ] } ]
  output [ { name: "A" data_type: TYPE_FP32 dims: [ 1 ] },
           { name: "B" data_type: TYPE_INT64 dims: [ 1 ] } ]
  dynamic_batching { max_queue_delay_microseconds: 100 }
)";

class ModelManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterIdentityEngine(&engines_).ok());
    testing::WriteFile(dir_.path() / "m" / "config.pbtxt", kConfig);
    std::filesystem::create_directories(dir_.path() / "m" / "1");
  }

  absl::StatusOr<InferenceResponse> InferSync(
      ModelManager& manager, InferenceRequest request,
      std::optional<int64_t> version = std::nullopt,
      const std::string& model = "m") {
    Notification done;
    absl::StatusOr<InferenceResponse> out = absl::UnknownError("unset");
    manager.Infer(model, version, std::move(request),
                  [&](absl::StatusOr<InferenceResponse> r) {
                    out = std::move(r);
                    done.Notify();
                  });
    done.WaitForNotification();
    return out;
  }

  static InferenceRequest Request(float a, int64_t b) {
    InferenceRequest r;
    r.id = "req";
    r.inputs.push_back(
        *Tensor::FromValues<float>("a", {1, 1}, std::vector<float>{a}));
    r.inputs.push_back(
        *Tensor::FromValues<int64_t>("b", {1, 1}, std::vector<int64_t>{b}));
    return r;
  }

  EngineRegistry engines_;
  testing::TempDir dir_;
};

TEST_F(ModelManagerTest, InfersThroughTheBatcherAndSelectsOutputs) {
  ModelManager manager(dir_.path(), &engines_, {});
  EXPECT_FALSE(manager.Ready());
  ASSERT_TRUE(manager.LoadAll().ok());
  EXPECT_TRUE(manager.Ready());
  EXPECT_TRUE(manager.Live());

  auto all = InferSync(manager, Request(1.5f, 7));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->id, "req");
  EXPECT_EQ(all->model_name, "m");
  EXPECT_EQ(all->model_version, "1");
  ASSERT_EQ(all->outputs.size(), 2u);
  EXPECT_EQ(all->outputs[0].values<float>()[0], 1.5f);

  InferenceRequest only_b = Request(2, 9);
  only_b.outputs.push_back({"B", std::nullopt});
  auto b = InferSync(manager, std::move(only_b));
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(b->outputs.size(), 1u);
  EXPECT_EQ(b->outputs[0].name(), "B");
  EXPECT_EQ(b->outputs[0].values<int64_t>()[0], 9);

  InferenceRequest bad_output = Request(2, 9);
  bad_output.outputs.push_back({"Z", std::nullopt});
  auto z = InferSync(manager, std::move(bad_output));
  EXPECT_EQ(z.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(z.status().message()),
              HasSubstr("requested output 'Z'"));

  auto stats = manager.Statistics("m");
  ASSERT_TRUE(stats.ok());
  ASSERT_EQ(stats->size(), 1u);
  EXPECT_EQ((*stats)[0].stats.rows_executed, 2u);
  EXPECT_NE((*stats)[0].last_inference, absl::InfinitePast());
}

TEST_F(ModelManagerTest, ErrorsFollowTheStatusCodes) {
  ModelManager manager(dir_.path(), &engines_, {});
  ASSERT_TRUE(manager.LoadAll().ok());
  EXPECT_EQ(
      InferSync(manager, Request(1, 1), std::nullopt, "nope").status().code(),
      absl::StatusCode::kNotFound);
  EXPECT_EQ(InferSync(manager, Request(1, 1), 7).status().code(),
            absl::StatusCode::kNotFound);
  InferenceRequest wrong = Request(1, 1);
  wrong.inputs.pop_back();
  auto w = InferSync(manager, std::move(wrong));
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(w.status().message()),
              HasSubstr("input 'b' is missing"));
  InferenceRequest prio = Request(1, 1);
  prio.priority = 3;
  EXPECT_EQ(InferSync(manager, std::move(prio)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(manager.ModelReady("nope", std::nullopt).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(*manager.ModelReady("m", std::nullopt));
  EXPECT_EQ(manager.Statistics("nope").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(ModelManagerTest, UnloadStopsServingAndLoadPicksUpNewVersions) {
  ModelManager manager(dir_.path(), &engines_, {});
  ASSERT_TRUE(manager.LoadAll().ok());
  ASSERT_TRUE(manager.Unload("m").ok());
  EXPECT_EQ(InferSync(manager, Request(1, 1)).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_FALSE(*manager.ModelReady("m", std::nullopt));
  EXPECT_FALSE(manager.Ready());
  std::filesystem::create_directories(dir_.path() / "m" / "2");
  ASSERT_TRUE(manager.Load("m").ok());
  auto r = InferSync(manager, Request(1, 1));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->model_version, "2");
  EXPECT_EQ(manager.Find("m", std::nullopt)->version, 2);
}

TEST_F(ModelManagerTest, ReloadUnderLoadLosesNoRequest) {
  ModelManager manager(dir_.path(), &engines_, {});
  ASSERT_TRUE(manager.LoadAll().ok());
  constexpr int kN = 2000;
  BlockingCounter left(kN);
  std::atomic<int> ok{0}, unavailable{0}, other{0};
  std::thread client([&] {
    for (int i = 0; i < kN; ++i) {
      manager.Infer(
          "m", std::nullopt, Request(static_cast<float>(i), i),
          [&](absl::StatusOr<InferenceResponse> r) {
            if (r.ok()) {
              ok++;
            } else if (r.status().code() == absl::StatusCode::kUnavailable) {
              unavailable++;
            } else {
              other++;
            }
            left.DecrementCount();
          });
    }
  });
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(manager.Load("m").ok());
  client.join();
  left.Wait();
  EXPECT_EQ(ok + unavailable + other, kN);
  EXPECT_EQ(other.load(), 0);
  EXPECT_GT(ok.load(), 0);
}

TEST_F(ModelManagerTest, ShutdownAnswersEverythingAndRefusesNewWork) {
  ModelManager manager(dir_.path(), &engines_, {});
  ASSERT_TRUE(manager.LoadAll().ok());
  constexpr int kN = 100;
  BlockingCounter left(kN);
  std::atomic<int> answered{0};
  for (int i = 0; i < kN; ++i) {
    manager.Infer("m", std::nullopt, Request(1, 1),
                  [&](absl::StatusOr<InferenceResponse>) {
                    answered++;
                    left.DecrementCount();
                  });
  }
  manager.Shutdown(absl::Seconds(10));
  left.Wait();
  EXPECT_EQ(answered.load(), kN);
  EXPECT_FALSE(manager.Live());
  EXPECT_FALSE(manager.Ready());
  EXPECT_EQ(InferSync(manager, Request(1, 1)).status().code(),
            absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace ferry
