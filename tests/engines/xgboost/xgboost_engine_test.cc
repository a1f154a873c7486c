// SPDX-License-Identifier: Apache-2.0
// Tests of the XGBoost engine against models trained and predicted by Python
// XGBoost (make_fixture.py, run once per test binary into a temporary folder of
// the build tree).
#include "engines/xgboost/xgboost_engine.h"

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ferry {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr int64_t kFeatures = 32;
constexpr int64_t kRows = 64;
constexpr int64_t kClasses = 3;

std::vector<float> ReadFloats(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

void WriteFile(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

ModelOptions Options(int64_t output_width = 1,
                     std::map<std::string, std::string> parameters = {}) {
  ModelOptions options;
  options.name = "fraud";
  options.platform = "xgboost";
  options.max_batch_size = kRows;
  options.inputs.push_back(
      TensorSpec{.name = "x", .dtype = DataType::kFp32, .dims = {kFeatures}});
  options.outputs.push_back(TensorSpec{
      .name = "y", .dtype = DataType::kFp32, .dims = {output_width}});
  options.parameters = std::move(parameters);
  options.instance_groups.push_back(InstanceGroupOptions{});
  return options;
}

// Trains the fixture models once per test binary, in a fresh folder of the
// build tree that goes away at the end.
class FixtureEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    const fs::path base = fs::path(FERRY_BINARY_DIR) / "test_tmp";
    fs::create_directories(base);
    std::string pattern = (base / "xgboost_engine_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr) << pattern;
    dir_ = pattern;
    const std::string command = absl::StrCat(
        "/usr/bin/python3 '", FERRY_SOURCE_DIR,
        "/tests/engines/xgboost/make_fixture.py' '", dir_.string(), "'");
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }

  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  static const fs::path& dir() { return dir_; }

 private:
  static fs::path dir_;
};

fs::path FixtureEnvironment::dir_;
::testing::Environment* const kFixture =
    ::testing::AddGlobalTestEnvironment(new FixtureEnvironment);

class XgboostEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(dir() / "rows.bin")) << "fixture script failed";
    rows_ = ReadFloats(dir() / "rows.bin");
    ASSERT_EQ(rows_.size(), static_cast<size_t>(kRows * kFeatures));
  }

  static const fs::path& dir() { return FixtureEnvironment::dir(); }

  // A fresh version folder holding `source` under `name`.
  fs::path VersionDirWith(const fs::path& source, const std::string& name) {
    const fs::path version =
        dir() /
        absl::StrCat(
            ::testing::UnitTest::GetInstance()->current_test_info()->name(),
            "_", copies_++);
    fs::create_directories(version);
    fs::copy_file(source, version / name);
    return version;
  }

  absl::StatusOr<std::unique_ptr<Engine>> Create(const fs::path& version_dir,
                                                 ModelOptions options,
                                                 int threads = 1) {
    EngineLoadContext context;
    context.version_dir = version_dir;
    context.options = std::move(options);
    context.intra_op_threads = threads;
    return factory_.Create(context);
  }

  // Runs rows [first, first + count) and returns the output values, checking
  // the shape.
  std::vector<float> RunRows(Engine& engine, int64_t first, int64_t count,
                             int64_t width) {
    absl::StatusOr<Tensor> input =
        Tensor::Borrow("x", DataType::kFp32, {count, kFeatures},
                       rows_.data() + first * kFeatures,
                       static_cast<size_t>(count * kFeatures) * sizeof(float));
    EXPECT_TRUE(input.ok()) << input.status();
    if (!input.ok()) return {};
    absl::StatusOr<std::vector<Tensor>> out =
        engine.Run(absl::MakeConstSpan(&*input, 1));
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return {};
    EXPECT_EQ(out->size(), 1u);
    const Tensor& y = out->front();
    EXPECT_EQ(y.name(), "y");
    EXPECT_EQ(y.dtype(), DataType::kFp32);
    EXPECT_EQ(y.shape(), (Shape{count, width}));
    auto values = y.values<float>();
    return std::vector<float>(values.begin(), values.end());
  }

  std::vector<float> RunAll(const fs::path& version_dir, ModelOptions options,
                            int64_t width = 1) {
    absl::StatusOr<std::unique_ptr<Engine>> engine =
        Create(version_dir, std::move(options));
    EXPECT_TRUE(engine.ok()) << engine.status();
    if (!engine.ok()) return {};
    return RunRows(**engine, 0, kRows, width);
  }

  static void ExpectNear(const std::vector<float>& actual,
                         const std::vector<float>& expected, float tolerance) {
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i) {
      EXPECT_NEAR(actual[i], expected[i], tolerance) << "value " << i;
    }
  }

  XgboostEngineFactory factory_;
  std::vector<float> rows_;
  int copies_ = 0;
};

