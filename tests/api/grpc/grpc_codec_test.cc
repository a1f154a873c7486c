// SPDX-License-Identifier: Apache-2.0
#include "api/grpc/grpc_codec.h"

#include <cstring>
#include <string>
#include <vector>

#include "core/half.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ferry {
namespace {

using inference::ModelInferRequest;
using inference::ModelInferResponse;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

ModelInferRequest::InferInputTensor* AddInput(ModelInferRequest* r,
                                              const std::string& name,
                                              const std::string& datatype,
                                              std::vector<int64_t> shape) {
  auto* in = r->add_inputs();
  in->set_name(name);
  in->set_datatype(datatype);
  in->mutable_shape()->Add(shape.begin(), shape.end());
  return in;
}

template <typename T>
std::string RawBytes(std::vector<T> values) {
  std::string s(values.size() * sizeof(T), '\0');
  std::memcpy(s.data(), values.data(), s.size());
  return s;
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(GrpcCodecTest, DecodesEveryTypedContentsField) {
  ModelInferRequest r;
  r.set_id("x1");
  auto* b = AddInput(&r, "b", "BOOL", {2});
  b->mutable_contents()->add_bool_contents(true);
  b->mutable_contents()->add_bool_contents(false);
  auto* i8 = AddInput(&r, "i8", "INT8", {2});
  i8->mutable_contents()->add_int_contents(-128);
  i8->mutable_contents()->add_int_contents(127);
  auto* i64 = AddInput(&r, "i64", "INT64", {1});
  i64->mutable_contents()->add_int64_contents(int64_t{1} << 40);
  auto* u16 = AddInput(&r, "u16", "UINT16", {1});
  u16->mutable_contents()->add_uint_contents(65535);
  auto* u64 = AddInput(&r, "u64", "UINT64", {1});
  u64->mutable_contents()->add_uint64_contents(~uint64_t{0});
  auto* f = AddInput(&r, "f", "FP32", {1, 2});
  f->mutable_contents()->add_fp32_contents(1.5f);
  f->mutable_contents()->add_fp32_contents(-2);
  auto* d = AddInput(&r, "d", "FP64", {1});
  d->mutable_contents()->add_fp64_contents(0.25);
  auto* s = AddInput(&r, "s", "BYTES", {2});
  s->mutable_contents()->add_bytes_contents("hi");
  s->mutable_contents()->add_bytes_contents("");

  absl::StatusOr<InferenceRequest> got = InferRequestFromProto(&r);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->id, "x1");
  ASSERT_EQ(got->inputs.size(), 8u);
  EXPECT_THAT(got->inputs[0].values<bool>(), ElementsAre(true, false));
  EXPECT_THAT(got->inputs[1].values<int8_t>(), ElementsAre(-128, 127));
  EXPECT_THAT(got->inputs[2].values<int64_t>(), ElementsAre(int64_t{1} << 40));
  EXPECT_THAT(got->inputs[3].values<uint16_t>(), ElementsAre(65535));
  EXPECT_THAT(got->inputs[4].values<uint64_t>(), ElementsAre(~uint64_t{0}));
  EXPECT_EQ(got->inputs[5].shape(), (Shape{1, 2}));
  EXPECT_THAT(got->inputs[5].values<float>(), ElementsAre(1.5f, -2.0f));
  EXPECT_THAT(got->inputs[6].values<double>(), ElementsAre(0.25));
  EXPECT_THAT(got->inputs[7].strings(), ElementsAre("hi", ""));
}

TEST(GrpcCodecTest, NarrowIntegerOutOfRangeIsInvalidAndNamesTheInput) {
  ModelInferRequest r;
  AddInput(&r, "small", "INT8", {1})->mutable_contents()->add_int_contents(300);
  absl::StatusOr<InferenceRequest> got = InferRequestFromProto(&r);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(got.status()), HasSubstr("inputs[0] 'small'"));
  EXPECT_THAT(Message(got.status()), HasSubstr("300 is out of range for INT8"));
}

