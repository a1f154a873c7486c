// SPDX-License-Identifier: Apache-2.0
#include "batching/batch_assembly.h"

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "batching/split_rows.h"
#include "core/half.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ferry {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

template <typename T>
Tensor Make(std::string name, Shape shape, std::vector<T> values) {
  absl::StatusOr<Tensor> t = Tensor::FromValues<T>(
      std::move(name), std::move(shape), absl::MakeConstSpan(values));
  EXPECT_TRUE(t.ok()) << t.status();
  return *std::move(t);
}

Tensor Strings(std::string name, Shape shape, std::vector<std::string> values) {
  absl::StatusOr<Tensor> t =
      Tensor::FromStrings(std::move(name), std::move(shape), values);
  EXPECT_TRUE(t.ok()) << t.status();
  return *std::move(t);
}

std::vector<Tensor> One(Tensor t) {
  std::vector<Tensor> v;
  v.push_back(std::move(t));
  return v;
}

std::vector<Tensor> Two(Tensor a, Tensor b) {
  std::vector<Tensor> v;
  v.push_back(std::move(a));
  v.push_back(std::move(b));
  return v;
}

ModelOptions Model(std::vector<TensorSpec> inputs,
                   std::vector<TensorSpec> outputs = {}) {
  ModelOptions options;
  options.name = "m";
  options.max_batch_size = 16;
  options.inputs = std::move(inputs);
  options.outputs = std::move(outputs);
  return options;
}

TensorSpec Spec(std::string name, DataType dtype, std::vector<int64_t> dims) {
  TensorSpec s;
  s.name = std::move(name);
  s.dtype = dtype;
  s.dims = std::move(dims);
  return s;
}

std::vector<const std::vector<Tensor>*> Ptrs(
    const std::vector<std::vector<Tensor>>& requests) {
  std::vector<const std::vector<Tensor>*> p;
  for (const auto& r : requests) p.push_back(&r);
  return p;
}

// Three requests of INT64 token ids of lengths 3, 5 and 2.
std::vector<std::vector<Tensor>> Sequences() {
  std::vector<std::vector<Tensor>> r;
  r.push_back(One(Make<int64_t>("ids", {1, 3}, {1, 2, 3})));
  r.push_back(One(Make<int64_t>("ids", {1, 5}, {4, 5, 6, 7, 8})));
  r.push_back(One(Make<int64_t>("ids", {1, 2}, {9, 10})));
  return r;
}

TEST(AssembleBatchTest, ConcatenatesRequestsAtTheirRowOffsets) {
  ModelOptions options = Model({Spec("x", DataType::kFp32, {2})});
  std::vector<std::vector<Tensor>> requests;
  requests.push_back(One(Make<float>("x", {1, 2}, {1, 2})));
  requests.push_back(One(Make<float>("x", {2, 2}, {3, 4, 5, 6})));
  requests.push_back(One(Make<float>("x", {3, 2}, {7, 8, 9, 10, 11, 12})));
  absl::StatusOr<AssembledBatch> batch =
      AssembleBatch(options, PaddingOptions{}, Ptrs(requests));
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_EQ(batch->inputs.size(), 1u);
  EXPECT_EQ(batch->inputs[0].name(), "x");
  EXPECT_THAT(batch->inputs[0].shape(), ElementsAre(6, 2));
  EXPECT_THAT(batch->inputs[0].values<float>(),
              ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12));
  EXPECT_THAT(batch->row_offsets, ElementsAre(0, 1, 3));
  EXPECT_THAT(batch->rows, ElementsAre(1, 2, 3));
  EXPECT_EQ(batch->total_rows(), 6);
  EXPECT_EQ(batch->padded_elements, 0);
  EXPECT_EQ(batch->total_elements, 12);
  EXPECT_EQ(batch->padding_waste(), 0.0);
  EXPECT_EQ(batch->padded_length, -1);
  EXPECT_TRUE(batch->lengths.empty());
}

TEST(AssembleBatchTest, SingleRequestBorrowsItsTensors) {
  ModelOptions options = Model({Spec("x", DataType::kFp32, {2})});
  std::vector<std::vector<Tensor>> requests;
  requests.push_back(One(Make<float>("x", {2, 2}, {1, 2, 3, 4})));
  absl::StatusOr<AssembledBatch> batch =
      AssembleBatch(options, PaddingOptions{}, Ptrs(requests));
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->inputs[0].data(), requests[0][0].data());
  EXPECT_FALSE(batch->inputs[0].owns_data());
  EXPECT_THAT(batch->inputs[0].shape(), ElementsAre(2, 2));
  EXPECT_THAT(batch->rows, ElementsAre(2));
}