class XgboostFormatTest : public XgboostEngineTest,
                          public ::testing::WithParamInterface<const char*> {};

TEST_P(XgboostFormatTest, OutputEqualsPythonPredict) {
  // Alone in its folder, so the default candidate list must find it.
  const fs::path version =
      VersionDirWith(dir() / "binary" / GetParam(), GetParam());
  ExpectNear(RunAll(version, Options()), ReadFloats(dir() / "binary_pred.bin"),
             1e-6f);
}

TEST_P(XgboostFormatTest, LoadsUnderFilFileNameWhateverTheFormat) {
  // Triton FIL's "xgboost.model" tells nothing about the format; the contents
  // do.
  const fs::path version =
      VersionDirWith(dir() / "binary" / GetParam(), "xgboost.model");
  ExpectNear(RunAll(version, Options(1, {{"model_type", "xgboost"}})),
             ReadFloats(dir() / "binary_pred.bin"), 1e-6f);
}

INSTANTIATE_TEST_SUITE_P(JsonUbjAndLegacyBinary, XgboostFormatTest,
                         ::testing::Values("model.json", "model.ubj",
                                           "model.bin"));

TEST_F(XgboostEngineTest, DefaultModelFilenameWins) {
  const fs::path version =
      VersionDirWith(dir() / "binary" / "model.bin", "custom.name");
  fs::copy_file(dir() / "multi" / "model.json", version / "model.json");
  ModelOptions options = Options();
  options.default_model_filename = "custom.name";
  ExpectNear(RunAll(version, options), ReadFloats(dir() / "binary_pred.bin"),
             1e-6f);
}

TEST_F(XgboostEngineTest, FilModelTypeJsonReadsXgboostJson) {
  const fs::path version =
      VersionDirWith(dir() / "binary" / "model.json", "xgboost.json");
  fs::copy_file(dir() / "multi" / "model.json", version / "model.json");
  ExpectNear(RunAll(version, Options(1, {{"model_type", "xgboost_json"}})),
             ReadFloats(dir() / "binary_pred.bin"), 1e-6f);
}

TEST_F(XgboostEngineTest, MarginModeEqualsOutputMargin) {
  ExpectNear(
      RunAll(dir() / "binary", Options(1, {{"predict_type", "margin"}}), 1),
      ReadFloats(dir() / "binary_margin.bin"), 1e-6f);
  ExpectNear(RunAll(dir() / "multi",
                    Options(kClasses, {{"predict_type", "margin"}}), kClasses),
             ReadFloats(dir() / "multi_margin.bin"), 1e-6f);
}

TEST_F(XgboostEngineTest, FilPredictProbaGivesOneMinusPAndP) {
  const std::vector<float> p = ReadFloats(dir() / "binary_pred.bin");
  std::vector<float> expected;
  for (float v : p) {
    expected.push_back(1.0f - v);
    expected.push_back(v);
  }
  ExpectNear(
      RunAll(dir() / "binary",
             Options(2, {{"output_class", "true"}, {"predict_proba", "true"}}),
             2),
      expected, 1e-6f);
}

TEST_F(XgboostEngineTest, FilOutputClassThresholdsTheProbability) {
  const std::vector<float> p = ReadFloats(dir() / "binary_pred.bin");
  for (float threshold : {0.5f, 0.9f}) {
    std::vector<float> expected;
    for (float v : p) expected.push_back(v > threshold ? 1.0f : 0.0f);
    std::map<std::string, std::string> params = {{"output_class", "True"}};
    if (threshold != 0.5f) params["threshold"] = "0.9";
    EXPECT_EQ(RunAll(dir() / "binary", Options(1, params), 1), expected)
        << "threshold " << threshold;
  }
  // Both classes occur, so the comparison above means something.
  EXPECT_TRUE(
      std::any_of(p.begin(), p.end(), [](float v) { return v > 0.9f; }));
  EXPECT_TRUE(
      std::any_of(p.begin(), p.end(), [](float v) { return v < 0.5f; }));
}

