// SPDX-License-Identifier: Apache-2.0
// The JSONL codec: OpenAI Batch lines in, KServe requests out, OpenAI-shaped
// result and error lines back.
#include <string>
#include <vector>

#include "api/kserve_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jobs/formats/record_format.h"
#include "simdjson.h"

namespace ferry {
namespace {

InputScan JsonlScan() {
  InputScan scan;
  scan.format = RecordFormat::kJsonl;
  return scan;
}

using ::testing::HasSubstr;

RawRecord Raw(std::string text, int64_t number = 4, int64_t line = 5) {
  RawRecord raw;
  raw.number = number;
  raw.line = line;
  raw.text = std::move(text);
  return raw;
}

std::unique_ptr<RecordCodec> Codec() {
  ModelOptions model;
  model.name = "adder";
  auto codec =
      RecordCodec::Create(RecordFormat::kJsonl, model, JsonlScan(), {});
  EXPECT_TRUE(codec.ok()) << codec.status();
  return codec.ok() ? std::move(*codec) : nullptr;
}

constexpr char kBody[] =
    R"({"inputs":[{"name":"x","shape":[1,2],"datatype":"FP32","data":[1.5,2]}]})";

std::string Line(const std::string& url, const std::string& body = kBody) {
  return R"({"custom_id":"req-1","method":"POST","url":")" + url +
         R"(","body":)" + body + "}";
}

TEST(JsonlCodecTest, ParsesABatchLineAndBuildsItsRequest) {
  auto codec = Codec();
  ASSERT_NE(codec, nullptr);
  EXPECT_EQ(codec->max_records_per_request(), 1);
  EXPECT_EQ(codec->OutputPreamble(), "");
  EXPECT_EQ(codec->InputPreamble(), "");
  for (const std::string url :
       {"/v2/models/adder/infer", "/v2/models/adder/versions/3/infer"}) {
    auto parsed = codec->Parse(Raw(Line(url)));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->id, "req-1");
    EXPECT_EQ(parsed->raw.number, 4);
    const ParsedRecord* one[] = {&*parsed};
    auto request = codec->BuildRequest(one);
    ASSERT_TRUE(request.ok()) << request.status();
    ASSERT_EQ(request->inputs.size(), 1u);
    EXPECT_EQ(request->inputs[0].name(), "x");
    EXPECT_EQ(request->inputs[0].shape(), (Shape{1, 2}));
    EXPECT_EQ(request->inputs[0].values<float>()[0], 1.5f);
  }
  // method and url may be left out: the job names the model.
  auto bare = codec->Parse(Raw(R"({"custom_id":"z","body":{"inputs":[]}})"));
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(bare->id, "z");
}

TEST(JsonlCodecTest, ParseErrorsNameTheField) {
  auto codec = Codec();
  ASSERT_NE(codec, nullptr);
  auto error = [&](const std::string& text) {
    auto parsed = codec->Parse(Raw(text));
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(parsed.status().message());
  };
  EXPECT_EQ(error(Line("/v2/models/other/infer")),
            "line 5: url names model 'other', the job runs 'adder'");
  EXPECT_THAT(error(Line("/v1/chat/completions")),
              HasSubstr("line 5: 'url' must be /v2/models/<model>"));
  EXPECT_THAT(error(Line("/v2/models/adder/versions/x/infer")),
              HasSubstr("'url' must be"));
  EXPECT_THAT(error("{\"custom_id\":7,\"body\":{}}"),
              HasSubstr("line 5: 'custom_id' is missing or not a string"));
  EXPECT_THAT(error("{\"body\":{}}"), HasSubstr("'custom_id'"));
  EXPECT_THAT(error("{\"custom_id\":\"\",\"body\":{}}"),
              HasSubstr("'custom_id' is empty"));
  EXPECT_THAT(error("{\"custom_id\":\"a\",\"method\":\"GET\",\"body\":{}}"),
              HasSubstr("'method' must be \"POST\", got \"GET\""));
  EXPECT_THAT(error("{\"custom_id\":\"a\",\"body\":[1]}"),
              HasSubstr("'body' is missing or not an object"));
  EXPECT_THAT(error("{\"custom_id\":\"a\"}"), HasSubstr("'body'"));
  EXPECT_THAT(error("{\"custom_id\":"), HasSubstr("line 5: not valid JSON"));
  EXPECT_THAT(error("[1]"), HasSubstr("must be a JSON object"));
}