TEST(AssembleBatchTest, PadsVariableLengthWithZeroByDefault) {
  ModelOptions options = Model({Spec("ids", DataType::kInt64, {-1})});
  std::vector<std::vector<Tensor>> requests = Sequences();
  absl::StatusOr<AssembledBatch> batch =
      AssembleBatch(options, PaddingOptions{}, Ptrs(requests));
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_THAT(batch->inputs[0].shape(), ElementsAre(3, 5));
  EXPECT_THAT(batch->inputs[0].values<int64_t>(), ElementsAre(1, 2, 3, 0, 0,  //
                                                              4, 5, 6, 7, 8,  //
                                                              9, 10, 0, 0, 0));
  EXPECT_EQ(batch->padded_elements, 5);
  EXPECT_EQ(batch->total_elements, 15);
  EXPECT_DOUBLE_EQ(batch->padding_waste(), (2.0 + 0.0 + 3.0) / 15.0);
  EXPECT_EQ(batch->padded_length, 5);
  EXPECT_THAT(batch->lengths, ElementsAre(3, 5, 2));
}

TEST(AssembleBatchTest, PadsWithConfiguredValueAndMaskWithZero) {
  ModelOptions options = Model({Spec("ids", DataType::kInt64, {-1}),
                                Spec("mask", DataType::kInt64, {-1})});
  options.parameters["pad_value"] = "7";
  options.parameters["attention_mask_input"] = "mask";
  absl::StatusOr<PaddingOptions> padding =
      PaddingOptions::FromModelOptions(options);
  ASSERT_TRUE(padding.ok()) << padding.status();
  EXPECT_EQ(padding->pad_value, 7.0);
  EXPECT_EQ(padding->attention_mask_input, "mask");

  std::vector<std::vector<Tensor>> requests;
  for (std::vector<Tensor>& ids : Sequences()) {
    const int64_t n = ids[0].shape()[1];
    requests.push_back(
        Two(std::move(ids[0]),
            Make<int64_t>("mask", {1, n}, std::vector<int64_t>(n, 1))));
  }
  absl::StatusOr<AssembledBatch> batch =
      AssembleBatch(options, *padding, Ptrs(requests));
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_THAT(batch->inputs[0].values<int64_t>(), ElementsAre(1, 2, 3, 7, 7,  //
                                                              4, 5, 6, 7, 8,  //
                                                              9, 10, 7, 7, 7));
  EXPECT_THAT(batch->inputs[1].values<int64_t>(), ElementsAre(1, 1, 1, 0, 0,  //
                                                              1, 1, 1, 1, 1,  //
                                                              1, 1, 0, 0, 0));
  EXPECT_EQ(batch->padded_elements, 10);
  EXPECT_EQ(batch->total_elements, 30);
  EXPECT_THAT(batch->lengths, ElementsAre(3, 5, 2));
}

TEST(AssembleBatchTest, PadsVariableDimOfMultiDimInput) {
  ModelOptions options = Model({Spec("emb", DataType::kFp32, {-1, 2})});
  std::vector<std::vector<Tensor>> requests;
  // Request 0: 1 row of 1 token; request 1: 2 rows of 3 tokens.
  requests.push_back(One(Make<float>("emb", {1, 1, 2}, {1, 2})));
  requests.push_back(One(Make<float>(
      "emb", {2, 3, 2}, {3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14})));
  PaddingOptions padding;
  padding.pad_value = -1;
  absl::StatusOr<AssembledBatch> batch =
      AssembleBatch(options, padding, Ptrs(requests));
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_THAT(batch->inputs[0].shape(), ElementsAre(3, 3, 2));
  EXPECT_THAT(batch->inputs[0].values<float>(),
              ElementsAre(1, 2, -1, -1, -1, -1,  //
                          3, 4, 5, 6, 7, 8,      //
                          9, 10, 11, 12, 13, 14));
  EXPECT_EQ(batch->padded_elements, 4);
  EXPECT_EQ(batch->total_elements, 18);
  EXPECT_THAT(batch->lengths, ElementsAre(1, 3));
}

