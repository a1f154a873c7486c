// SPDX-License-Identifier: Apache-2.0
#include "engines/identity/identity_engine.h"

#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ferry {
namespace {

using ::testing::HasSubstr;

ModelOptions TwoTensorModel() {
  ModelOptions o;
  o.name = "id";
  o.platform = "identity";
  o.max_batch_size = 8;
  o.inputs = {{"a", DataType::kFp32, {2}}, {"b", DataType::kInt64, {-1}}};
  o.outputs = {{"A", DataType::kFp32, {2}}, {"B", DataType::kInt64, {-1}}};
  o.instance_groups = {{}};
  return o;
}

std::unique_ptr<Engine> Make(const ModelOptions& o) {
  EngineLoadContext ctx;
  ctx.options = o;
  auto e = IdentityEngineFactory().Create(ctx);
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() ? *std::move(e) : nullptr;
}

TEST(IdentityEngineTest, ReturnsInputsUnderOutputNames) {
  auto engine = Make(TwoTensorModel());
  std::vector<Tensor> in;
  std::vector<float> a = {1, 2, 3, 4};
  std::vector<int64_t> b = {7, 8};
  in.push_back(*Tensor::FromValues<float>("a", {2, 2}, a));
  in.push_back(*Tensor::FromValues<int64_t>("b", {2, 1}, b));
  auto out = engine->Run(in);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].name(), "A");
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 2}));
  EXPECT_EQ((*out)[0].values<float>()[3], 4);
  EXPECT_EQ((*out)[1].name(), "B");
  EXPECT_EQ((*out)[1].values<int64_t>()[1], 8);
}

TEST(IdentityEngineTest, MismatchedOutputTypeFailsAtCreate) {
  ModelOptions o = TwoTensorModel();
  o.outputs[1].dtype = DataType::kFp32;
  EngineLoadContext ctx;
  ctx.options = o;
  auto e = IdentityEngineFactory().Create(ctx);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(std::string(e.status().message()), HasSubstr("output[1] 'B'"));
}

TEST(IdentityEngineTest, FailOnFirstValueFailsOnlyThatBatch) {
  ModelOptions o = TwoTensorModel();
  o.parameters["fail_on_first_value"] = "13";
  auto engine = Make(o);
  std::vector<float> bad = {13, 0}, good = {1, 0};
  std::vector<int64_t> b = {1};
  std::vector<Tensor> in;
  in.push_back(*Tensor::FromValues<float>("a", {1, 2}, bad));
  in.push_back(*Tensor::FromValues<int64_t>("b", {1, 1}, b));
  EXPECT_EQ(engine->Run(in).status().code(), absl::StatusCode::kInternal);
  in[0] = *Tensor::FromValues<float>("a", {1, 2}, good);
  EXPECT_TRUE(engine->Run(in).ok());
}

TEST(IdentityEngineTest, ExecuteDelayMakesRunTakeAtLeastThatLong) {
  ModelOptions o = TwoTensorModel();
  o.parameters["execute_delay_us"] = "20000";
  auto engine = Make(o);
  std::vector<float> a = {1, 2};
  std::vector<int64_t> b = {1};
  std::vector<Tensor> in;
  in.push_back(*Tensor::FromValues<float>("a", {1, 2}, a));
  in.push_back(*Tensor::FromValues<int64_t>("b", {1, 1}, b));
  const absl::Time start = absl::Now();
  ASSERT_TRUE(engine->Run(in).ok());
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(20));
}

TEST(IdentityEngineTest, BadParameterNamesIt) {
  ModelOptions o = TwoTensorModel();
  o.parameters["execute_delay_us"] = "soon";
  EngineLoadContext ctx;
  ctx.options = o;
  auto e = IdentityEngineFactory().Create(ctx);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(std::string(e.status().message()),
              HasSubstr("parameters.execute_delay_us"));
}

TEST(IdentityEngineTest, AutoCompleteMirrorsInputs) {
  ModelOptions o = TwoTensorModel();
  o.outputs.clear();
  ASSERT_TRUE(IdentityEngineFactory().AutoComplete("/nonexistent", &o).ok());
  ASSERT_EQ(o.outputs.size(), 2u);
  EXPECT_EQ(o.outputs[0].name, "OUTPUT0");
  EXPECT_EQ(o.outputs[1].dtype, DataType::kInt64);
}

}  // namespace
}  // namespace ferry
