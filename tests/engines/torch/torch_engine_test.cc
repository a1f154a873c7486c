// SPDX-License-Identifier: Apache-2.0
// Tests of the pytorch_libtorch engine against TorchScript files that
// make_fixture.py writes with Debian's python3-torch when the suite starts.
#include "engines/torch/torch_engine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/tensor.h"

namespace ferry {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kMlpRows = 8;  // rows in make_fixture.py's MLP reference data
constexpr int kMlpFeatures = 64;
constexpr float kTolerance = 1e-5f;

std::vector<float> ReadFloats(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  std::vector<float> out(bytes.size() / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

// The message as a std::string, which gmock prints readably when a match fails.
std::string Message(const absl::Status& status) {
  return std::string(status.message());
}

TensorSpec Spec(std::string name, DataType dtype, std::vector<int64_t> dims) {
  TensorSpec spec;
  spec.name = std::move(name);
  spec.dtype = dtype;
  spec.dims = std::move(dims);
  return spec;
}

ModelOptions Options(std::string name, std::vector<TensorSpec> inputs,
                     std::vector<TensorSpec> outputs,
                     DeviceKind kind = DeviceKind::kCpu) {
  ModelOptions options;
  options.name = std::move(name);
  options.platform = kTorchPlatform;
  options.max_batch_size = 16;
  options.inputs = std::move(inputs);
  options.outputs = std::move(outputs);
  InstanceGroupOptions group;
  group.kind = kind;
  options.instance_groups.push_back(group);
  return options;
}

ModelOptions MlpOptions() {
  return Options("mlp", {Spec("x", DataType::kFp32, {kMlpFeatures})},
                 {Spec("y", DataType::kFp32, {1})});
}

// TwoInputs: forward(x: FP32 [B,4], ids: INT64 [B,L])
//   -> (x * 2 + sum(ids), ids + 1).
// The config lists the inputs in the reverse of forward()'s order (ids first),
// so only a mapping by name or by `__N` index feeds them right.
ModelOptions TwoInputOptions(std::string x, std::string ids,
                             std::vector<TensorSpec> outputs) {
  return Options("two_inputs",
                 {Spec(std::move(ids), DataType::kInt64, {-1}),
                  Spec(std::move(x), DataType::kFp32, {4})},
                 std::move(outputs));
}

class TorchEngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fixtures_ =
        new fs::path(fs::temp_directory_path() /
                     absl::StrCat("ferry_torch_engine_test_", getpid()));
    fs::remove_all(*fixtures_);
    fs::create_directories(*fixtures_);
    const std::string command = absl::StrCat(
        "/usr/bin/python3 '", FERRY_SOURCE_DIR,
        "/tests/engines/torch/make_fixture.py' '", fixtures_->string(), "'");
    fixture_status_ = std::system(command.c_str());
  }

  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(*fixtures_, ec);
    delete fixtures_;
    fixtures_ = nullptr;
  }

  void SetUp() override {
    ASSERT_EQ(fixture_status_, 0)
        << "make_fixture.py failed; see its output above";
  }

  static EngineLoadContext Context(const std::string& model,
                                   ModelOptions options,
                                   int intra_op_threads = 1) {
    EngineLoadContext context;
    context.version_dir = *fixtures_ / model;
    context.options = std::move(options);
    context.intra_op_threads = intra_op_threads;
    return context;
  }

  static absl::StatusOr<std::unique_ptr<Engine>> Create(
      const EngineLoadContext& context) {
    return TorchEngineFactory().Create(context);
  }

  static std::unique_ptr<Engine> MustCreate(const EngineLoadContext& context) {
    absl::StatusOr<std::unique_ptr<Engine>> engine = Create(context);
    EXPECT_TRUE(engine.ok()) << engine.status();
    return engine.ok() ? *std::move(engine) : nullptr;
  }

  static Tensor MlpRows(int first, int count) {
    const std::vector<float> all = ReadFloats(*fixtures_ / "mlp_inputs.bin");
    EXPECT_EQ(all.size(), static_cast<size_t>(kMlpRows * kMlpFeatures));
    absl::Span<const float> rows = absl::MakeConstSpan(all).subspan(
        first * kMlpFeatures, count * kMlpFeatures);
    return *Tensor::FromValues<float>("x", {count, kMlpFeatures}, rows);
  }

