// SPDX-License-Identifier: Apache-2.0
#include "repository/warmup.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util/temp_dir.h"

namespace ferry {
namespace {

using ::testing::HasSubstr;

ModelOptions Model() {
  ModelOptions o;
  o.name = "m";
  o.max_batch_size = 16;
  o.inputs = {{"ids", DataType::kInt64, {-1}}, {"x", DataType::kFp32, {3}}};
  o.outputs = {{"y", DataType::kFp32, {2}}};
  return o;
}

// A real engine with a fixed output shape, so the checks have something to
// disagree with.
class FixedOutputEngine : public Engine {
 public:
  explicit FixedOutputEngine(Shape per_row, DataType dtype = DataType::kFp32)
      : per_row_(std::move(per_row)), dtype_(dtype) {}
  absl::StatusOr<std::vector<Tensor>> Run(
      absl::Span<const Tensor> inputs) override {
    runs.push_back(inputs[0].shape());
    Shape shape = {inputs[0].shape()[0]};
    shape.insert(shape.end(), per_row_.begin(), per_row_.end());
    std::vector<Tensor> out;
    out.push_back(*Tensor::Zeros("y", dtype_, shape));
    return out;
  }
  std::vector<Shape> runs;

 private:
  Shape per_row_;
  DataType dtype_;
};

TEST(WarmupTest, DefaultPlanRunsBatchOneAndMaxWithVariableDimsAtOne) {
  FixedOutputEngine engine({2});
  ASSERT_TRUE(WarmUp(engine, Model(), "/nonexistent").ok());
  ASSERT_EQ(engine.runs.size(), 2u);
  EXPECT_EQ(engine.runs[0], (Shape{1, 1}));
  EXPECT_EQ(engine.runs[1], (Shape{16, 1}));
}

TEST(WarmupTest, OutputDimsThatDoNotMatchTheConfigFail) {
  FixedOutputEngine engine({1000});
  absl::Status s = WarmUp(engine, Model(), "/nonexistent");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("output 'y': config dims [2]"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("[1,1000]"));
}

TEST(WarmupTest, OutputTypeThatDoesNotMatchTheConfigFails) {
  FixedOutputEngine engine({2}, DataType::kInt64);
  absl::Status s = WarmUp(engine, Model(), "/nonexistent");
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("config data_type TYPE_FP32"));
}

TEST(WarmupTest, ConfiguredWarmupUsesItsBatchCountAndFiles) {
  testing::TempDir dir;
  ModelOptions o = Model();
  WarmupOptions w;
  w.name = "from_file";
  w.batch_size = 2;
  w.count = 3;
  w.inputs["ids"] = {DataType::kInt64, {4}, WarmupInput::Fill::kRandom, ""};
  w.inputs["x"] = {DataType::kFp32, {3}, WarmupInput::Fill::kFile, "x.bin"};
  o.warmups.push_back(w);
  FixedOutputEngine engine({2});
  // 2 rows x 3 floats = 24 bytes expected; a short file fails naming it.
  testing::WriteFile(dir.path() / "warmup" / "x.bin", std::string(20, '\0'));
  absl::Status s = WarmUp(engine, o, dir.path());
  EXPECT_THAT(std::string(s.message()), HasSubstr("x.bin"));
  testing::WriteFile(dir.path() / "warmup" / "x.bin", std::string(24, '\0'));
  ASSERT_TRUE(WarmUp(engine, o, dir.path()).ok());
  ASSERT_EQ(engine.runs.size(), 3u);
  EXPECT_EQ(engine.runs[0], (Shape{2, 4}));
}

TEST(WarmupTest, EngineFailureNamesTheWarmup) {
  class Failing : public Engine {
    absl::StatusOr<std::vector<Tensor>> Run(absl::Span<const Tensor>) override {
      return absl::InternalError("kaboom");
    }
  } engine;
  absl::Status s = WarmUp(engine, Model(), "/nonexistent");
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(s.message()), HasSubstr("default_batch_1"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("kaboom"));
}

}  // namespace
}  // namespace ferry
