// SPDX-License-Identifier: Apache-2.0
#include "engines/input_validation.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ferry {
namespace {

using ::testing::HasSubstr;

ModelOptions Model() {
  ModelOptions o;
  o.name = "m";
  o.max_batch_size = 4;
  o.inputs = {{"ids", DataType::kInt64, {-1}}, {"x", DataType::kFp32, {3}}};
  return o;
}

Tensor Ids(Shape shape) {
  return *Tensor::Zeros("ids", DataType::kInt64, std::move(shape));
}
Tensor X(Shape shape, DataType dtype = DataType::kFp32) {
  return *Tensor::Zeros("x", dtype, std::move(shape));
}

std::string Error(std::vector<Tensor> inputs, bool check_batch = true) {
  auto r = ValidateAndOrderInputs(Model(), std::move(inputs), check_batch);
  return r.ok() ? "" : std::string(r.status().message());
}

TEST(InputValidationTest, ReordersIntoConfigOrder) {
  std::vector<Tensor> in;
  in.push_back(X({2, 3}));
  in.push_back(Ids({2, 17}));
  auto r = ValidateAndOrderInputs(Model(), std::move(in));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].name(), "ids");
  EXPECT_EQ((*r)[1].name(), "x");
}

TEST(InputValidationTest, NamesWhatIsWrong) {
  {
    std::vector<Tensor> in;
    in.push_back(Ids({1, 2}));
    EXPECT_THAT(Error(std::move(in)), HasSubstr("input 'x' is missing"));
  }
  {
    std::vector<Tensor> in;
    in.push_back(Ids({1, 2}));
    in.push_back(X({1, 3}, DataType::kFp64));
    EXPECT_THAT(Error(std::move(in)),
                HasSubstr("input 'x': expected FP32, got FP64"));
  }
  {
    std::vector<Tensor> in;
    in.push_back(Ids({1, 2}));
    in.push_back(X({1, 4}));
    EXPECT_THAT(
        Error(std::move(in)),
        HasSubstr("input 'x': shape [1,4] does not match the model's [-1,3]"));
  }
  {
    std::vector<Tensor> in;
    in.push_back(Ids({2, 2}));
    in.push_back(X({3, 3}));
    EXPECT_THAT(Error(std::move(in)), HasSubstr("batch size 3 differs"));
  }
  {
    std::vector<Tensor> in;
    in.push_back(Ids({5, 2}));
    in.push_back(X({5, 3}));
    EXPECT_THAT(Error(std::move(in)), HasSubstr("exceeds max_batch_size 4"));
  }
  {
    std::vector<Tensor> in;
    in.push_back(Ids({1, 2}));
    in.push_back(X({1, 3}));
    in.push_back(*Tensor::Zeros("z", DataType::kFp32, {1}));
    EXPECT_THAT(Error(std::move(in)), HasSubstr("unexpected input 'z'"));
  }
  {
    std::vector<Tensor> in;
    in.push_back(Ids({1, 2}));
    in.push_back(Ids({1, 2}));
    EXPECT_THAT(Error(std::move(in)), HasSubstr("more than once"));
  }
  {
    std::vector<Tensor> in;
    in.push_back(Ids({0, 2}));
    in.push_back(X({0, 3}));
    EXPECT_THAT(Error(std::move(in)), HasSubstr("batch dimension is 0"));
  }
}

TEST(InputValidationTest, OversizedBatchAllowedWhenTheCallerSplits) {
  std::vector<Tensor> in;
  in.push_back(Ids({9, 2}));
  in.push_back(X({9, 3}));
  EXPECT_EQ(Error(std::move(in), /*check_batch=*/false), "");
}

TEST(InputValidationTest, UnbatchedModelTakesExactDims) {
  ModelOptions o = Model();
  o.max_batch_size = 0;
  std::vector<Tensor> in;
  in.push_back(Ids({5}));
  in.push_back(X({3}));
  EXPECT_TRUE(ValidateAndOrderInputs(o, std::move(in)).ok());
}

}  // namespace
}  // namespace ferry
