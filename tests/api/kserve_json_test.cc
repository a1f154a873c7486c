// SPDX-License-Identifier: Apache-2.0
#include "api/kserve_json.h"

#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace ferry {
namespace {

using ::testing::HasSubstr;

absl::Status ParseError(const std::string& json) {
  auto r = ParseInferenceRequest(json);
  return r.ok() ? absl::OkStatus() : r.status();
}

TEST(KserveJsonTest, ParsesNestedAndFlatTypedData) {
  auto r = ParseInferenceRequest(R"({
    "id": "req-7",
    "parameters": {"priority": 2, "timeout": 1500, "binary_data_output": true},
    "inputs": [
      {"name": "x", "shape": [2, 2], "datatype": "FP32", "data": [[1, 2.5], [3, -4]]},
      {"name": "ids", "shape": [3], "datatype": "INT64", "data": [1, 9007199254740993, -3]},
      {"name": "flag", "shape": [2], "datatype": "BOOL", "data": [true, false]},
      {"name": "s", "shape": [1], "datatype": "BYTES", "data": ["héllo"]}
    ],
    "outputs": [{"name": "y", "parameters": {"binary_data": false}}]
  })");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->id, "req-7");
  EXPECT_EQ(r->priority, 2u);
  EXPECT_EQ(r->timeout_us, 1500u);
  EXPECT_TRUE(r->binary_data_output);
  ASSERT_EQ(r->inputs.size(), 4u);
  auto x = r->inputs[0].values<float>();
  EXPECT_EQ(std::vector<float>(x.begin(), x.end()),
            (std::vector<float>{1, 2.5, 3, -4}));
  EXPECT_EQ(r->inputs[1].values<int64_t>()[1],
            9007199254740993LL);  // exact beyond 2^53
  EXPECT_EQ(r->inputs[2].values<bool>()[1], false);
  EXPECT_EQ(r->inputs[3].strings()[0], "héllo");
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_EQ(r->outputs[0].name, "y");
  EXPECT_EQ(r->outputs[0].binary_data, false);
}

TEST(KserveJsonTest, BinaryInputsAreBorrowedFromTheTail) {
  float values[3] = {1.5f, 2.5f, 3.5f};
  auto body =
      std::make_shared<std::string>(reinterpret_cast<const char*>(values), 12);
  auto r = ParseInferenceRequest(
      R"({"inputs":[{"name":"x","shape":[1,3],"datatype":"FP32",
                    "parameters":{"binary_data_size":12}}]})",
      *body, body);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->inputs[0].owns_data());
  EXPECT_EQ(reinterpret_cast<const char*>(r->inputs[0].data()), body->data());
  EXPECT_EQ(r->inputs[0].values<float>()[2], 3.5f);
}

TEST(KserveJsonTest, TruncatedBinarySectionIsAClearError) {
  std::string tail(8, '\0');
  auto r = ParseInferenceRequest(
      R"({"inputs":[{"name":"x","shape":[1,3],"datatype":"FP32",
                    "parameters":{"binary_data_size":12}}]})",
      tail);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("'x'"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("only 8 bytes"));
}

TEST(KserveJsonTest, ErrorsNameTheFieldAndTensor) {
  struct Case {
    std::string json;
    std::string expect;
  };
  const Case cases[] = {
      {"{not json", "not valid JSON"},
      {"[]", "must be a JSON object"},
      {R"({"id": 3, "inputs": []})", "'id' must be a string"},
      {R"({"inputs": {}})", "'inputs' is missing or not an array"},
      {R"({"inputs": [{"shape": [1], "datatype": "FP32", "data": [1]}]})",
       "inputs[0]: 'name' is missing"},
      {R"({"inputs": [{"name": "x", "shape": [1], "datatype": "FLOAT", "data": [1]}]})",
       "inputs[0] 'x': unknown datatype \"FLOAT\""},
      {R"({"inputs": [{"name": "x", "shape": [2], "datatype": "FP32", "data": [1]}]})",
       "inputs[0] 'x': data has 1 elements but shape [2] needs 2"},
      {R"({"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": ["a"]}]})",
       "element 0 is not a number"},
      {R"({"inputs": [{"name": "x", "shape": [1], "datatype": "UINT8", "data": [300]}]})",
       "element 0 is not an integer in [0, 255]"},
      {R"({"inputs": [{"name": "x", "shape": [1], "datatype": "INT32", "data": [1.5]}]})",
       "element 0 is not an integer"},
      {R"({"inputs": [{"name": "x", "shape": [-1], "datatype": "FP32", "data": [1]}]})",
       "shape must be an array of non-negative integers"},
      {R"({"inputs": [{"name": "x", "shape": [1], "datatype": "FP32"}]})",
       "'data' is missing"},
      {R"({"parameters": {"priority": -1}, "inputs": []})",
       "parameters.priority"},
      {R"({"inputs": [], "outputs": [{"parameters": {}}]})",
       "outputs[0]: 'name' is missing"},
  };
  for (const Case& c : cases) {
    absl::Status s = ParseError(c.json);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.json;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.expect)) << c.json;
  }
}

