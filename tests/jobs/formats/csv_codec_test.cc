// SPDX-License-Identifier: Apache-2.0
// The CSV codec: column mapping against the model, row parsing, request
// tensors, result and error lines.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/json_writer.h"
#include "core/half.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jobs/formats/record_format.h"

namespace ferry {
namespace {

InputScan JsonlScan() {
  InputScan scan;
  scan.format = RecordFormat::kJsonl;
  return scan;
}

using ::testing::AllOf;
using ::testing::HasSubstr;

TensorSpec Spec(std::string name, DataType dtype, std::vector<int64_t> dims,
                bool optional = false) {
  TensorSpec spec;
  spec.name = std::move(name);
  spec.dtype = dtype;
  spec.dims = std::move(dims);
  spec.optional = optional;
  return spec;
}

ModelOptions Model(std::vector<TensorSpec> inputs,
                   std::vector<TensorSpec> outputs, int max_batch_size = 8) {
  ModelOptions model;
  model.name = "m";
  model.max_batch_size = max_batch_size;
  model.inputs = std::move(inputs);
  model.outputs = std::move(outputs);
  return model;
}

InputScan Header(std::vector<std::string> names) {
  InputScan scan;
  scan.format = RecordFormat::kCsv;
  scan.header = std::move(names);
  return scan;
}

RawRecord Raw(std::string text, int64_t number = 0, int64_t line = 2) {
  RawRecord raw;
  raw.number = number;
  raw.line = line;
  raw.text = std::move(text);
  return raw;
}

std::unique_ptr<RecordCodec> MustCreate(const ModelOptions& model,
                                        const InputScan& scan,
                                        const CsvOptions& csv = {}) {
  auto codec = RecordCodec::Create(RecordFormat::kCsv, model, scan, csv);
  EXPECT_TRUE(codec.ok()) << codec.status();
  return codec.ok() ? std::move(*codec) : nullptr;
}

absl::Status CreateError(const ModelOptions& model, const InputScan& scan,
                         const CsvOptions& csv = {}) {
  auto codec = RecordCodec::Create(RecordFormat::kCsv, model, scan, csv);
  return codec.ok() ? absl::OkStatus() : codec.status();
}

template <typename T>
std::vector<T> Unpack(absl::string_view bytes, size_t offset, size_t count) {
  std::vector<T> values(count);
  std::memcpy(values.data(), bytes.data() + offset, count * sizeof(T));
  return values;
}

const ModelOptions kThreeFloats =
    Model({Spec("x", DataType::kFp32, {3})}, {Spec("y", DataType::kFp32, {1})});

TEST(CsvCodecTest, DefaultFeaturesAreEveryColumnButTheId) {
  CsvOptions csv;
  csv.id_column = "id";
  auto codec = MustCreate(kThreeFloats, Header({"f0", "id", "f1", "f2"}), csv);
  ASSERT_NE(codec, nullptr);
  auto parsed = codec->Parse(Raw("1.5,row-7, 2 ,-3e2", 41, 9));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->id, "row-7");
  EXPECT_EQ(Unpack<float>(parsed->payload, 0, 3),
            (std::vector<float>{1.5f, 2.0f, -300.0f}));
  EXPECT_EQ(parsed->raw.number, 41);
  EXPECT_EQ(parsed->raw.line, 9);
  EXPECT_EQ(parsed->raw.text, "1.5,row-7, 2 ,-3e2");
}

TEST(CsvCodecTest, WithoutAnIdColumnTheIdIsTheRecordNumber) {
  auto codec = MustCreate(kThreeFloats, Header({"a", "b", "c"}));
  ASSERT_NE(codec, nullptr);
  auto parsed = codec->Parse(Raw("1,2,3", 41));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->id, "41");
}