TEST(GrpcCodecTest, WrongFieldOrCountIsInvalid) {
  ModelInferRequest wrong_field;
  AddInput(&wrong_field, "x", "INT32", {1})
      ->mutable_contents()
      ->add_fp32_contents(1);
  auto a = InferRequestFromProto(&wrong_field);
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      Message(a.status()),
      HasSubstr("datatype INT32 takes int_contents, got fp32_contents"));

  ModelInferRequest wrong_count;
  AddInput(&wrong_count, "x", "FP32", {1, 4})
      ->mutable_contents()
      ->add_fp32_contents(1);
  auto b = InferRequestFromProto(&wrong_count);
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(b.status()),
              HasSubstr("inputs[0] 'x': fp32_contents has 1 elements, shape "
                        "[1,4] needs 4"));

  ModelInferRequest bad_type;
  AddInput(&bad_type, "x", "FP8", {1});
  EXPECT_THAT(Message(InferRequestFromProto(&bad_type).status()),
              HasSubstr("inputs[0] 'x'"));

  ModelInferRequest negative;
  AddInput(&negative, "x", "FP32", {-1});
  EXPECT_THAT(Message(InferRequestFromProto(&negative).status()),
              HasSubstr("negative dimension"));

  ModelInferRequest huge;
  AddInput(&huge, "x", "FP32", {int64_t{1} << 40, int64_t{1} << 40});
  EXPECT_THAT(Message(InferRequestFromProto(&huge).status()),
              HasSubstr("too large"));
}

TEST(GrpcCodecTest, Fp16NeedsRawContents) {
  ModelInferRequest typed;
  AddInput(&typed, "h", "FP16", {1});
  auto a = InferRequestFromProto(&typed);
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(a.status()), HasSubstr("raw_input_contents"));

  ModelInferRequest raw;
  AddInput(&raw, "h", "FP16", {2});
  raw.add_raw_input_contents(
      RawBytes<uint16_t>({FloatToHalf(1.0f), FloatToHalf(-0.5f)}));
  auto b = InferRequestFromProto(&raw);
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(b->inputs[0].byte_size(), 4u);
  uint16_t bits[2];
  std::memcpy(bits, b->inputs[0].data(), 4);
  EXPECT_EQ(HalfToFloat(bits[0]), 1.0f);
  EXPECT_EQ(HalfToFloat(bits[1]), -0.5f);
}

TEST(GrpcCodecTest, RawContentsAreMovedAndChecked) {
  ModelInferRequest r;
  AddInput(&r, "a", "FP32", {2});
  AddInput(&r, "s", "BYTES", {1});
  r.add_raw_input_contents(RawBytes<float>({3, 4}));
  r.add_raw_input_contents(std::string("\x02\x00\x00\x00ok", 6));
  auto got = InferRequestFromProto(&r);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(got->inputs[0].values<float>(), ElementsAre(3, 4));
  EXPECT_THAT(got->inputs[1].strings(), ElementsAre("ok"));
  EXPECT_TRUE(r.raw_input_contents(0).empty());  // moved, not copied

  ModelInferRequest short_raw;
  AddInput(&short_raw, "a", "FP32", {2});
  short_raw.add_raw_input_contents(RawBytes<float>({3}));
  auto s = InferRequestFromProto(&short_raw);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(s.status()),
              HasSubstr("raw_input_contents[0] (input 'a')"));
}

TEST(GrpcCodecTest, RawCountMismatchAndMixingAreInvalid) {
  ModelInferRequest count;
  AddInput(&count, "a", "FP32", {1});
  AddInput(&count, "b", "FP32", {1});
  count.add_raw_input_contents(RawBytes<float>({1}));
  EXPECT_THAT(
      Message(InferRequestFromProto(&count).status()),
      HasSubstr("raw_input_contents has 1 entries but the request has 2"));

  ModelInferRequest mixed;
  AddInput(&mixed, "a", "FP32", {1})->mutable_contents()->add_fp32_contents(1);
  mixed.add_raw_input_contents(RawBytes<float>({1}));
  auto m = InferRequestFromProto(&mixed);
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(m.status()), HasSubstr("inputs[0] 'a': has contents"));
}

TEST(GrpcCodecTest, ReadsPriorityTimeoutAndRequestedOutputs) {
  ModelInferRequest r;
  (*r.mutable_parameters())["priority"].set_uint64_param(2);
  (*r.mutable_parameters())["timeout"].set_int64_param(5000);
  (*r.mutable_parameters())["custom"].set_string_param("ignored");
  auto* out = r.add_outputs();
  out->set_name("B");
  (*out->mutable_parameters())["binary_data"].set_bool_param(true);
  auto got = InferRequestFromProto(&r);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->priority, 2u);
  EXPECT_EQ(got->timeout_us, 5000u);
  ASSERT_EQ(got->outputs.size(), 1u);
  EXPECT_EQ(got->outputs[0].name, "B");
  EXPECT_EQ(got->outputs[0].binary_data, true);

  ModelInferRequest negative;
  (*negative.mutable_parameters())["priority"].set_int64_param(-1);
  EXPECT_THAT(Message(InferRequestFromProto(&negative).status()),
              HasSubstr("parameters.priority: must not be negative"));
  ModelInferRequest text;
  (*text.mutable_parameters())["timeout"].set_string_param("5");
  EXPECT_THAT(Message(InferRequestFromProto(&text).status()),
              HasSubstr("parameters.timeout"));

  ModelInferRequest shm;
  auto* in = AddInput(&shm, "a", "FP32", {1});
  (*in->mutable_parameters())["shared_memory_region"].set_string_param("r");
  EXPECT_EQ(InferRequestFromProto(&shm).status().code(),
            absl::StatusCode::kUnimplemented);
}

