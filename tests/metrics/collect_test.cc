// SPDX-License-Identifier: Apache-2.0
#include "metrics/collect.h"

#include <optional>
#include <string>

#include "core/mutex.h"
#include "engines/identity/identity_engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/prometheus_text.h"
#include "metrics/promtool_check.h"
#include "repository/model_manager.h"
#include "test_util/temp_dir.h"

namespace ferry {
namespace {

using ::testing::HasSubstr;

constexpr char kConfig[] = R"(
  platform: "identity"
  max_batch_size: 8
  input [ { name: "a" data_type: TYPE_FP32 dims: [ 1 ] } ]
  output [ { name: "A" data_type: TYPE_FP32 dims: [ 1 ] } ]
  dynamic_batching {
    max_queue_delay_microseconds: 100
    priority_levels: 2
    default_priority_level: 2
  }
)";

absl::StatusOr<InferenceResponse> InferSync(ModelManager& manager, float value,
                                            uint32_t priority) {
  InferenceRequest request;
  request.id = "req";
  request.priority = priority;
  request.inputs.push_back(
      *Tensor::FromValues<float>("a", {1, 1}, std::vector<float>{value}));
  Notification done;
  absl::StatusOr<InferenceResponse> out = absl::UnknownError("unset");
  manager.Infer("m", std::nullopt, std::move(request),
                [&](absl::StatusOr<InferenceResponse> r) {
                  out = std::move(r);
                  done.Notify();
                });
  done.WaitForNotification();
  return out;
}

TEST(CollectMetricsTest, ReadsStatisticsAndStatesOfARealManager) {
  EngineRegistry engines;
  ASSERT_TRUE(RegisterIdentityEngine(&engines).ok());
  testing::TempDir dir;
  testing::WriteFile(dir.path() / "m" / "config.pbtxt", kConfig);
  std::filesystem::create_directories(dir.path() / "m" / "1");
  testing::WriteFile(dir.path() / "broken" / "config.pbtxt",
                     "platform: \"no_such_engine\"");
  std::filesystem::create_directories(dir.path() / "broken" / "1");

  ModelManager manager(dir.path(), &engines, {});
  ASSERT_TRUE(manager.LoadAll().ok());
  for (int i = 0; i < 3; ++i) {
    auto r = InferSync(manager, 1.0f + i, 1);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  ASSERT_TRUE(InferSync(manager, 9.0f, 2).ok());
  EXPECT_EQ(InferSync(manager, 9.0f, 3).status().code(),
            absl::StatusCode::kInvalidArgument);

  const MetricsSnapshot snapshot = CollectMetrics(manager);
  ASSERT_EQ(snapshot.models.size(), 1u);
  EXPECT_EQ(snapshot.models[0].model, "m");
  EXPECT_EQ(snapshot.models[0].version, 1);
  // The config's two levels, then the offline level the manager adds.
  ASSERT_EQ(snapshot.models[0].stats.levels.size(), 3u);
  EXPECT_EQ(snapshot.models[0].stats.offline_level, 2);
  EXPECT_EQ(snapshot.models[0].stats.levels[0].requests_succeeded, 3u);
  EXPECT_EQ(snapshot.models[0].stats.levels[1].requests_succeeded, 1u);
  EXPECT_EQ(snapshot.models[0].stats.rows_executed, 4u);

  bool saw_m = false;
  bool saw_broken = false;
  for (const ModelStateMetric& s : snapshot.states) {
    if (s.model == "m") {
      saw_m = true;
      EXPECT_EQ(s.version, "1");
      EXPECT_EQ(s.state, "READY");
    } else if (s.model == "broken") {
      saw_broken = true;
      EXPECT_EQ(s.state, "UNAVAILABLE");
    }
  }
  EXPECT_TRUE(saw_m);
  EXPECT_TRUE(saw_broken);

  const std::string text = RenderPrometheus(snapshot);
  EXPECT_THAT(text, HasSubstr("ferry_request_success_total{model=\"m\","
                              "version=\"1\",priority=\"1\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("ferry_request_success_total{model=\"m\","
                              "version=\"1\",priority=\"2\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("ferry_inference_rows_total{model=\"m\","
                              "version=\"1\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("ferry_model_state{model=\"m\",version=\"1\","
                              "state=\"READY\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("ferry_request_duration_seconds_count{model="
                              "\"m\",version=\"1\",priority=\"1\"} 3\n"));
  absl::StatusOr<testing::PromtoolResult> checked =
      testing::PromtoolCheckMetrics(text);
  ASSERT_TRUE(checked.ok()) << checked.status();
  EXPECT_EQ(checked->exit_code, 0) << checked->output;
  EXPECT_EQ(checked->output, "") << text;
  manager.Shutdown(absl::Seconds(5));
}

}  // namespace
}  // namespace ferry