TEST(CsvCodecTest, ColumnsOptionSelectsAndOrders) {
  CsvOptions csv;
  csv.columns = {"c", "a", "e"};
  auto codec = MustCreate(kThreeFloats, Header({"a", "b", "c", "d", "e"}), csv);
  ASSERT_NE(codec, nullptr);
  auto parsed = codec->Parse(Raw("1,2,3,4,5"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(Unpack<float>(parsed->payload, 0, 3),
            (std::vector<float>{3, 1, 5}));
}

TEST(CsvCodecTest, MappingErrorsNameTheColumnsAndCounts) {
  CsvOptions id;
  id.id_column = "uid";
  absl::Status s = CreateError(kThreeFloats, Header({"id", "a", "b", "c"}), id);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("id column 'uid' is not in the CSV header"));

  CsvOptions columns;
  columns.columns = {"a", "zz", "yy"};
  s = CreateError(kThreeFloats, Header({"a", "b", "c"}), columns);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'zz', 'yy' are not in the CSV header"));

  columns.columns = {"a", "b", "a"};
  s = CreateError(kThreeFloats, Header({"a", "b", "c"}), columns);
  EXPECT_THAT(s.message(), HasSubstr("'a' is listed twice"));

  CsvOptions with_id;
  with_id.id_column = "id";
  s = CreateError(kThreeFloats, Header({"id", "a", "b"}), with_id);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("input 'x' takes 3 values per row"),
                                 HasSubstr("2 feature columns"),
                                 HasSubstr("id column 'id'")));

  columns.columns = {"a", "b"};
  s = CreateError(kThreeFloats, Header({"a", "b", "c"}), columns);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("input 'x' takes 3 values"),
                                 HasSubstr("columns lists 2")));
}

TEST(CsvCodecTest, ModelsCsvCannotFeedAreRefused) {
  const InputScan scan = Header({"a", "b"});
  absl::Status s = CreateError(
      Model({Spec("x", DataType::kFp32, {2})}, {}, /*max_batch_size=*/0), scan);
  EXPECT_THAT(s.message(), HasSubstr("max_batch_size"));
  s = CreateError(Model({Spec("s", DataType::kBytes, {2})}, {}), scan);
  EXPECT_THAT(s.message(), HasSubstr("input 's' is BYTES"));
  s = CreateError(Model({Spec("x", DataType::kFp32, {-1})}, {}), scan);
  EXPECT_THAT(s.message(), HasSubstr("input 'x' has variable dims [-1]"));
  s = CreateError(Model({Spec("x", DataType::kFp32, {2})},
                        {Spec("y", DataType::kFp32, {-1})}),
                  scan);
  EXPECT_THAT(s.message(), HasSubstr("output 'y' has variable dims"));
  CsvOptions columns;
  columns.columns = {"a"};
  s = CreateError(
      Model({Spec("a", DataType::kFp32, {}), Spec("b", DataType::kFp32, {})},
            {}),
      scan, columns);
  EXPECT_THAT(s.message(),
              HasSubstr("columns applies to a model with one input"));
  auto wrong =
      RecordCodec::Create(RecordFormat::kCsv, kThreeFloats, JsonlScan(), {});
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
}

const ModelOptions kThreeInputs =
    Model({Spec("a", DataType::kFp32, {2}), Spec("b", DataType::kInt64, {1}),
           Spec("c", DataType::kBool, {}, /*optional=*/true)},
          {Spec("y", DataType::kFp32, {1})});