  static Tensor TwoInputsX() {
    const std::vector<float> x = {1, 2, 3, 4, -1, -2, -3, -4};
    return *Tensor::FromValues<float>("x", {2, 4}, x);
  }
  static Tensor TwoInputsIds() {
    const std::vector<int64_t> ids = {10, 20, 30, 1, 2, 3};
    return *Tensor::FromValues<int64_t>("ids", {2, 3}, ids);
  }

  // Checks TwoInputs' outputs for TwoInputsX() and TwoInputsIds().
  static void ExpectTwoInputsResult(const Tensor& ids_out, const Tensor& y) {
    ASSERT_EQ(y.dtype(), DataType::kFp32);
    EXPECT_EQ(y.shape(), (Shape{2, 4}));
    EXPECT_THAT(y.values<float>(),
                ::testing::ElementsAre(62, 64, 66, 68, 4, 2, 0, -2));
    ASSERT_EQ(ids_out.dtype(), DataType::kInt64);
    EXPECT_EQ(ids_out.shape(), (Shape{2, 3}));
    EXPECT_THAT(ids_out.values<int64_t>(),
                ::testing::ElementsAre(11, 21, 31, 2, 3, 4));
  }

  static fs::path* fixtures_;
  static int fixture_status_;
};

fs::path* TorchEngineTest::fixtures_ = nullptr;
int TorchEngineTest::fixture_status_ = -1;

TEST_F(TorchEngineTest, MlpOutputMatchesPython) {
  std::unique_ptr<Engine> engine = MustCreate(Context("mlp", MlpOptions()));
  ASSERT_NE(engine, nullptr);
  std::vector<Tensor> inputs;
  inputs.push_back(MlpRows(0, kMlpRows));
  absl::StatusOr<std::vector<Tensor>> outputs = engine->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  ASSERT_EQ(outputs->size(), 1u);
  const Tensor& y = (*outputs)[0];
  EXPECT_EQ(y.name(), "y");
  ASSERT_EQ(y.dtype(), DataType::kFp32);
  EXPECT_EQ(y.shape(), (Shape{kMlpRows, 1}));
  const std::vector<float> expected =
      ReadFloats(*fixtures_ / "mlp_outputs.bin");
  ASSERT_EQ(expected.size(), static_cast<size_t>(kMlpRows));
  for (int i = 0; i < kMlpRows; ++i) {
    EXPECT_NEAR(y.values<float>()[i], expected[i], kTolerance) << "row " << i;
  }
}

TEST_F(TorchEngineTest, BatchOfRowsEqualsSingleRowRuns) {
  std::unique_ptr<Engine> engine = MustCreate(Context("mlp", MlpOptions()));
  ASSERT_NE(engine, nullptr);
  std::vector<Tensor> batch_inputs;
  batch_inputs.push_back(MlpRows(0, kMlpRows));
  absl::StatusOr<std::vector<Tensor>> batch = engine->Run(batch_inputs);
  ASSERT_TRUE(batch.ok()) << batch.status();
  for (int i = 0; i < kMlpRows; ++i) {
    std::vector<Tensor> inputs;
    inputs.push_back(MlpRows(i, 1));
    absl::StatusOr<std::vector<Tensor>> single = engine->Run(inputs);
    ASSERT_TRUE(single.ok()) << single.status();
    EXPECT_EQ((*single)[0].shape(), (Shape{1, 1}));
    EXPECT_NEAR((*single)[0].values<float>()[0], (*batch)[0].values<float>()[i],
                kTolerance)
        << "row " << i;
  }
}

TEST_F(TorchEngineTest, RunsWithTwoThreadsFromOtherThreads) {
  std::unique_ptr<Engine> engine = MustCreate(Context("mlp", MlpOptions(), 2));
  ASSERT_NE(engine, nullptr);
  const std::vector<float> expected =
      ReadFloats(*fixtures_ / "mlp_outputs.bin");
  // The instance thread may change between calls; each must set up its own
  // threads.
  for (int round = 0; round < 2; ++round) {
    absl::StatusOr<std::vector<Tensor>> outputs;
    std::thread worker([&] {
      std::vector<Tensor> inputs;
      inputs.push_back(MlpRows(0, kMlpRows));
      outputs = engine->Run(inputs);
    });
    worker.join();
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    for (int i = 0; i < kMlpRows; ++i) {
      EXPECT_NEAR((*outputs)[0].values<float>()[i], expected[i], kTolerance);
    }
  }
}