TEST(JsonlCodecTest, ABodyTheKserveCodecRefusesIsInvalidArgument) {
  auto codec = Codec();
  ASSERT_NE(codec, nullptr);
  auto parsed = codec->Parse(Raw(Line(
      "/v2/models/adder/infer",
      R"({"inputs":[{"name":"x","shape":[1,4],"datatype":"FP32","data":[1]}]})")));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const ParsedRecord* one[] = {&*parsed};
  auto request = codec->BuildRequest(one);
  EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(request.status().message(),
              HasSubstr("line 5: body: inputs[0] 'x'"));
  const ParsedRecord* two[] = {&*parsed, &*parsed};
  EXPECT_FALSE(codec->BuildRequest(two).ok());
}

TEST(JsonlCodecTest, CsvOptionsAreRefused) {
  ModelOptions model;
  model.name = "adder";
  CsvOptions csv;
  csv.id_column = "id";
  auto codec =
      RecordCodec::Create(RecordFormat::kJsonl, model, JsonlScan(), csv);
  EXPECT_EQ(codec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(codec.status().message(), HasSubstr("id_column"));
}

TEST(JsonlCodecTest, ResultLineIsTheOpenAiShape) {
  auto codec = Codec();
  ASSERT_NE(codec, nullptr);
  auto parsed = codec->Parse(Raw(Line("/v2/models/adder/infer"), 12));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  InferenceResponse response;
  response.model_name = "adder";
  response.model_version = "1";
  response.outputs.push_back(
      *Tensor::FromValues<float>("y", {1, 2}, std::vector<float>{0.1f, 3}));
  const std::string body = InferenceResponseToJson(response);
  std::string out;
  const ParsedRecord* one[] = {&*parsed};
  ASSERT_TRUE(codec->AppendResults(one, response, &out).ok());
  EXPECT_EQ(out,
            "{\"id\":\"batch_req_12\",\"custom_id\":\"req-1\",\"response\":{"
            "\"status_code\":200,\"request_id\":\"batch_req_12\",\"body\":" +
                body + "},\"error\":null}\n");
  EXPECT_THAT(body, HasSubstr("[0.1,3]"));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(out).get(doc), simdjson::SUCCESS);

  // The same record answered again writes the same bytes.
  std::string again;
  ASSERT_TRUE(codec->AppendResults(one, response, &again).ok());
  EXPECT_EQ(again, out);
}

TEST(JsonlCodecTest, ErrorLinesCarryAnHttpLikeResponse) {
  auto codec = Codec();
  ASSERT_NE(codec, nullptr);
  std::string out;
  const RawRecord raw =
      Raw(R"({"custom_id":"c-9","url":"/v2/models/x/infer"})", 8, 9);
  codec->AppendError(raw, "", "invalid_record",
                     absl::InvalidArgumentError("bad url"), 1, &out);
  EXPECT_EQ(
      out,
      "{\"line\":9,\"id\":\"batch_req_8\",\"custom_id\":\"c-9\","
      "\"response\":{\"status_code\":400,\"body\":{\"error\":\"bad url\"}},"
      "\"error\":{\"code\":\"invalid_record\",\"message\":\"bad url\"},"
      "\"attempts\":1}\n");
  out.clear();
  codec->AppendError(Raw("not json", 0, 1), "", "invalid_record",
                     absl::InvalidArgumentError("x"), 1, &out);
  EXPECT_THAT(out, HasSubstr("\"custom_id\":null"));
  out.clear();
  codec->AppendError(raw, "given", "inference_failed",
                     absl::UnavailableError("busy"), 4, &out);
  EXPECT_THAT(out, HasSubstr("\"custom_id\":\"given\""));
  EXPECT_THAT(out, HasSubstr("\"status_code\":500"));
  EXPECT_THAT(out, HasSubstr("\"attempts\":4}\n"));
}

TEST(JsonlCodecTest, DeadLetterRoundTrip) {
  auto codec = Codec();
  ASSERT_NE(codec, nullptr);
  const std::string text = Line("/v2/models/adder/infer");
  std::string out;
  codec->AppendDeadLetter(Raw(text, 2, 3), "req-1",
                          absl::DeadlineExceededError("expired"), 2, 7, &out);
  EXPECT_EQ(out.find("{\"line\":3,\"custom_id\":\"req-1\",\"record\":"), 0u);
  EXPECT_THAT(out, HasSubstr("\"error\":{\"code\":\"deadline_exceeded\","
                             "\"message\":\"expired\"},\"attempts\":2,"
                             "\"model_version\":7}\n"));
  auto record = DeadLetterRecord(out);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(*record, text);
}

}  // namespace
}  // namespace ferry