TEST(CsvCodecTest, SeveralInputsTakeColumnsByName) {
  CsvOptions csv;
  csv.id_column = "id";
  auto codec = MustCreate(kThreeInputs, Header({"b", "a_1", "id", "a_0"}), csv);
  ASSERT_NE(codec, nullptr);
  auto p1 = codec->Parse(Raw("7,0.5,r1,-1", 0));
  auto p2 = codec->Parse(Raw("-9,2,r2,3", 1));
  ASSERT_TRUE(p1.ok()) << p1.status();
  ASSERT_TRUE(p2.ok()) << p2.status();
  // Payload: a's two floats, then b.
  EXPECT_EQ(Unpack<float>(p1->payload, 0, 2), (std::vector<float>{-1, 0.5}));
  EXPECT_EQ(Unpack<int64_t>(p1->payload, 8, 1), (std::vector<int64_t>{7}));

  const ParsedRecord* rows[] = {&*p1, &*p2};
  auto request = codec->BuildRequest(rows);
  ASSERT_TRUE(request.ok()) << request.status();
  // The optional input without columns is not sent.
  ASSERT_EQ(request->inputs.size(), 2u);
  const Tensor& a = request->inputs[0];
  EXPECT_EQ(a.name(), "a");
  EXPECT_EQ(a.shape(), (Shape{2, 2}));
  auto av = a.values<float>();
  EXPECT_EQ(std::vector<float>(av.begin(), av.end()),
            (std::vector<float>{-1, 0.5, 3, 2}));
  const Tensor& b = request->inputs[1];
  EXPECT_EQ(b.dtype(), DataType::kInt64);
  EXPECT_EQ(b.shape(), (Shape{2, 1}));
  EXPECT_EQ(b.values<int64_t>()[1], -9);

  // With the optional input's column present, it is sent too.
  auto all = MustCreate(kThreeInputs, Header({"a_0", "a_1", "b", "c"}));
  ASSERT_NE(all, nullptr);
  auto p3 = all->Parse(Raw("1,2,3,TRUE"));
  ASSERT_TRUE(p3.ok()) << p3.status();
  const ParsedRecord* one[] = {&*p3};
  auto r3 = all->BuildRequest(one);
  ASSERT_TRUE(r3.ok()) << r3.status();
  ASSERT_EQ(r3->inputs.size(), 3u);
  EXPECT_EQ(r3->inputs[2].shape(), (Shape{1}));
  EXPECT_EQ(r3->inputs[2].values<bool>()[0], true);
}

TEST(CsvCodecTest, SeveralInputsNameTheMissingColumns) {
  absl::Status s = CreateError(kThreeInputs, Header({"a_0", "b", "c"}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("input 'a' needs columns 'a_0' to 'a_1'"),
                    HasSubstr("missing: 'a_1'")));
  s = CreateError(kThreeInputs, Header({"a_0", "a_1", "bb"}));
  EXPECT_THAT(s.message(), HasSubstr("input 'b' needs a column named 'b'"));
}

TEST(CsvCodecTest, ParseErrorsNameTheLineColumnAndText) {
  auto codec = MustCreate(kThreeFloats, Header({"f0", "f1", "f2"}));
  ASSERT_NE(codec, nullptr);
  auto error = [&](std::string text) {
    auto parsed = codec->Parse(Raw(std::move(text), 0, 17));
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(parsed.status().message());
  };
  EXPECT_EQ(error("1,2"), "line 17: 2 fields, header has 3");
  EXPECT_EQ(error("1,2,3,4"), "line 17: 4 fields, header has 3");
  EXPECT_EQ(error("1,abc,3"), "line 17: column 'f1': 'abc' is not a number");
  EXPECT_EQ(error("1,2,3x"), "line 17: column 'f2': '3x' is not a number");
  EXPECT_EQ(error("1, ,3"), "line 17: column 'f1' is empty");
  EXPECT_EQ(error("1,2,"), "line 17: column 'f2' is empty");
  EXPECT_EQ(error("1e39,2,3"),
            "line 17: column 'f0': '1e39' is out of range for FP32");
  EXPECT_EQ(error("1,\"2,3"), "line 17: quoted field is not closed");
}