TEST_F(TorchEngineTest, InputsMapByForwardArgumentNames) {
  std::unique_ptr<Engine> engine = MustCreate(
      Context("two_inputs",
              TwoInputOptions("x", "ids",
                              {Spec("y", DataType::kFp32, {4}),
                               Spec("ids_out", DataType::kInt64, {-1})})));
  ASSERT_NE(engine, nullptr);
  std::vector<Tensor> inputs;
  inputs.push_back(TwoInputsIds());
  inputs.push_back(TwoInputsX());
  absl::StatusOr<std::vector<Tensor>> outputs = engine->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  ASSERT_EQ(outputs->size(), 2u);
  EXPECT_EQ((*outputs)[0].name(), "y");
  EXPECT_EQ((*outputs)[1].name(), "ids_out");
  ExpectTwoInputsResult((*outputs)[1], (*outputs)[0]);
}

TEST_F(TorchEngineTest, InputsAndOutputsMapByTritonIndexSuffix) {
  // INPUT__1 is forward()'s second argument (ids) although the config lists it
  // first; OUTPUT__1 is the tuple's second element.
  std::unique_ptr<Engine> engine = MustCreate(
      Context("two_inputs",
              TwoInputOptions("INPUT__0", "INPUT__1",
                              {Spec("OUTPUT__1", DataType::kInt64, {-1}),
                               Spec("OUTPUT__0", DataType::kFp32, {4})})));
  ASSERT_NE(engine, nullptr);
  std::vector<Tensor> inputs;
  inputs.push_back(TwoInputsIds());
  inputs.push_back(TwoInputsX());
  absl::StatusOr<std::vector<Tensor>> outputs = engine->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  ASSERT_EQ(outputs->size(), 2u);
  EXPECT_EQ((*outputs)[0].name(), "OUTPUT__1");
  ExpectTwoInputsResult((*outputs)[0], (*outputs)[1]);
}

TEST_F(TorchEngineTest, InputsMapInConfigOrderWhenNamesDoNotMatch) {
  ModelOptions options = Options(
      "two_inputs",
      {Spec("a", DataType::kFp32, {4}), Spec("b", DataType::kInt64, {-1})},
      {Spec("y", DataType::kFp32, {4}),
       Spec("ids_out", DataType::kInt64, {-1})});
  std::unique_ptr<Engine> engine = MustCreate(Context("two_inputs", options));
  ASSERT_NE(engine, nullptr);
  std::vector<Tensor> inputs;
  inputs.push_back(TwoInputsX());
  inputs.push_back(TwoInputsIds());
  absl::StatusOr<std::vector<Tensor>> outputs = engine->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  ExpectTwoInputsResult((*outputs)[1], (*outputs)[0]);
}

TEST_F(TorchEngineTest, TupleShorterThanConfigNamesTheOutput) {
  std::unique_ptr<Engine> engine = MustCreate(
      Context("two_inputs",
              TwoInputOptions("INPUT__0", "INPUT__1",
                              {Spec("OUTPUT__0", DataType::kFp32, {4}),
                               Spec("OUTPUT__2", DataType::kFp32, {4})})));
  ASSERT_NE(engine, nullptr);
  std::vector<Tensor> inputs;
  inputs.push_back(TwoInputsIds());
  inputs.push_back(TwoInputsX());
  absl::StatusOr<std::vector<Tensor>> outputs = engine->Run(inputs);
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(outputs.status()), HasSubstr("'OUTPUT__2'"));
}

TEST_F(TorchEngineTest, DictOutputsMapByName) {
  // Config order differs from the dict's insertion order.
  std::unique_ptr<Engine> engine = MustCreate(Context(
      "dict_outputs", Options("dict_outputs", {Spec("x", DataType::kFp32, {4})},
                              {Spec("probs", DataType::kFp32, {3}),
                               Spec("logits", DataType::kFp32, {3})})));
  ASSERT_NE(engine, nullptr);
  std::vector<Tensor> inputs;
  inputs.push_back(TwoInputsX());
  absl::StatusOr<std::vector<Tensor>> outputs = engine->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  ASSERT_EQ(outputs->size(), 2u);
  const Tensor& probs = (*outputs)[0];
  const Tensor& logits = (*outputs)[1];
  EXPECT_EQ(probs.name(), "probs");
  ASSERT_EQ(probs.shape(), (Shape{2, 3}));
  ASSERT_EQ(logits.shape(), (Shape{2, 3}));
  for (int row = 0; row < 2; ++row) {
    double total = 0;
    for (int j = 0; j < 3; ++j)
      total += std::exp(logits.values<float>()[row * 3 + j]);
    for (int j = 0; j < 3; ++j) {
      EXPECT_NEAR(probs.values<float>()[row * 3 + j],
                  std::exp(logits.values<float>()[row * 3 + j]) / total,
                  kTolerance);
    }
  }
}