TEST_F(XgboostEngineTest, FilOutputClassFalseGivesRawPrediction) {
  ExpectNear(
      RunAll(dir() / "binary",
             Options(1, {{"output_class", "false"}, {"predict_proba", "true"}}),
             1),
      ReadFloats(dir() / "binary_pred.bin"), 1e-6f);
}

TEST_F(XgboostEngineTest, MultiClassSoftprobGivesOneColumnPerClass) {
  const std::vector<float> probabilities = ReadFloats(dir() / "multi_pred.bin");
  ExpectNear(RunAll(dir() / "multi", Options(kClasses), kClasses),
             probabilities, 1e-6f);
  ExpectNear(RunAll(dir() / "multi",
                    Options(kClasses,
                            {{"output_class", "true"}, {"predict_proba", "1"}}),
                    kClasses),
             probabilities, 1e-6f);

  std::vector<float> argmax;
  for (int64_t i = 0; i < kRows; ++i) {
    const float* row = probabilities.data() + i * kClasses;
    argmax.push_back(
        static_cast<float>(std::max_element(row, row + kClasses) - row));
  }
  EXPECT_EQ(RunAll(dir() / "multi", Options(1, {{"output_class", "true"}}), 1),
            argmax);
}

TEST_F(XgboostEngineTest, MultiClassSoftmaxGivesClassIdOrSoftmaxProbabilities) {
  const std::vector<float> ids = ReadFloats(dir() / "multi_softmax_pred.bin");
  EXPECT_EQ(RunAll(dir() / "multi_softmax", Options(1), 1), ids);
  EXPECT_EQ(RunAll(dir() / "multi_softmax",
                   Options(1, {{"output_class", "true"}}), 1),
            ids);
  // The softmax model has the softprob model's trees, so its probabilities are
  // those.
  ExpectNear(RunAll(dir() / "multi_softmax",
                    Options(kClasses, {{"output_class", "true"},
                                       {"predict_proba", "true"}}),
                    kClasses),
             ReadFloats(dir() / "multi_pred.bin"), 1e-6f);
}

TEST_F(XgboostEngineTest, MultiTargetRegressionGivesOneColumnPerTarget) {
  ExpectNear(RunAll(dir() / "regression", Options(2), 2),
             ReadFloats(dir() / "regression_pred.bin"), 1e-6f);
}

TEST_F(XgboostEngineTest, PredictProbaOnRegressionModelIsInvalidArgument) {
  absl::StatusOr<std::unique_ptr<Engine>> engine =
      Create(dir() / "regression",
             Options(2, {{"output_class", "true"}, {"predict_proba", "true"}}));
  ASSERT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(engine.status().message(), HasSubstr("reg:squarederror"));
}

TEST_F(XgboostEngineTest, OneBatchEqualsSingleRowRunsExactly) {
  for (const auto& [model, width] :
       std::vector<std::pair<std::string, int64_t>>{{"binary", 1},
                                                    {"multi", kClasses}}) {
    absl::StatusOr<std::unique_ptr<Engine>> engine =
        Create(dir() / model, Options(width));
    ASSERT_TRUE(engine.ok()) << engine.status();
    const std::vector<float> batch = RunRows(**engine, 0, kRows, width);
    std::vector<float> singles;
    for (int64_t i = 0; i < kRows; ++i) {
      const std::vector<float> one = RunRows(**engine, i, 1, width);
      singles.insert(singles.end(), one.begin(), one.end());
    }
    EXPECT_EQ(batch, singles) << model;
  }
}