TEST(AssembleBatchTest, PadsTwoVariableDimsAndHasNoSequenceLength) {
  ModelOptions options = Model({Spec("img", DataType::kInt32, {-1, -1})});
  std::vector<std::vector<Tensor>> requests;
  requests.push_back(One(Make<int32_t>("img", {1, 2, 3}, {1, 2, 3, 4, 5, 6})));
  requests.push_back(
      One(Make<int32_t>("img", {1, 3, 2}, {7, 8, 9, 10, 11, 12})));
  absl::StatusOr<AssembledBatch> batch =
      AssembleBatch(options, PaddingOptions{}, Ptrs(requests));
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_THAT(batch->inputs[0].shape(), ElementsAre(2, 3, 3));
  EXPECT_THAT(batch->inputs[0].values<int32_t>(),
              ElementsAre(1, 2, 3, 4, 5, 6, 0, 0, 0,  //
                          7, 8, 0, 9, 10, 0, 11, 12, 0));
  EXPECT_EQ(batch->padded_elements, 6);
  // 2x3 and 3x2 share no single length: outputs are never cut back.
  EXPECT_EQ(batch->padded_length, -1);
  EXPECT_TRUE(batch->lengths.empty());
}

TEST(AssembleBatchTest, PadsFp16WithConvertedPadValue) {
  ModelOptions options = Model({Spec("h", DataType::kFp16, {-1})});
  options.parameters["pad_value"] = "1.5";
  absl::StatusOr<PaddingOptions> padding =
      PaddingOptions::FromModelOptions(options);
  ASSERT_TRUE(padding.ok()) << padding.status();
  const uint16_t one = FloatToHalf(1.0f);
  std::vector<std::vector<Tensor>> requests;
  requests.push_back(One([&] {
    absl::StatusOr<Tensor> t =
        Tensor::FromBytes("h", DataType::kFp16, {1, 1},
                          std::string(reinterpret_cast<const char*>(&one), 2));
    return *std::move(t);
  }()));
  requests.push_back(One([&] {
    const uint16_t v[3] = {one, one, one};
    absl::StatusOr<Tensor> t =
        Tensor::FromBytes("h", DataType::kFp16, {1, 3},
                          std::string(reinterpret_cast<const char*>(v), 6));
    return *std::move(t);
  }()));
  absl::StatusOr<AssembledBatch> batch =
      AssembleBatch(options, *padding, Ptrs(requests));
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_EQ(batch->inputs[0].byte_size(), 12u);
  std::vector<uint16_t> bits(6);
  std::memcpy(bits.data(), batch->inputs[0].data(), 12);
  const uint16_t pad = FloatToHalf(1.5f);
  EXPECT_EQ(pad, 0x3E00);
  EXPECT_THAT(bits, ElementsAre(one, pad, pad, one, one, one));
}

TEST(AssembleBatchTest, ConcatenatesBytesInputsWithoutPadding) {
  ModelOptions options = Model({Spec("s", DataType::kBytes, {-1})});
  std::vector<std::vector<Tensor>> requests;
  requests.push_back(One(Strings("s", {1, 2}, {"a", "bc"})));
  requests.push_back(One(Strings("s", {2, 2}, {"", "def", "g", "hi"})));
  absl::StatusOr<AssembledBatch> batch =
      AssembleBatch(options, PaddingOptions{}, Ptrs(requests));
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_THAT(batch->inputs[0].shape(), ElementsAre(3, 2));
  EXPECT_THAT(batch->inputs[0].strings(),
              ElementsAre("a", "bc", "", "def", "g", "hi"));
}