TEST_F(TorchEngineTest, MissingDictKeyNamesTheOutput) {
  std::unique_ptr<Engine> engine = MustCreate(Context(
      "dict_outputs", Options("dict_outputs", {Spec("x", DataType::kFp32, {4})},
                              {Spec("scores", DataType::kFp32, {3})})));
  ASSERT_NE(engine, nullptr);
  std::vector<Tensor> inputs;
  inputs.push_back(TwoInputsX());
  absl::StatusOr<std::vector<Tensor>> outputs = engine->Run(inputs);
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(outputs.status()), HasSubstr("'scores'"));
  EXPECT_THAT(Message(outputs.status()), HasSubstr("logits"));
}

TEST_F(TorchEngineTest, OutputTypeMismatchNamesOutputAndTypes) {
  std::unique_ptr<Engine> engine = MustCreate(Context(
      "int_output", Options("int_output", {Spec("x", DataType::kFp32, {4})},
                            {Spec("positive", DataType::kFp32, {4})})));
  ASSERT_NE(engine, nullptr);
  std::vector<Tensor> inputs;
  inputs.push_back(TwoInputsX());
  absl::StatusOr<std::vector<Tensor>> outputs = engine->Run(inputs);
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(outputs.status()), HasSubstr("output 'positive'"));
  EXPECT_THAT(Message(outputs.status()), HasSubstr("expected FP32, got INT64"));
}

TEST_F(TorchEngineTest, MatchingIntegerOutputTypeRuns) {
  std::unique_ptr<Engine> engine = MustCreate(Context(
      "int_output", Options("int_output", {Spec("x", DataType::kFp32, {4})},
                            {Spec("positive", DataType::kInt64, {4})})));
  ASSERT_NE(engine, nullptr);
  std::vector<Tensor> inputs;
  inputs.push_back(TwoInputsX());
  absl::StatusOr<std::vector<Tensor>> outputs = engine->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_THAT((*outputs)[0].values<int64_t>(),
              ::testing::ElementsAre(1, 1, 1, 1, 0, 0, 0, 0));
}

TEST_F(TorchEngineTest, OutputBatchDimensionMustMatchInputs) {
  std::unique_ptr<Engine> engine = MustCreate(
      Context("sum_rows", Options("sum_rows", {Spec("x", DataType::kFp32, {4})},
                                  {Spec("total", DataType::kFp32, {4})})));
  ASSERT_NE(engine, nullptr);
  std::vector<Tensor> inputs;
  inputs.push_back(TwoInputsX());  // batch 2; the model returns batch 1
  absl::StatusOr<std::vector<Tensor>> outputs = engine->Run(inputs);
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(outputs.status()), HasSubstr("output 'total'"));
  EXPECT_THAT(Message(outputs.status()), HasSubstr("batch size 2"));
}

TEST_F(TorchEngineTest, OutputThatIsTheInputIsCopied) {
  std::unique_ptr<Engine> engine = MustCreate(
      Context("identity", Options("identity", {Spec("x", DataType::kFp32, {4})},
                                  {Spec("y", DataType::kFp32, {4})})));
  ASSERT_NE(engine, nullptr);
  absl::StatusOr<std::vector<Tensor>> outputs;
  {
    std::vector<Tensor> inputs;
    inputs.push_back(TwoInputsX());
    outputs = engine->Run(inputs);
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    // Borrowing the input's bytes would leave the output dangling once inputs
    // go.
    EXPECT_NE((*outputs)[0].data(), inputs[0].data());
  }
  EXPECT_THAT((*outputs)[0].values<float>(),
              ::testing::ElementsAre(1, 2, 3, 4, -1, -2, -3, -4));
}