TEST(KserveJsonTest, ResponseIsValidJsonWithTypedFlatData) {
  InferenceResponse response;
  response.model_name = "m";
  response.model_version = "3";
  response.id = "a\"b";
  std::vector<float> y = {0.25f, 1e-7f, std::nanf("")};
  response.outputs.push_back(*Tensor::FromValues<float>("y", {1, 3}, y));
  std::vector<std::string> s = {"x\ny"};
  response.outputs.push_back(*Tensor::FromStrings("s", {1}, s));
  const std::string json = InferenceResponseToJson(response);

  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  EXPECT_EQ(std::string_view(doc["model_version"].get_string()), "3");
  EXPECT_EQ(std::string_view(doc["id"].get_string()), "a\"b");
  simdjson::dom::element out0 = doc["outputs"].at(0);
  EXPECT_EQ(std::string_view(out0["datatype"].get_string()), "FP32");
  EXPECT_EQ(double(out0["data"].at(0)), 0.25);
  EXPECT_FLOAT_EQ(float(double(out0["data"].at(1))), 1e-7f);
  EXPECT_TRUE(out0["data"].at(2).is_null());  // NaN has no JSON form
  EXPECT_EQ(std::string_view(doc["outputs"].at(1)["data"].at(0).get_string()),
            "x\ny");
}

TEST(KserveJsonTest, Fp16RoundTripsThroughJson) {
  auto r = ParseInferenceRequest(
      R"({"inputs": [{"name": "h", "shape": [2], "datatype": "FP16", "data": [0.5, -3]}]})");
  ASSERT_TRUE(r.ok()) << r.status();
  InferenceResponse response;
  response.outputs.push_back(std::move(r->inputs[0]));
  EXPECT_THAT(InferenceResponseToJson(response),
              HasSubstr("\"data\":[0.5,-3]"));
}

InferenceResponse TwoOutputResponse() {
  InferenceResponse response;
  response.model_name = "m";
  response.model_version = "1";
  response.outputs.push_back(
      *Tensor::FromValues<float>("y", {1, 2}, std::vector<float>{1.5f, -2.0f}));
  response.outputs.push_back(
      *Tensor::FromStrings("s", {2}, std::vector<std::string>{"ab", ""}));
  return response;
}

TEST(KserveJsonTest, BinaryOutputsFollowTheJsonWithTheirSizes) {
  const EncodedInferenceResponse e =
      EncodeInferenceResponse(TwoOutputResponse(), {}, true);
  ASSERT_TRUE(e.has_binary);
  const std::string json = e.body.substr(0, e.json_size);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  simdjson::dom::element y = doc["outputs"].at(0);
  EXPECT_EQ(uint64_t(y["parameters"]["binary_data_size"]), 8u);
  EXPECT_EQ(y["data"].error(), simdjson::NO_SUCH_FIELD);
  // BYTES: a 4-byte length per element, then the bytes.
  EXPECT_EQ(uint64_t(doc["outputs"].at(1)["parameters"]["binary_data_size"]),
            4u + 2u + 4u);
  ASSERT_EQ(e.body.size(), e.json_size + 8 + 10);
  float values[2];
  std::memcpy(values, e.body.data() + e.json_size, 8);
  EXPECT_EQ(values[0], 1.5f);
  EXPECT_EQ(values[1], -2.0f);
  EXPECT_EQ(e.body.substr(e.json_size + 8),
            std::string("\x02\0\0\0ab\0\0\0\0", 10));
}