TEST(AssembleBatchTest, BytesInputThatNeedsPaddingIsInvalid) {
  ModelOptions options = Model({Spec("s", DataType::kBytes, {-1})});
  std::vector<std::vector<Tensor>> requests;
  requests.push_back(One(Strings("s", {1, 2}, {"a", "bc"})));
  requests.push_back(One(Strings("s", {1, 3}, {"d", "e", "f"})));
  absl::StatusOr<AssembledBatch> batch =
      AssembleBatch(options, PaddingOptions{}, Ptrs(requests));
  EXPECT_EQ(batch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(batch.status().message(), HasSubstr("BYTES input 's'"));
}

TEST(AssembleBatchTest, RequestsWithDifferentInputsAreInvalid) {
  TensorSpec opt = Spec("b", DataType::kFp32, {1});
  opt.optional = true;
  ModelOptions options = Model({Spec("a", DataType::kFp32, {1}), opt});
  std::vector<std::vector<Tensor>> requests;
  requests.push_back(One(Make<float>("a", {1, 1}, {1})));
  requests.push_back(
      Two(Make<float>("a", {1, 1}, {1}), Make<float>("b", {1, 1}, {2})));
  absl::StatusOr<AssembledBatch> batch =
      AssembleBatch(options, PaddingOptions{}, Ptrs(requests));
  EXPECT_EQ(batch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(batch.status().message(), HasSubstr("request 1 has 2 inputs"));
}

TEST(AssembleBatchTest, NonBatchingModelTakesOneRequestOnly) {
  ModelOptions options = Model({Spec("x", DataType::kFp32, {3})});
  options.max_batch_size = 0;
  std::vector<std::vector<Tensor>> requests;
  requests.push_back(One(Make<float>("x", {3}, {1, 2, 3})));
  absl::StatusOr<AssembledBatch> one =
      AssembleBatch(options, PaddingOptions{}, Ptrs(requests));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->inputs[0].data(), requests[0][0].data());
  EXPECT_THAT(one->inputs[0].shape(), ElementsAre(3));

  requests.push_back(One(Make<float>("x", {3}, {4, 5, 6})));
  absl::StatusOr<AssembledBatch> two =
      AssembleBatch(options, PaddingOptions{}, Ptrs(requests));
  EXPECT_EQ(two.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(two.status().message(), HasSubstr("max_batch_size 0"));
}

TEST(PaddingOptionsTest, RejectsPadValueThatIsNotANumber) {
  ModelOptions options = Model({Spec("ids", DataType::kInt64, {-1})});
  options.parameters["pad_value"] = "zero";
  absl::StatusOr<PaddingOptions> padding =
      PaddingOptions::FromModelOptions(options);
  EXPECT_EQ(padding.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(padding.status().message(),
              HasSubstr("parameters.pad_value is \"zero\""));
}

TEST(PaddingOptionsTest, RejectsPadValueThatDoesNotFitAPaddedInput) {
  ModelOptions options = Model({Spec("ids", DataType::kInt64, {-1})});
  options.parameters["pad_value"] = "2.5";
  absl::StatusOr<PaddingOptions> padding =
      PaddingOptions::FromModelOptions(options);
  EXPECT_EQ(padding.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(padding.status().message(), HasSubstr("parameters.pad_value"));
  EXPECT_THAT(padding.status().message(), HasSubstr("input 'ids'"));

  options.parameters["pad_value"] = "300";
  options.inputs[0].dtype = DataType::kUint8;
  EXPECT_FALSE(PaddingOptions::FromModelOptions(options).ok());
  // Fixed-dim inputs are never padded, so any number is fine for them.
  options.inputs[0].dims = {4};
  EXPECT_TRUE(PaddingOptions::FromModelOptions(options).ok());
}

TEST(PaddingOptionsTest, RejectsMaskThatIsNotAnInput) {
  ModelOptions options = Model({Spec("ids", DataType::kInt64, {-1})});
  options.parameters["attention_mask_input"] = "attention_mask";
  absl::StatusOr<PaddingOptions> padding =
      PaddingOptions::FromModelOptions(options);
  EXPECT_EQ(padding.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(padding.status().message(),
              HasSubstr("parameters.attention_mask_input is "
                        "\"attention_mask\""));
}

TEST(PaddingOptionsTest, DefaultsWithoutParameters) {
  absl::StatusOr<PaddingOptions> padding = PaddingOptions::FromModelOptions(
      Model({Spec("ids", DataType::kInt64, {-1})}));
  ASSERT_TRUE(padding.ok()) << padding.status();
  EXPECT_EQ(padding->pad_value, 0.0);
  EXPECT_EQ(padding->attention_mask_input, "");
}

TEST(VariableLengthTest, MultipliesVariableDimsAndTakesTheMaxOverInputs) {
  ModelOptions options = Model({Spec("a", DataType::kFp32, {-1, 4}),
                                Spec("b", DataType::kFp32, {-1, -1}),
                                Spec("c", DataType::kFp32, {3})});
  std::vector<Tensor> inputs;
  inputs.push_back(Make<float>("a", {2, 7, 4}, std::vector<float>(56)));
  inputs.push_back(Make<float>("b", {2, 2, 3}, std::vector<float>(12)));
  inputs.push_back(Make<float>("c", {2, 3}, std::vector<float>(6)));
  EXPECT_EQ(VariableLength(options, inputs), 7);
  inputs[1] = Make<float>("b", {2, 3, 5}, std::vector<float>(30));
  EXPECT_EQ(VariableLength(options, inputs), 15);
}

TEST(VariableLengthTest, IsZeroWithoutVariableDims) {
  ModelOptions options = Model({Spec("c", DataType::kFp32, {3})});
  std::vector<Tensor> inputs;
  inputs.push_back(Make<float>("c", {2, 3}, std::vector<float>(6)));
  EXPECT_EQ(VariableLength(options, inputs), 0);
}

TEST(SplitOutputsTest, FixedOutputsBorrowFromTheBatchOutput) {
  ModelOptions options = Model({Spec("x", DataType::kFp32, {1})},
                               {Spec("y", DataType::kFp32, {2})});
  std::vector<std::vector<Tensor>> requests;
  requests.push_back(One(Make<float>("x", {1, 1}, {0})));
  requests.push_back(One(Make<float>("x", {2, 1}, {0, 0})));
  requests.push_back(One(Make<float>("x", {3, 1}, {0, 0, 0})));
  absl::StatusOr<AssembledBatch> batch =
      AssembleBatch(options, PaddingOptions{}, Ptrs(requests));
  ASSERT_TRUE(batch.ok()) << batch.status();
  Tensor y = Make<float>("y", {6, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  const std::byte* base = y.data();
  absl::StatusOr<std::vector<std::vector<Tensor>>> split =
      SplitOutputs(options, *batch, One(std::move(y)));
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ(split->size(), 3u);
  const std::vector<Tensor>& r1 = (*split)[1];
  ASSERT_EQ(r1.size(), 1u);
  EXPECT_EQ(r1[0].name(), "y");
  EXPECT_THAT(r1[0].shape(), ElementsAre(2, 2));
  EXPECT_EQ(r1[0].data(), base + 1 * 2 * sizeof(float));
  EXPECT_FALSE(r1[0].owns_data());
  EXPECT_THAT(r1[0].values<float>(), ElementsAre(3, 4, 5, 6));
  EXPECT_THAT((*split)[0][0].values<float>(), ElementsAre(1, 2));
  EXPECT_THAT((*split)[2][0].values<float>(), ElementsAre(7, 8, 9, 10, 11, 12));
}

TEST(SplitOutputsTest, PerTokenOutputIsCutBackToEachRequestsLength) {
  ModelOptions options = Model({Spec("ids", DataType::kInt64, {-1})},
                               {Spec("logits", DataType::kFp32, {-1, 2}),
                                Spec("pooled", DataType::kFp32, {2})});
  std::vector<std::vector<Tensor>> requests = Sequences();
  absl::StatusOr<AssembledBatch> batch =
      AssembleBatch(options, PaddingOptions{}, Ptrs(requests));
  ASSERT_TRUE(batch.ok()) << batch.status();
  std::vector<float> logits(3 * 5 * 2);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = static_cast<float>(i);
  Tensor pooled = Make<float>("pooled", {3, 2}, {0, 1, 2, 3, 4, 5});
  const std::byte* pooled_base = pooled.data();
  absl::StatusOr<std::vector<std::vector<Tensor>>> split = SplitOutputs(
      options, *batch,
      Two(Make<float>("logits", {3, 5, 2}, logits), std::move(pooled)));
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ(split->size(), 3u);
  // Request 0 (length 3): first 3 tokens of row 0, copied.
  const Tensor& l0 = (*split)[0][0];
  EXPECT_THAT(l0.shape(), ElementsAre(1, 3, 2));
  EXPECT_TRUE(l0.owns_data());
  EXPECT_THAT(l0.values<float>(), ElementsAre(0, 1, 2, 3, 4, 5));
  // Request 1 (length 5, the padded length): borrowed whole.
  const Tensor& l1 = (*split)[1][0];
  EXPECT_THAT(l1.shape(), ElementsAre(1, 5, 2));
  EXPECT_FALSE(l1.owns_data());
  EXPECT_THAT(l1.values<float>(),
              ElementsAre(10, 11, 12, 13, 14, 15, 16, 17, 18, 19));
  // Request 2 (length 2).
  const Tensor& l2 = (*split)[2][0];
  EXPECT_THAT(l2.shape(), ElementsAre(1, 2, 2));
  EXPECT_THAT(l2.values<float>(), ElementsAre(20, 21, 22, 23));
  // The fixed output is borrowed for everyone.
  EXPECT_EQ((*split)[2][1].data(), pooled_base + 2 * 2 * sizeof(float));
  EXPECT_THAT((*split)[2][1].shape(), ElementsAre(1, 2));
}

TEST(SplitOutputsTest, MismatchedOutputRowsIsInternalNamingTheOutput) {
  ModelOptions options = Model({Spec("x", DataType::kFp32, {1})},
                               {Spec("y", DataType::kFp32, {1})});
  std::vector<std::vector<Tensor>> requests;
  requests.push_back(One(Make<float>("x", {1, 1}, {0})));
  requests.push_back(One(Make<float>("x", {2, 1}, {0, 0})));
  absl::StatusOr<AssembledBatch> batch =
      AssembleBatch(options, PaddingOptions{}, Ptrs(requests));
  ASSERT_TRUE(batch.ok()) << batch.status();
  absl::StatusOr<std::vector<std::vector<Tensor>>> split =
      SplitOutputs(options, *batch, One(Make<float>("y", {2, 1}, {1, 2})));
  EXPECT_EQ(split.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(split.status().message(), HasSubstr("output 'y'"));
  EXPECT_THAT(split.status().message(), HasSubstr("3 rows"));

  split = SplitOutputs(options, *batch, {});
  EXPECT_EQ(split.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(split.status().message(), HasSubstr("returned 0 outputs"));
}

TEST(SplitOutputsTest, BatchOutputIsFreedWhenTheLastSliceDies) {
  ModelOptions options = Model({Spec("x", DataType::kFp32, {1})},
                               {Spec("y", DataType::kFp32, {1})});
  std::vector<std::vector<Tensor>> requests;
  requests.push_back(One(Make<float>("x", {1, 1}, {0})));
  requests.push_back(One(Make<float>("x", {1, 1}, {0})));
  absl::StatusOr<AssembledBatch> batch =
      AssembleBatch(options, PaddingOptions{}, Ptrs(requests));
  ASSERT_TRUE(batch.ok()) << batch.status();
  // An engine output that borrows from an owner we can watch.
  auto owner = std::make_shared<std::vector<float>>(std::vector<float>{1, 2});
  std::weak_ptr<std::vector<float>> watch = owner;
  absl::StatusOr<Tensor> y = Tensor::Borrow(
      "y", DataType::kFp32, {2, 1}, owner->data(), 2 * sizeof(float), owner);
  ASSERT_TRUE(y.ok()) << y.status();
  owner.reset();
  absl::StatusOr<std::vector<std::vector<Tensor>>> split =
      SplitOutputs(options, *batch, One(*std::move(y)));
  ASSERT_TRUE(split.ok()) << split.status();
  std::vector<Tensor> first = std::move((*split)[0]);
  std::vector<Tensor> second = std::move((*split)[1]);
  split->clear();
  EXPECT_FALSE(watch.expired());
  first.clear();
  EXPECT_FALSE(watch.expired());
  EXPECT_THAT(second[0].values<float>(), ElementsAre(2));
  second.clear();
  EXPECT_TRUE(watch.expired());
}

TEST(BatchKeyTest, DiffersExactlyWhenRequestsCannotShareABatch) {
  ModelOptions m;
  m.name = "m";
  m.max_batch_size = 8;
  m.inputs = {{"x", DataType::kFp32, {-1}},
              {"s", DataType::kBytes, {-1}},
              {"opt", DataType::kFp32, {2}, /*optional=*/true}};
  auto key = [&m](int64_t x_len, std::vector<std::string> s, bool opt) {
    std::vector<Tensor> in;
    in.push_back(Make<float>("x", {1, x_len},
                             std::vector<float>(static_cast<size_t>(x_len))));
    const int64_t n = static_cast<int64_t>(s.size());
    in.push_back(Strings("s", {1, n}, std::move(s)));
    if (opt) in.push_back(Make<float>("opt", {1, 2}, {1, 2}));
    return BatchKey(m, in);
  };
  // A padded FP32 length and the BYTES contents do not matter...
  EXPECT_EQ(key(3, {"a", "b"}, true), key(9, {"ccc", ""}, true));
  // ...the BYTES shape and the optional input's presence do.
  EXPECT_NE(key(3, {"a", "b"}, true), key(3, {"a", "b", "c"}, true));
  EXPECT_NE(key(3, {"a", "b"}, true), key(3, {"a", "b"}, false));
  // A model without optional or variable BYTES inputs has one key.
  ModelOptions fixed;
  fixed.max_batch_size = 8;
  fixed.inputs = {{"x", DataType::kFp32, {-1}}};
  EXPECT_EQ(
      BatchKey(fixed, One(Make<float>("x", {1, 2}, {1, 2}))),
      BatchKey(fixed, One(Make<float>("x", {2, 5}, std::vector<float>(10)))));
}

// PartBoundaries then SplitRows, as the batcher does.
absl::StatusOr<std::vector<std::vector<Tensor>>> Split(
    std::vector<Tensor> inputs, int64_t max_rows, size_t max_bytes = 0) {
  absl::StatusOr<std::vector<int64_t>> cut =
      PartBoundaries(inputs, max_rows, max_bytes);
  if (!cut.ok()) return cut.status();
  return SplitRows(std::move(inputs), *cut);
}

// Where a request is cut: rows of one fixed size (an FP32 input of `width`
// columns, plus a BYTES input when `strings` is set: row i holds a string of
// i bytes, 4 + i bytes with its length prefix).
struct PartCase {
  std::string name;
  int64_t rows;
  int64_t width;
  bool strings;
  int64_t max_rows;
  size_t max_bytes;
  std::vector<int64_t> want;  // empty: INVALID_ARGUMENT
  std::string error;          // part of the message
};

TEST(PartBoundariesTest, Table) {
  const std::vector<PartCase> cases = {
      {"FitsIsOnePart", 3, 2, false, 4, 0, {0, 3}, ""},
      {"RowsOverTheCapMakeFullPartsThenTheRest",
       10,
       2,
       false,
       4,
       0,
       {0, 4, 8, 10},
       ""},
      {"ExactMultipleHasNoEmptyPart", 8, 2, false, 4, 0, {0, 4, 8}, ""},
      // 8 bytes a row, 20 bytes a part: 2 rows, below the row cap of 4.
      {"ByteCapBelowTheRowCapMakesSmallerParts",
       5,
       2,
       false,
       4,
       20,
       {0, 2, 4, 5},
       ""},
      {"RowCapBelowTheByteCapWins", 5, 2, false, 2, 1000, {0, 2, 4, 5}, ""},
      {"ByteCapExactlyOneRow", 3, 2, false, 4, 8, {0, 1, 2, 3}, ""},
      {"OneRowOverTheByteCapIsRejected",
       3,
       2,
       false,
       4,
       7,
       {},
       "row 0 of the request has 8 bytes of input, more than max_batch_bytes "
       "(7)"},
      {"ZeroRowsAreOneEmptyPart", 0, 2, false, 4, 8, {0, 0}, ""},
      {"HugeByteCapLeavesTheRowCap",
       10,
       2,
       false,
       4,
       std::numeric_limits<size_t>::max(),
       {0, 4, 8, 10},
       ""},
      {"ZeroRowLimitIsRejected", 3, 2, false, 0, 0, {}, "at least 1"},
      // Row i: 4 bytes of FP32 + 4 + i bytes of string. Rows 0..5 are
      // 8, 9, 10, 11, 12, 13 bytes; parts of at most 21 bytes: {8, 9},
      // {10, 11}, {12}, {13}.
      {"VariableRowsAreCutGreedilyByBytes",
       6,
       1,
       true,
       4,
       21,
       {0, 2, 4, 5, 6},
       ""},
      {"VariableRowsStillObeyTheRowCap", 6, 1, true, 2, 1000, {0, 2, 4, 6}, ""},
      {"TheRowOverTheCapIsNamed",
       6,
       1,
       true,
       4,
       12,
       {},
       "row 5 of the request has 13 bytes"},
  };
  for (const PartCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<float> x(static_cast<size_t>(c.rows * c.width), 1.0f);
    std::vector<Tensor> inputs;
    inputs.push_back(Make<float>("x", {c.rows, c.width}, x));
    if (c.strings) {
      std::vector<std::string> s;
      for (int64_t i = 0; i < c.rows; ++i) s.push_back(std::string(i, 'a'));
      inputs.push_back(Strings("s", {c.rows}, s));
    }
    absl::StatusOr<std::vector<int64_t>> got =
        PartBoundaries(inputs, c.max_rows, c.max_bytes);
    if (c.want.empty()) {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(got.status().message(), HasSubstr(c.error));
      continue;
    }
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_THAT(*got, ElementsAreArray(c.want));
    // The parts hold exactly those rows and stay within both caps.
    absl::StatusOr<std::vector<std::vector<Tensor>>> parts =
        SplitRows(std::move(inputs), *got);
    ASSERT_TRUE(parts.ok()) << parts.status();
    ASSERT_EQ(parts->size(), c.want.size() - 1);
    for (size_t p = 0; p < parts->size(); ++p) {
      size_t bytes = 0;
      for (const Tensor& t : (*parts)[p]) {
        EXPECT_EQ(t.shape()[0], c.want[p + 1] - c.want[p]);
        bytes += t.byte_size();
      }
      if (c.max_bytes > 0) {
        EXPECT_LE(bytes, c.max_bytes) << "part " << p;
      }
    }
  }
}

TEST(SplitRowsTest, RejectsBoundariesThatDoNotCoverTheRows) {
  for (const std::vector<int64_t>& bad : std::vector<std::vector<int64_t>>{
           {}, {0}, {0, 2}, {1, 3}, {0, 2, 2, 3}, {0, 4}}) {
    absl::StatusOr<std::vector<std::vector<Tensor>>> parts =
        SplitRows(One(Make<float>("x", {3, 1}, {1, 2, 3})), bad);
    EXPECT_EQ(parts.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(parts.status().message(), HasSubstr("must rise from 0 to 3"));
  }
}

TEST(SplitRowsTest, TenRowsAtMostFourMakeFourFourTwoBorrowedParts) {
  std::vector<float> x(20);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  std::vector<std::string> s;
  for (int i = 0; i < 10; ++i) s.push_back(std::string(i, 'a' + i));
  Tensor xt = Make<float>("x", {10, 2}, x);
  const std::byte* base = xt.data();
  absl::StatusOr<std::vector<std::vector<Tensor>>> parts =
      Split(Two(std::move(xt), Strings("s", {10}, s)), 4);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 3u);
  EXPECT_THAT((*parts)[0][0].shape(), ElementsAre(4, 2));
  EXPECT_THAT((*parts)[1][0].shape(), ElementsAre(4, 2));
  EXPECT_THAT((*parts)[2][0].shape(), ElementsAre(2, 2));
  EXPECT_EQ((*parts)[1][0].data(), base + 4 * 2 * sizeof(float));
  EXPECT_FALSE((*parts)[1][0].owns_data());
  EXPECT_THAT((*parts)[2][0].values<float>(), ElementsAre(16, 17, 18, 19));
  EXPECT_THAT((*parts)[1][1].shape(), ElementsAre(4));
  EXPECT_THAT((*parts)[1][1].strings(),
              ElementsAre("eeee", "fffff", "gggggg", "hhhhhhh"));
  EXPECT_THAT((*parts)[2][1].strings(), ElementsAre("iiiiiiii", "jjjjjjjjj"));
}

TEST(SplitRowsTest, SmallRequestIsOnePartUnchanged) {
  Tensor xt = Make<float>("x", {3, 1}, {1, 2, 3});
  const std::byte* base = xt.data();
  absl::StatusOr<std::vector<std::vector<Tensor>>> parts =
      Split(One(std::move(xt)), 4);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_EQ((*parts)[0][0].data(), base);
}

TEST(SplitRowsTest, RejectsBadLimitAndDisagreeingRows) {
  EXPECT_EQ(Split(One(Make<float>("x", {3, 1}, {1, 2, 3})), 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::vector<std::vector<Tensor>>> parts =
      Split(Two(Make<float>("x", {3, 1}, {1, 2, 3}),
                Make<float>("z", {2, 1}, {1, 2})),
            1);
  EXPECT_EQ(parts.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(parts.status().message(), HasSubstr("input 'z'"));
}

TEST(ConcatRowsTest, JoinsSplitPartsBackIntoTheOriginal) {
  std::vector<int32_t> x(30);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>(i * 3);
  std::vector<std::string> s = {"a", "",   "ccc", "dd", "e",
                                "f", "gg", "",    "i",  "jj"};
  absl::StatusOr<std::vector<std::vector<Tensor>>> parts =
      Split(Two(Make<int32_t>("x", {10, 3}, x), Strings("s", {10, 1}, s)), 3);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 4u);
  absl::StatusOr<std::vector<Tensor>> joined = ConcatRows(*std::move(parts));
  ASSERT_TRUE(joined.ok()) << joined.status();
  ASSERT_EQ(joined->size(), 2u);
  EXPECT_TRUE((*joined)[0].owns_data());
  EXPECT_THAT((*joined)[0].shape(), ElementsAre(10, 3));
  EXPECT_THAT((*joined)[0].values<int32_t>(), ElementsAreArray(x));
  EXPECT_THAT((*joined)[1].shape(), ElementsAre(10, 1));
  EXPECT_THAT((*joined)[1].strings(), ElementsAreArray(s));
}

TEST(ConcatRowsTest, PartsThatDisagreeAreInternalNamingTheOutput) {
  std::vector<std::vector<Tensor>> parts;
  parts.push_back(One(Make<float>("y", {1, 2}, {1, 2})));
  parts.push_back(One(Make<float>("y", {1, 3}, {1, 2, 3})));
  absl::StatusOr<std::vector<Tensor>> joined = ConcatRows(std::move(parts));
  EXPECT_EQ(joined.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(joined.status().message(), HasSubstr("y: FP32 [1,3]"));
  EXPECT_EQ(ConcatRows({}).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ferry