TEST_F(XgboostEngineTest, IntraOpThreadsDoNotChangeResults) {
  for (const auto& [model, width] :
       std::vector<std::pair<std::string, int64_t>>{{"binary", 1},
                                                    {"multi", kClasses}}) {
    absl::StatusOr<std::unique_ptr<Engine>> one =
        Create(dir() / model, Options(width), 1);
    absl::StatusOr<std::unique_ptr<Engine>> two =
        Create(dir() / model, Options(width), 2);
    ASSERT_TRUE(one.ok()) << one.status();
    ASSERT_TRUE(two.ok()) << two.status();
    EXPECT_EQ(RunRows(**one, 0, kRows, width), RunRows(**two, 0, kRows, width))
        << model;
  }
}

TEST_F(XgboostEngineTest, MisalignedInputGivesSameOutput) {
  absl::StatusOr<std::unique_ptr<Engine>> engine =
      Create(dir() / "binary", Options());
  ASSERT_TRUE(engine.ok()) << engine.status();
  std::string buffer(rows_.size() * sizeof(float) + 1, '\0');
  std::memcpy(buffer.data() + 1, rows_.data(), rows_.size() * sizeof(float));
  absl::StatusOr<Tensor> input =
      Tensor::Borrow("x", DataType::kFp32, {kRows, kFeatures},
                     buffer.data() + 1, buffer.size() - 1);
  ASSERT_TRUE(input.ok()) << input.status();
  absl::StatusOr<std::vector<Tensor>> out =
      (*engine)->Run(absl::MakeConstSpan(&*input, 1));
  ASSERT_TRUE(out.ok()) << out.status();
  auto values = out->front().values<float>();
  EXPECT_EQ(std::vector<float>(values.begin(), values.end()),
            RunRows(**engine, 0, kRows, 1));
}

TEST_F(XgboostEngineTest, EmptyBatchGivesEmptyOutput) {
  absl::StatusOr<std::unique_ptr<Engine>> engine =
      Create(dir() / "multi", Options(kClasses));
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_TRUE(RunRows(**engine, 0, 0, kClasses).empty());
}

TEST_F(XgboostEngineTest, InputDimsMismatchNamesInputAndBothNumbers) {
  ModelOptions options = Options();
  options.inputs[0].dims = {31};
  absl::StatusOr<std::unique_ptr<Engine>> engine =
      Create(dir() / "binary", options);
  ASSERT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(engine.status().message(),
              HasSubstr("input 'x': dims [31] but the model has 32 features"));
}

TEST_F(XgboostEngineTest, OutputDimsMismatchNamesOutputAndBothShapes) {
  absl::StatusOr<std::unique_ptr<Engine>> engine =
      Create(dir() / "multi", Options(1));
  ASSERT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      engine.status().message(),
      AllOf(HasSubstr("output 'y'"), HasSubstr("[1]"), HasSubstr("[3]")));
  // FIL predict_proba on a binary model makes two columns; [1] is wrong there
  // too.
  engine =
      Create(dir() / "binary",
             Options(1, {{"output_class", "true"}, {"predict_proba", "true"}}));
  ASSERT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(engine.status().message(),
              AllOf(HasSubstr("output 'y'"), HasSubstr("[2]")));
}

TEST_F(XgboostEngineTest, WildcardDimsAcceptTheModelsShape) {
  ModelOptions options = Options(-1);
  options.inputs[0].dims = {-1};
  ExpectNear(RunAll(dir() / "multi", options, kClasses),
             ReadFloats(dir() / "multi_pred.bin"), 1e-6f);
}

TEST_F(XgboostEngineTest, NonFp32ConfigIsInvalidArgumentNamingTensor) {
  ModelOptions options = Options();
  options.inputs[0].dtype = DataType::kFp64;
  absl::StatusOr<std::unique_ptr<Engine>> engine =
      Create(dir() / "binary", options);
  ASSERT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(engine.status().message(),
              AllOf(HasSubstr("input 'x'"), HasSubstr("FP64")));

  options = Options();
  options.outputs[0].dtype = DataType::kInt32;
  engine = Create(dir() / "binary", options);
  ASSERT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(engine.status().message(), HasSubstr("output 'y'"));
}