TEST_F(TorchEngineTest, ForwardErrorIsInvalidArgumentWithTorchReason) {
  std::unique_ptr<Engine> engine = MustCreate(Context("mlp", MlpOptions()));
  ASSERT_NE(engine, nullptr);
  std::vector<Tensor> inputs;
  inputs.push_back(*Tensor::Zeros("x", DataType::kFp32, {2, 5}));
  absl::StatusOr<std::vector<Tensor>> outputs = engine->Run(inputs);
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(outputs.status()), HasSubstr("model 'mlp'"));
  EXPECT_THAT(Message(outputs.status()), HasSubstr("2x5"));
  EXPECT_THAT(Message(outputs.status()), Not(HasSubstr("Traceback")));
  // The engine still works afterwards.
  inputs.clear();
  inputs.push_back(MlpRows(0, 1));
  EXPECT_TRUE(engine->Run(inputs).ok());
}

TEST_F(TorchEngineTest, InputTypeDifferentFromConfigIsRejected) {
  std::unique_ptr<Engine> engine = MustCreate(Context("mlp", MlpOptions()));
  ASSERT_NE(engine, nullptr);
  std::vector<Tensor> inputs;
  inputs.push_back(*Tensor::Zeros("x", DataType::kInt64, {1, kMlpFeatures}));
  absl::StatusOr<std::vector<Tensor>> outputs = engine->Run(inputs);
  EXPECT_EQ(outputs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(outputs.status()),
              HasSubstr("input 'x': expected FP32, got INT64"));

  inputs.clear();
  EXPECT_EQ(engine->Run(inputs).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(TorchEngineTest, UnsupportedConfigTypesNameTheTensor) {
  for (DataType dtype : {DataType::kUint16, DataType::kUint32,
                         DataType::kUint64, DataType::kBytes}) {
    ModelOptions options = MlpOptions();
    options.inputs[0].dtype = dtype;
    absl::StatusOr<std::unique_ptr<Engine>> engine =
        Create(Context("mlp", options));
    EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument)
        << ToString(dtype);
    EXPECT_THAT(Message(engine.status()), HasSubstr("input 'x'"));
    EXPECT_THAT(Message(engine.status()),
                HasSubstr(std::string(ToString(dtype))));
  }
}

TEST_F(TorchEngineTest, WrongInputCountFailsAtCreateWithBothCounts) {
  ModelOptions options = MlpOptions();
  options.inputs.push_back(Spec("extra", DataType::kFp32, {1}));
  absl::StatusOr<std::unique_ptr<Engine>> engine =
      Create(Context("mlp", options));
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(engine.status()), HasSubstr("declares 2 input(s)"));
  EXPECT_THAT(Message(engine.status()), HasSubstr("forward(x) takes 1"));
}

TEST_F(TorchEngineTest, DuplicateIndexSuffixFailsAtCreate) {
  absl::StatusOr<std::unique_ptr<Engine>> engine = Create(Context(
      "two_inputs", TwoInputOptions("INPUT__0", "IDS__0",
                                    {Spec("y", DataType::kFp32, {4})})));
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(engine.status()), HasSubstr("'IDS__0'"));
}

TEST_F(TorchEngineTest, MissingModelFileIsNotFoundNamingThePath) {
  absl::StatusOr<std::unique_ptr<Engine>> engine =
      Create(Context("no_such_model", MlpOptions()));
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Message(engine.status()),
              HasSubstr((*fixtures_ / "no_such_model" / "model.pt").string()));
}

TEST_F(TorchEngineTest, DefaultModelFilenameIsLoaded) {
  const fs::path dir = *fixtures_ / "renamed";
  fs::create_directories(dir);
  fs::copy_file(*fixtures_ / "mlp" / "model.pt", dir / "scorer.pt",
                fs::copy_options::overwrite_existing);
  ModelOptions options = MlpOptions();
  options.default_model_filename = "scorer.pt";
  std::unique_ptr<Engine> engine = MustCreate(Context("renamed", options));
  ASSERT_NE(engine, nullptr);
  std::vector<Tensor> inputs;
  inputs.push_back(MlpRows(0, 1));
  EXPECT_TRUE(engine->Run(inputs).ok());
}