TEST(GrpcCodecTest, EncodesTypedOrRawOutputs) {
  InferenceResponse response;
  response.model_name = "m";
  response.model_version = "3";
  response.id = "q";
  response.outputs.push_back(
      *Tensor::FromValues<int16_t>("i", {2}, std::vector<int16_t>{-3, 4}));
  response.outputs.push_back(*Tensor::FromStrings("s", {1}, {"abc"}));

  ModelInferResponse typed;
  InferResponseToProto(response, /*raw=*/false, &typed);
  EXPECT_EQ(typed.model_name(), "m");
  EXPECT_EQ(typed.model_version(), "3");
  EXPECT_EQ(typed.id(), "q");
  ASSERT_EQ(typed.outputs_size(), 2);
  EXPECT_EQ(typed.raw_output_contents_size(), 0);
  EXPECT_EQ(typed.outputs(0).datatype(), "INT16");
  EXPECT_THAT(typed.outputs(0).shape(), ElementsAre(2));
  EXPECT_THAT(typed.outputs(0).contents().int_contents(), ElementsAre(-3, 4));
  EXPECT_THAT(typed.outputs(1).contents().bytes_contents(), ElementsAre("abc"));

  ModelInferResponse raw;
  InferResponseToProto(response, /*raw=*/true, &raw);
  ASSERT_EQ(raw.raw_output_contents_size(), 2);
  EXPECT_FALSE(raw.outputs(0).has_contents());
  EXPECT_EQ(raw.raw_output_contents(0), RawBytes<int16_t>({-3, 4}));
  EXPECT_EQ(raw.raw_output_contents(1), std::string("\x03\x00\x00\x00"
                                                    "abc",
                                                    7));
}

TEST(GrpcCodecTest, Fp16OutputMakesTheResponseRaw) {
  InferenceResponse response;
  response.outputs.push_back(
      *Tensor::FromValues<float>("f", {1}, std::vector<float>{1}));
  response.outputs.push_back(*Tensor::FromBytes(
      "h", DataType::kFp16, {1}, RawBytes<uint16_t>({FloatToHalf(2.0f)})));
  ModelInferResponse proto;
  InferResponseToProto(response, /*raw=*/false, &proto);
  ASSERT_EQ(proto.raw_output_contents_size(), 2);
  EXPECT_EQ(proto.outputs(1).datatype(), "FP16");
  EXPECT_EQ(proto.raw_output_contents(0), RawBytes<float>({1}));
}

TEST(GrpcCodecTest, ParsesVersions) {
  EXPECT_EQ(*ParseModelVersion("version", ""), std::nullopt);
  EXPECT_EQ(*ParseModelVersion("version", "7"), 7);
  auto bad = ParseModelVersion("model_version", "latest");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(bad.status()),
              HasSubstr("model_version 'latest' is not a version number"));
}

TEST(GrpcCodecTest, MetadataPrependsTheBatchDimension) {
  ModelOptions options;
  options.name = "m";
  options.platform = "identity";
  options.max_batch_size = 4;
  options.inputs.push_back({"a", DataType::kFp32, {3, -1}});
  options.outputs.push_back({"A", DataType::kFp32, {3, -1}});
  inference::ModelMetadataResponse proto;
  MetadataToProto(options, &proto);
  EXPECT_EQ(proto.platform(), "identity");
  EXPECT_EQ(proto.inputs(0).datatype(), "FP32");
  EXPECT_THAT(proto.inputs(0).shape(), ElementsAre(-1, 3, -1));
  EXPECT_THAT(proto.outputs(0).shape(), ElementsAre(-1, 3, -1));
}

TEST(GrpcCodecTest, StatusCodesCarryOver) {
  grpc::Status s = ToGrpcStatus(absl::NotFoundError("model 'x'"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "model 'x'");
  EXPECT_EQ(ToGrpcStatus(absl::DeadlineExceededError("t")).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
}

}  // namespace
}  // namespace ferry