TEST_F(XgboostEngineTest, UnbatchedOrMultiTensorConfigIsInvalidArgument) {
  ModelOptions options = Options();
  options.max_batch_size = 0;
  EXPECT_EQ(Create(dir() / "binary", options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = Options();
  options.inputs.push_back(options.inputs[0]);
  options.inputs[1].name = "x2";
  EXPECT_EQ(Create(dir() / "binary", options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(XgboostEngineTest, BadParametersAreInvalidArgumentNamingTheParameter) {
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>>
      cases = {
          {{{"output_class", "yes"}}, "output_class"},
          {{{"threshold", "half"}}, "threshold"},
          {{{"predict_type", "leaf"}}, "predict_type"},
          {{{"predict_type", "margin"}, {"output_class", "true"}}, "margin"},
          {{{"model_type", "lightgbm"}}, "lightgbm"},
      };
  for (const auto& [params, name] : cases) {
    absl::StatusOr<std::unique_ptr<Engine>> engine =
        Create(dir() / "binary", Options(1, params));
    EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument)
        << name;
    EXPECT_THAT(engine.status().message(), HasSubstr(name));
  }
}

TEST_F(XgboostEngineTest, MissingModelFileIsNotFoundNamingTheFolder) {
  const fs::path empty = dir() / "empty_version";
  fs::create_directories(empty);
  absl::StatusOr<std::unique_ptr<Engine>> engine = Create(empty, Options());
  ASSERT_EQ(engine.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(engine.status().message(),
              AllOf(HasSubstr(empty.string()), HasSubstr("model.json"),
                    HasSubstr("xgboost.model")));

  ModelOptions options = Options();
  options.default_model_filename = "nope.json";
  engine = Create(dir() / "binary", options);
  ASSERT_EQ(engine.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(engine.status().message(), HasSubstr("nope.json"));

  // FIL's model_type names exactly one file; others do not stand in for it.
  engine =
      Create(dir() / "binary", Options(1, {{"model_type", "xgboost_ubj"}}));
  ASSERT_EQ(engine.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(engine.status().message(), HasSubstr("xgboost.ubj"));
}

TEST_F(XgboostEngineTest, CorruptModelFileIsAnErrorNotACrash) {
  const std::string legacy = ReadFile(dir() / "binary" / "model.bin");
  const std::string json = ReadFile(dir() / "binary" / "model.json");
  std::string noise;
  for (int i = 0; i < 4096; ++i)
    noise.push_back(static_cast<char>((i * 7919 + 13) % 251));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"model.json", "this is not a model"},
      {"model.json", json.substr(0, json.size() / 2)},
      {"model.ubj", noise},
      {"model.bin", legacy.substr(0, legacy.size() / 2)},
      {"model.bin", noise},
      {"model.bin", ""},
  };
  for (const auto& [name, bytes] : cases) {
    const fs::path version = dir() / absl::StrCat("corrupt_", copies_++);
    fs::create_directories(version);
    WriteFile(version / name, bytes);
    absl::StatusOr<std::unique_ptr<Engine>> engine = Create(version, Options());
    EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument)
        << name << " of " << bytes.size() << " bytes: " << engine.status();
    EXPECT_THAT(engine.status().message(), HasSubstr(name));
  }
}

TEST_F(XgboostEngineTest, WrongInputAtRunIsInvalidArgument) {
  absl::StatusOr<std::unique_ptr<Engine>> engine =
      Create(dir() / "binary", Options());
  ASSERT_TRUE(engine.ok()) << engine.status();
  Engine& e = **engine;

  absl::StatusOr<Tensor> doubles =
      Tensor::Zeros("x", DataType::kFp64, {2, kFeatures});
  ASSERT_TRUE(doubles.ok());
  absl::StatusOr<std::vector<Tensor>> out =
      e.Run(absl::MakeConstSpan(&*doubles, 1));
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              AllOf(HasSubstr("input 'x'"), HasSubstr("FP64")));

  for (const Shape& shape :
       {Shape{2, 31}, Shape{kFeatures}, Shape{1, 2, kFeatures}}) {
    absl::StatusOr<Tensor> bad = Tensor::Zeros("x", DataType::kFp32, shape);
    ASSERT_TRUE(bad.ok());
    out = e.Run(absl::MakeConstSpan(&*bad, 1));
    ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument)
        << ShapeToString(shape);
    EXPECT_THAT(out.status().message(),
                AllOf(HasSubstr("input 'x'"), HasSubstr(ShapeToString(shape))));
  }

  out = e.Run({});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(XgboostEngineTest, AutoCompleteDerivesTheWholeConfig) {
  ModelOptions options;
  options.name = "fraud";
  options.platform = "xgboost";
  ASSERT_TRUE(factory_.AutoComplete(dir() / "binary", &options).ok());
  ASSERT_EQ(options.inputs.size(), 1u);
  EXPECT_EQ(options.inputs[0].name, "input__0");
  EXPECT_EQ(options.inputs[0].dtype, DataType::kFp32);
  EXPECT_EQ(options.inputs[0].dims, (std::vector<int64_t>{kFeatures}));
  ASSERT_EQ(options.outputs.size(), 1u);
  EXPECT_EQ(options.outputs[0].name, "output__0");
  EXPECT_EQ(options.outputs[0].dtype, DataType::kFp32);
  EXPECT_EQ(options.outputs[0].dims, (std::vector<int64_t>{1}));
  EXPECT_EQ(options.max_batch_size, XgboostEngineFactory::kAutoMaxBatchSize);
  EXPECT_TRUE(options.dynamic_batching.enabled);
  EXPECT_EQ(options.dynamic_batching.max_queue_delay_us,
            XgboostEngineFactory::kAutoMaxQueueDelayUs);

  // The completed config loads and serves.
  absl::StatusOr<std::unique_ptr<Engine>> engine =
      Create(dir() / "binary", options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  absl::StatusOr<Tensor> input =
      Tensor::FromValues<float>("input__0", {kRows, kFeatures}, rows_);
  ASSERT_TRUE(input.ok());
  absl::StatusOr<std::vector<Tensor>> out =
      (*engine)->Run(absl::MakeConstSpan(&*input, 1));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->front().name(), "output__0");
  auto values = out->front().values<float>();
  ExpectNear(std::vector<float>(values.begin(), values.end()),
             ReadFloats(dir() / "binary_pred.bin"), 1e-6f);
}

TEST_F(XgboostEngineTest, AutoCompleteOutputWidthFollowsModelAndParameters) {
  ModelOptions multi;
  multi.name = "multi";
  ASSERT_TRUE(factory_.AutoComplete(dir() / "multi", &multi).ok());
  ASSERT_EQ(multi.outputs.size(), 1u);
  EXPECT_EQ(multi.outputs[0].dims, (std::vector<int64_t>{kClasses}));

  ModelOptions proba;
  proba.name = "proba";
  proba.parameters = {{"output_class", "true"}, {"predict_proba", "true"}};
  ASSERT_TRUE(factory_.AutoComplete(dir() / "binary", &proba).ok());
  ASSERT_EQ(proba.outputs.size(), 1u);
  EXPECT_EQ(proba.outputs[0].dims, (std::vector<int64_t>{2}));
}

TEST_F(XgboostEngineTest, AutoCompleteKeepsWhatTheConfigSays) {
  ModelOptions options = Options();
  options.outputs.clear();
  options.max_batch_size = 16;
  ASSERT_TRUE(factory_.AutoComplete(dir() / "binary", &options).ok());
  ASSERT_EQ(options.inputs.size(), 1u);
  EXPECT_EQ(options.inputs[0].name, "x");
  ASSERT_EQ(options.outputs.size(), 1u);
  EXPECT_EQ(options.outputs[0].name, "output__0");
  EXPECT_EQ(options.max_batch_size, 16);
  EXPECT_FALSE(options.dynamic_batching.enabled);
}

TEST_F(XgboostEngineTest, AutoCompleteWithoutModelIsNotFound) {
  const fs::path empty = dir() / "empty_autocomplete";
  fs::create_directories(empty);
  ModelOptions options;
  options.name = "fraud";
  EXPECT_EQ(factory_.AutoComplete(empty, &options).code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(options.inputs.empty());
}

TEST(RegisterXgboostEngineTest, RegistersPlatformXgboostOnce) {
  EngineRegistry registry;
  ASSERT_TRUE(RegisterXgboostEngine(&registry).ok());
  EXPECT_TRUE(registry.Find("xgboost").ok());
  EXPECT_EQ(RegisterXgboostEngine(&registry).code(),
            absl::StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace ferry