TEST_F(TorchEngineTest, CorruptModelFileIsAnErrorNotACrash) {
  const fs::path dir = *fixtures_ / "corrupt";
  fs::create_directories(dir);
  std::ofstream(dir / "model.pt") << "this is not a TorchScript archive";
  absl::StatusOr<std::unique_ptr<Engine>> engine =
      Create(Context("corrupt", MlpOptions()));
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(engine.status()), HasSubstr((dir / "model.pt").string()));

  // A truncated archive, which gets past the zip header.
  const std::string whole = [&] {
    std::ifstream in(*fixtures_ / "mlp" / "model.pt", std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)),
                       std::istreambuf_iterator<char>());
  }();
  std::ofstream(dir / "model.pt", std::ios::binary | std::ios::trunc)
      << whole.substr(0, whole.size() / 2);
  engine = Create(Context("corrupt", MlpOptions()));
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(TorchEngineTest, GpuInstanceWithoutCudaIsUnavailable) {
  if (TorchCudaDeviceCount() > 0)
    GTEST_SKIP() << "this libtorch sees a CUDA device";
  ModelOptions options = MlpOptions();
  options.instance_groups[0].kind = DeviceKind::kGpu;
  absl::StatusOr<std::unique_ptr<Engine>> engine =
      Create(Context("mlp", options));
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(Message(engine.status()), HasSubstr("KIND_GPU"));
  EXPECT_THAT(Message(engine.status()), HasSubstr("CUDA"));
}

TEST_F(TorchEngineTest, AutoInstanceRunsWithoutCuda) {
  if (TorchCudaDeviceCount() > 0)
    GTEST_SKIP() << "this libtorch sees a CUDA device";
  ModelOptions options = MlpOptions();
  options.instance_groups[0].kind = DeviceKind::kAuto;
  std::unique_ptr<Engine> engine = MustCreate(Context("mlp", options));
  ASSERT_NE(engine, nullptr);
  std::vector<Tensor> inputs;
  inputs.push_back(MlpRows(0, 1));
  EXPECT_TRUE(engine->Run(inputs).ok());
}

TEST_F(TorchEngineTest, GpuInstanceMatchesPython) {
  const int devices = TorchCudaDeviceCount();
  if (devices == 0) GTEST_SKIP() << "this libtorch sees no CUDA device";
  ModelOptions options = MlpOptions();
  options.instance_groups[0].kind = DeviceKind::kGpu;
  options.instance_groups[0].gpus = {devices - 1};
  std::unique_ptr<Engine> engine = MustCreate(Context("mlp", options));
  ASSERT_NE(engine, nullptr);
  std::vector<Tensor> inputs;
  inputs.push_back(MlpRows(0, kMlpRows));
  absl::StatusOr<std::vector<Tensor>> outputs = engine->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  const std::vector<float> expected =
      ReadFloats(*fixtures_ / "mlp_outputs.bin");
  for (int i = 0; i < kMlpRows; ++i) {
    // TF32 or other GPU kernels round differently from the CPU.
    EXPECT_NEAR((*outputs)[0].values<float>()[i], expected[i], 1e-3)
        << "row " << i;
  }

  options.instance_groups[0].gpus = {devices};
  EXPECT_EQ(Create(Context("mlp", options)).status().code(),
            absl::StatusCode::kUnavailable);
}

TEST_F(TorchEngineTest, AutoCompleteAsksForAConfig) {
  ModelOptions options;
  options.name = "mlp";
  options.platform = kTorchPlatform;
  absl::Status status =
      TorchEngineFactory().AutoComplete(*fixtures_ / "mlp", &options);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(status),
              HasSubstr("model 'mlp': pytorch_libtorch models need a "
                        "config.pbtxt with input and output"));
  EXPECT_TRUE(options.inputs.empty());
  EXPECT_TRUE(options.outputs.empty());

  options.inputs.push_back(Spec("x", DataType::kFp32, {kMlpFeatures}));
  status = TorchEngineFactory().AutoComplete(*fixtures_ / "mlp", &options);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(status), HasSubstr("missing: output"));

  // Nothing left to complete.
  ModelOptions complete = MlpOptions();
  EXPECT_TRUE(
      TorchEngineFactory().AutoComplete(*fixtures_ / "mlp", &complete).ok());
}

TEST(RegisterTorchEngineTest, RegistersPytorchLibtorchOnce) {
  EngineRegistry registry;
  ASSERT_TRUE(RegisterTorchEngine(&registry).ok());
  EXPECT_TRUE(registry.Find("pytorch_libtorch").ok());
  EXPECT_EQ(RegisterTorchEngine(&registry).code(),
            absl::StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace ferry
