// SPDX-License-Identifier: Apache-2.0
#include "loadgen/request_data.h"

#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ferry {
namespace {

using ::testing::HasSubstr;

TEST(ParseModelMetadataInputsTest, ReadsNamesTypesAndShapes) {
  auto specs = ParseModelMetadataInputs(
      R"({"name":"m","versions":["1"],"platform":"xgboost",
          "inputs":[{"name":"x","datatype":"FP32","shape":[-1,32]},
                    {"name":"ids","datatype":"INT64","shape":[-1,-1]}],
          "outputs":[{"name":"y","datatype":"FP32","shape":[-1,1]}]})");
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ((*specs)[0].name, "x");
  EXPECT_EQ((*specs)[0].dtype, DataType::kFp32);
  EXPECT_EQ((*specs)[0].shape, (Shape{-1, 32}));
  EXPECT_EQ((*specs)[1].dtype, DataType::kInt64);
  EXPECT_FALSE(ParseModelMetadataInputs("{").ok());
  EXPECT_FALSE(ParseModelMetadataInputs(R"({"inputs":[{"name":"x"}]})").ok());
  auto bad = ParseModelMetadataInputs(
      R"({"inputs":[{"name":"x","datatype":"FP99","shape":[1]}]})");
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("'x'"));
}

TEST(RandomInputsTest, BatchDimensionAndGivenShapes) {
  std::vector<InputSpec> specs = {{"x", DataType::kFp32, {-1, 4}},
                                  {"ids", DataType::kInt64, {-1, -1}},
                                  {"flag", DataType::kBool, {3}}};
  RandomInputOptions o;
  o.batch_rows = 5;
  o.int_max = 7;
  ASSERT_TRUE(ParseShapeFlag("ids:16", &o.shapes).ok());
  auto t = RandomInputs(specs, o);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].shape(), (Shape{5, 4}));
  for (float v : (*t)[0].values<float>()) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
  EXPECT_EQ((*t)[1].shape(), (Shape{5, 16}));
  for (int64_t v : (*t)[1].values<int64_t>()) {
    EXPECT_GE(v, 0);
    EXPECT_LT(v, 7);
  }
  EXPECT_EQ((*t)[2].shape(), (Shape{3}));  // not batched: as declared
  // The same seed gives the same data.
  auto again = RandomInputs(specs, o);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>((*t)[0].data()),
                        (*t)[0].byte_size()),
            std::string(reinterpret_cast<const char*>((*again)[0].data()),
                        (*again)[0].byte_size()));
}

TEST(RandomInputsTest, AVariableDimensionWithoutAShapeIsNamed) {
  auto t = RandomInputs({{"input_ids", DataType::kInt64, {-1, -1}}}, {});
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()),
              HasSubstr("--shape input_ids:64"));
}

TEST(RandomInputsTest, RangesAreDrawnPerRequestAndSharedAcrossInputs) {
  std::vector<InputSpec> specs = {
      {"input_ids", DataType::kInt64, {-1, -1}},
      {"attention_mask", DataType::kInt64, {-1, -1}}};
  RandomInputOptions o;
  ASSERT_TRUE(ParseShapeFlag("input_ids:8-128", &o.shapes).ok());
  ASSERT_TRUE(ParseShapeFlag("attention_mask:8-128", &o.shapes).ok());
  EXPECT_TRUE(HasRanges(o.shapes));
  std::set<int64_t> lengths;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    o.seed = seed;
    auto t = RandomInputs(specs, o);
    ASSERT_TRUE(t.ok()) << t.status();
    const int64_t len = (*t)[0].shape()[1];
    EXPECT_GE(len, 8);
    EXPECT_LE(len, 128);
    EXPECT_EQ((*t)[1].shape()[1], len);  // the same length for both
    lengths.insert(len);
  }
  EXPECT_GT(lengths.size(), 10u);
}

TEST(ParseShapeFlagTest, RejectsMalformedValues) {
  std::map<std::string, std::vector<DimRange>> shapes;
  EXPECT_TRUE(ParseShapeFlag("a:2,3", &shapes).ok());
  EXPECT_EQ(shapes["a"], (std::vector<DimRange>{{2, 2}, {3, 3}}));
  EXPECT_FALSE(HasRanges(shapes));
  EXPECT_TRUE(ParseShapeFlag("b:4-9", &shapes).ok());
  EXPECT_EQ(shapes["b"], (std::vector<DimRange>{{4, 9}}));
  EXPECT_TRUE(HasRanges(shapes));
  for (const char* bad : {"a", ":3", "a:", "a:0", "a:x", "a:2,,3", "a:9-4",
                          "a:0-3", "a:3-", "a:-3"}) {
    absl::Status st = ParseShapeFlag(bad, &shapes);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(st.message()), HasSubstr("--shape"));
  }
}

}  // namespace
}  // namespace ferry