TEST(KserveJsonTest, PerOutputBinaryDataOverridesTheRequestDefault) {
  // Default binary, but "s" asks for JSON.
  EncodedInferenceResponse e = EncodeInferenceResponse(
      TwoOutputResponse(), {{"s", false}}, /*binary_data_output=*/true);
  EXPECT_TRUE(e.has_binary);
  EXPECT_EQ(e.body.size(), e.json_size + 8);
  EXPECT_THAT(
      e.body.substr(0, e.json_size),
      HasSubstr(
          R"("name":"s","datatype":"BYTES","shape":[2],"data":["ab",""])"));
  // Default JSON, but "y" asks for binary.
  e = EncodeInferenceResponse(TwoOutputResponse(),
                              {{"y", true}, {"s", std::nullopt}},
                              /*binary_data_output=*/false);
  EXPECT_TRUE(e.has_binary);
  EXPECT_EQ(e.body.size(), e.json_size + 8);
  EXPECT_THAT(e.body.substr(0, e.json_size),
              HasSubstr(R"("parameters":{"binary_data_size":8})"));
}

TEST(KserveJsonTest, WithoutBinaryOutputsTheBodyIsPlainJson) {
  const EncodedInferenceResponse e =
      EncodeInferenceResponse(TwoOutputResponse(), {{"y", false}}, false);
  EXPECT_FALSE(e.has_binary);
  EXPECT_EQ(e.json_size, e.body.size());
  EXPECT_EQ(e.body, InferenceResponseToJson(TwoOutputResponse()));
}

// The client side (ferry bench): what EncodeInferenceRequest writes, the
// server's parser reads back exactly, as JSON data and as binary tensors.
TEST(KserveJsonTest, EncodedRequestsParseBackExactly) {
  for (bool binary : {false, true}) {
    InferenceRequest request;
    request.id = "r-1";
    request.priority = 2;
    request.timeout_us = 900;
    request.binary_data_output = true;
    const float xs[4] = {1.5f, -2.25f, 3.0e-8f, 7.0f};
    request.inputs.push_back(
        *Tensor::FromValues<float>("x", {2, 2}, absl::MakeConstSpan(xs)));
    const int64_t ids[3] = {1, 9007199254740993LL, -3};
    request.inputs.push_back(
        *Tensor::FromValues<int64_t>("ids", {3}, absl::MakeConstSpan(ids)));
    request.outputs.push_back({"y", false});
    const EncodedBody e = EncodeInferenceRequest(request, binary);
    EXPECT_EQ(e.has_binary, binary);
    EXPECT_EQ(e.body.size() - e.json_size, binary ? 16u + 24u : 0u);
    auto body = std::make_shared<std::string>(e.body);
    auto r = ParseInferenceRequest(
        absl::string_view(*body).substr(0, e.json_size),
        absl::string_view(*body).substr(e.json_size), body);
    ASSERT_TRUE(r.ok()) << r.status() << " in "
                        << e.body.substr(0, e.json_size);
    EXPECT_EQ(r->id, "r-1");
    EXPECT_EQ(r->priority, 2u);
    EXPECT_EQ(r->timeout_us, 900u);
    EXPECT_TRUE(r->binary_data_output);
    ASSERT_EQ(r->inputs.size(), 2u);
    auto x = r->inputs[0].values<float>();
    EXPECT_EQ(std::vector<float>(x.begin(), x.end()),
              std::vector<float>(xs, xs + 4));
    EXPECT_EQ(r->inputs[1].values<int64_t>()[1], 9007199254740993LL);
    ASSERT_EQ(r->outputs.size(), 1u);
    EXPECT_EQ(r->outputs[0].binary_data, false);
  }
}

TEST(KserveJsonTest, ErrorBody) {
  EXPECT_EQ(ErrorToJson("input 'x': bad"), R"({"error":"input 'x': bad"})");
}

}  // namespace
}  // namespace ferry