TEST(CsvCodecTest, ParsesEveryCsvDtype) {
  const ModelOptions model = Model(
      {Spec("f64", DataType::kFp64, {}), Spec("f16", DataType::kFp16, {}),
       Spec("i8", DataType::kInt8, {}), Spec("i16", DataType::kInt16, {}),
       Spec("i32", DataType::kInt32, {}), Spec("i64", DataType::kInt64, {}),
       Spec("u8", DataType::kUint8, {}), Spec("u16", DataType::kUint16, {}),
       Spec("u32", DataType::kUint32, {}), Spec("u64", DataType::kUint64, {}),
       Spec("b", DataType::kBool, {2})},
      {});
  auto codec =
      MustCreate(model, Header({"f64", "f16", "i8", "i16", "i32", "i64", "u8",
                                "u16", "u32", "u64", "b_0", "b_1"}));
  ASSERT_NE(codec, nullptr);
  auto parsed = codec->Parse(
      Raw("0.1,+1.5,-128,-32768,2147483647,-9223372036854775808,255,65535,"
          "4294967295,18446744073709551615,true,0"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const ParsedRecord* rows[] = {&*parsed};
  auto request = codec->BuildRequest(rows);
  ASSERT_TRUE(request.ok()) << request.status();
  const auto& in = request->inputs;
  ASSERT_EQ(in.size(), 11u);
  EXPECT_EQ(in[0].values<double>()[0], 0.1);
  uint16_t half;
  std::memcpy(&half, in[1].data(), 2);
  EXPECT_EQ(half, FloatToHalf(1.5f));
  EXPECT_EQ(in[2].values<int8_t>()[0], -128);
  EXPECT_EQ(in[3].values<int16_t>()[0], -32768);
  EXPECT_EQ(in[4].values<int32_t>()[0], 2147483647);
  EXPECT_EQ(in[5].values<int64_t>()[0], INT64_MIN);
  EXPECT_EQ(in[6].values<uint8_t>()[0], 255);
  EXPECT_EQ(in[7].values<uint16_t>()[0], 65535);
  EXPECT_EQ(in[8].values<uint32_t>()[0], 4294967295u);
  EXPECT_EQ(in[9].values<uint64_t>()[0], UINT64_MAX);
  EXPECT_EQ(in[10].shape(), (Shape{1, 2}));
  EXPECT_EQ(in[10].values<bool>()[0], true);
  EXPECT_EQ(in[10].values<bool>()[1], false);

  auto error = [&](std::string text) {
    auto p = codec->Parse(Raw(std::move(text), 0, 5));
    return std::string(p.status().message());
  };
  const std::string ok_tail = ",1,1,1,1,1,1,1,1,true,false";
  EXPECT_EQ(error("1,70000" + ok_tail),
            "line 5: column 'f16': '70000' is out of range for FP16");
  EXPECT_EQ(error("1,1,128,1,1,1,1,1,1,1,true,false"),
            "line 5: column 'i8': '128' is out of range for INT8");
  EXPECT_EQ(error("1,1,1.5,1,1,1,1,1,1,1,true,false"),
            "line 5: column 'i8': '1.5' is not an integer");
  EXPECT_EQ(error("1,1,1,1,1,1,-1,1,1,1,true,false"),
            "line 5: column 'u8': '-1' is out of range for UINT8");
  EXPECT_EQ(error("1,1,1,1,1,1,1,1,1,1,yes,false"),
            "line 5: column 'b_0': 'yes' is not a boolean (true, false, 1 or "
            "0)");
}

TEST(CsvCodecTest, UnderflowRoundsToZero) {
  auto codec = MustCreate(kThreeFloats, Header({"a", "b", "c"}));
  ASSERT_NE(codec, nullptr);
  auto parsed = codec->Parse(Raw("1e-60,-1e-60,1e-40"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const auto v = Unpack<float>(parsed->payload, 0, 3);
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_EQ(v[1], 0.0f);
  EXPECT_TRUE(std::signbit(v[1]));
  EXPECT_GT(v[2], 0.0f);
}

TEST(CsvCodecTest, QuotedFieldsAreUnescaped) {
  CsvOptions csv;
  csv.id_column = "id";
  auto codec = MustCreate(kThreeFloats, Header({"id", "a", "b", "c"}), csv);
  ASSERT_NE(codec, nullptr);
  auto parsed = codec->Parse(Raw("\"7,\"\"x\"\"\n\",\"1\",2,\" 3\""));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->id, "7,\"x\"\n");
  EXPECT_EQ(Unpack<float>(parsed->payload, 0, 3),
            (std::vector<float>{1, 2, 3}));
}

TEST(CsvCodecTest, BuildRequestStacksRowsAndLimitsTheirCount) {
  auto codec = MustCreate(
      Model({Spec("x", DataType::kFp32, {3})}, {}, /*max_batch_size=*/2),
      Header({"a", "b", "c"}));
  ASSERT_NE(codec, nullptr);
  EXPECT_EQ(codec->max_records_per_request(), 2);
  auto p1 = codec->Parse(Raw("1,2,3"));
  auto p2 = codec->Parse(Raw("4,5,6", 1));
  ASSERT_TRUE(p1.ok() && p2.ok());
  const ParsedRecord* rows[] = {&*p1, &*p2};
  auto request = codec->BuildRequest(rows);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_TRUE(request->id.empty());
  EXPECT_TRUE(request->outputs.empty());
  ASSERT_EQ(request->inputs.size(), 1u);
  const Tensor& x = request->inputs[0];
  EXPECT_EQ(x.name(), "x");
  EXPECT_EQ(x.dtype(), DataType::kFp32);
  EXPECT_EQ(x.shape(), (Shape{2, 3}));
  const float want[] = {1, 2, 3, 4, 5, 6};
  ASSERT_EQ(x.byte_size(), sizeof want);
  EXPECT_EQ(std::memcmp(x.data(), want, sizeof want), 0);

  const ParsedRecord* three[] = {&*p1, &*p2, &*p1};
  EXPECT_EQ(codec->BuildRequest(three).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(codec->BuildRequest({}).ok());

  EXPECT_EQ(MustCreate(Model({Spec("x", DataType::kFp32, {3})}, {}, 1000),
                       Header({"a", "b", "c"}))
                ->max_records_per_request(),
            64);
}

InferenceResponse Response(std::vector<Tensor> outputs) {
  InferenceResponse response;
  response.model_name = "m";
  response.model_version = "1";
  response.outputs = std::move(outputs);
  return response;
}

template <typename T>
Tensor Values(std::string name, Shape shape, std::vector<T> values) {
  return *Tensor::FromValues<T>(std::move(name), std::move(shape), values);
}

TEST(CsvCodecTest, ResultsUseShortestNumbersAndElementColumns) {
  const ModelOptions model = Model(
      {Spec("x", DataType::kFp32, {1})},
      {Spec("label", DataType::kInt64, {1}),
       Spec("probs", DataType::kFp32, {3}), Spec("ok", DataType::kBool, {}),
       Spec("d", DataType::kFp64, {1}), Spec("h", DataType::kFp16, {1})});
  CsvOptions csv;
  csv.id_column = "id";
  auto codec = MustCreate(model, Header({"id", "x"}), csv);
  ASSERT_NE(codec, nullptr);
  EXPECT_EQ(codec->OutputPreamble(),
            "id,label,probs_0,probs_1,probs_2,ok,d,h\n");
  auto p1 = codec->Parse(Raw("a,1"));
  auto p2 = codec->Parse(Raw("\"b,c\",2", 1));
  ASSERT_TRUE(p1.ok() && p2.ok());
  std::vector<Tensor> outputs;
  outputs.push_back(Values<int64_t>("label", {2, 1}, {3, -4}));
  outputs.push_back(Values<float>(
      "probs", {2, 3}, {0.1f, 1e-7f, 3.0f, 1.0f / 3.0f, 1e30f, -0.0f}));
  bool ok[] = {true, false};
  outputs.push_back(*Tensor::FromBytes(
      "ok", DataType::kBool, {2}, std::string(reinterpret_cast<char*>(ok), 2)));
  outputs.push_back(Values<double>("d", {2, 1}, {0.1, 1.0 / 3.0}));
  const uint16_t halves[] = {FloatToHalf(0.5f), FloatToHalf(-2.0f)};
  outputs.push_back(*Tensor::FromBytes(
      "h", DataType::kFp16, {2, 1},
      std::string(reinterpret_cast<const char*>(halves), 4)));
  // Out of config order: matched by name.
  std::swap(outputs[0], outputs[3]);
  const ParsedRecord* rows[] = {&*p1, &*p2};
  std::string out = "x";
  ASSERT_TRUE(
      codec->AppendResults(rows, Response(std::move(outputs)), &out).ok());
  EXPECT_EQ(out,
            "x"
            "a,3,0.1,1e-07,3,true,0.1,0.5\n"
            "\"b,c\",-4,0.33333334,1e+30,-0,false,0.3333333333333333,-2\n");
}

TEST(CsvCodecTest, FloatsPrintAsJsonWriterPrintsThem) {
  const ModelOptions model = Model({Spec("x", DataType::kFp32, {1})},
                                   {Spec("y", DataType::kFp32, {1})});
  auto codec = MustCreate(model, Header({"x"}));
  ASSERT_NE(codec, nullptr);
  std::mt19937 rng(3);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 2000; ++i) {
    uint32_t b = bits(rng);
    float v;
    std::memcpy(&v, &b, 4);
    if (!std::isfinite(v)) continue;
    auto parsed = codec->Parse(Raw("1", i));
    ASSERT_TRUE(parsed.ok());
    std::vector<Tensor> outputs;
    outputs.push_back(Values<float>("y", {1, 1}, {v}));
    std::string out;
    const ParsedRecord* rows[] = {&*parsed};
    ASSERT_TRUE(
        codec->AppendResults(rows, Response(std::move(outputs)), &out).ok());
    std::string json;
    JsonWriter(&json).Float(v);
    ASSERT_EQ(out, absl::StrCat(i, ",", json, "\n"));
  }
}

TEST(CsvCodecTest, NonFiniteAndBytesOutputs) {
  const ModelOptions model = Model(
      {Spec("x", DataType::kFp32, {1})},
      {Spec("y", DataType::kFp32, {3}), Spec("s", DataType::kBytes, {1})});
  auto codec = MustCreate(model, Header({"x"}));
  ASSERT_NE(codec, nullptr);
  auto parsed = codec->Parse(Raw("1", 5));
  ASSERT_TRUE(parsed.ok());
  std::vector<Tensor> outputs;
  outputs.push_back(Values<float>("y", {1, 3},
                                  {std::numeric_limits<float>::quiet_NaN(),
                                   std::numeric_limits<float>::infinity(),
                                   -std::numeric_limits<float>::infinity()}));
  outputs.push_back(*Tensor::FromStrings("s", {1, 1}, {"cat, \"tabby\""}));
  std::string out;
  const ParsedRecord* rows[] = {&*parsed};
  ASSERT_TRUE(
      codec->AppendResults(rows, Response(std::move(outputs)), &out).ok());
  EXPECT_EQ(out, "5,nan,inf,-inf,\"cat, \"\"tabby\"\"\"\n");
}

TEST(CsvCodecTest, KeptColumnsFollowTheId) {
  CsvOptions csv;
  csv.id_column = "id";
  csv.keep_columns = true;
  csv.columns = {"f"};
  auto codec = MustCreate(Model({Spec("x", DataType::kFp32, {1})},
                                {Spec("y", DataType::kFp32, {1})}),
                          Header({"note", "id", "f", "label,2"}), csv);
  ASSERT_NE(codec, nullptr);
  EXPECT_EQ(codec->OutputPreamble(), "id,note,f,\"label,2\",y\n");
  EXPECT_EQ(codec->InputPreamble(), "note,id,f,\"label,2\"\n");
  auto parsed = codec->Parse(Raw("\"hi, \"\"you\"\"\",r9, 2.5 ,"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  std::vector<Tensor> outputs;
  outputs.push_back(Values<float>("y", {1, 1}, {0.25f}));
  std::string out;
  const ParsedRecord* rows[] = {&*parsed};
  ASSERT_TRUE(
      codec->AppendResults(rows, Response(std::move(outputs)), &out).ok());
  EXPECT_EQ(out, "r9,\"hi, \"\"you\"\"\",\" 2.5 \",,0.25\n");
}

TEST(CsvCodecTest, BadResponsesAreErrorsThatWriteNothing) {
  const ModelOptions model =
      Model({Spec("x", DataType::kFp32, {1})},
            {Spec("y", DataType::kFp32, {2}), Spec("z", DataType::kFp32, {1})});
  auto codec = MustCreate(model, Header({"x"}));
  ASSERT_NE(codec, nullptr);
  auto parsed = codec->Parse(Raw("1"));
  ASSERT_TRUE(parsed.ok());
  const ParsedRecord* rows[] = {&*parsed};
  std::string out = "kept";

  std::vector<Tensor> missing;
  missing.push_back(Values<float>("y", {1, 2}, {1, 2}));
  absl::Status s =
      codec->AppendResults(rows, Response(std::move(missing)), &out);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("no output 'z'"));

  std::vector<Tensor> short_shape;
  short_shape.push_back(Values<float>("y", {1, 1}, {1}));
  short_shape.push_back(Values<float>("z", {1, 1}, {1}));
  s = codec->AppendResults(rows, Response(std::move(short_shape)), &out);
  EXPECT_THAT(s.message(), HasSubstr("output 'y' has shape [1,1]"));
  EXPECT_EQ(out, "kept");
}

TEST(CsvCodecTest, ErrorAndDeadLetterLines) {
  auto codec = MustCreate(kThreeFloats, Header({"a", "b", "c"}));
  ASSERT_NE(codec, nullptr);
  const RawRecord raw = Raw("1,\"x\ny\",3", 16, 17);
  std::string out;
  codec->AppendError(raw, "", "invalid_record",
                     absl::InvalidArgumentError("line 17: column 'b': bad"), 1,
                     &out);
  codec->AppendError(raw, "id-\"7\"", "inference_failed",
                     absl::UnavailableError("queue full"), 3, &out);
  EXPECT_EQ(
      out,
      "{\"line\":17,\"id\":\"16\",\"error\":{\"code\":\"invalid_record\","
      "\"message\":\"line 17: column 'b': bad\"},\"attempts\":1}\n"
      "{\"line\":17,\"id\":\"id-\\\"7\\\"\",\"error\":{\"code\":"
      "\"inference_failed\",\"message\":\"queue full\"},\"attempts\":3}\n");
  out.clear();
  codec->AppendDeadLetter(raw, "r1", absl::UnavailableError("down"), 5, 3,
                          &out);
  EXPECT_EQ(out,
            "{\"line\":17,\"id\":\"r1\",\"record\":\"1,\\\"x\\ny\\\",3\","
            "\"error\":{\"code\":\"unavailable\",\"message\":\"down\"},"
            "\"attempts\":5,\"model_version\":3}\n");
  auto record = DeadLetterRecord(out);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(*record, raw.text);
}

TEST(CsvCodecTest, AnUnparsedRecordsErrorLineCarriesItsIdColumn) {
  CsvOptions csv;
  csv.id_column = "id";
  auto codec = MustCreate(kThreeFloats, Header({"f0", "id", "f1", "f2"}), csv);
  ASSERT_NE(codec, nullptr);
  const RawRecord bad_value = Raw("1,txn-42,oops,3", 16, 17);
  ASSERT_FALSE(codec->Parse(bad_value).ok());
  std::string out;
  codec->AppendError(bad_value, "", "invalid_record",
                     absl::InvalidArgumentError("bad"), 0, &out);
  EXPECT_THAT(out, HasSubstr("\"id\":\"txn-42\""));
  // Too few fields to reach the id column, or an unsplittable line: the
  // record number.
  out.clear();
  codec->AppendError(Raw("1", 20, 21), "", "invalid_record",
                     absl::InvalidArgumentError("bad"), 0, &out);
  codec->AppendError(Raw("1,\"open", 21, 22), "", "invalid_record",
                     absl::InvalidArgumentError("bad"), 0, &out);
  EXPECT_THAT(out, HasSubstr("\"id\":\"20\""));
  EXPECT_THAT(out, HasSubstr("\"id\":\"21\""));
}

}  // namespace
}  // namespace ferry
