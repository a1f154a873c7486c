// SPDX-License-Identifier: Apache-2.0
#include "engines/xgboost/xgboost_engine.h"

#include <simdjson.h>
#include <xgboost/c_api.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/status_macros.h"
#include "core/tensor.h"

namespace ferry {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCandidateFiles[] = {
    "model.json",   "model.ubj",   "model.bin",    "model.xgb",
    "xgboost.json", "xgboost.ubj", "xgboost.model"};

// XGBoost's prediction types (XGBoosterPredictFromDMatrix's "type").
constexpr int kPredictValue = 0;
constexpr int kPredictMargin = 1;

// XGBGetLastError() without the "[hh:mm:ss] " prefix and the stack trace that
// dmlc appends: the rest names the failed check, which is what a user can act
// on.
std::string LastXgboostError() {
  std::string text = XGBGetLastError();
  if (size_t pos = text.find("Stack trace:"); pos != std::string::npos) {
    text.resize(pos);
  }
  if (text.size() > 11 && text[0] == '[' && text[9] == ']' && text[10] == ' ') {
    text.erase(0, 11);
  }
  absl::StripAsciiWhitespace(&text);
  if (!text.empty() && text.back() == ':') text.pop_back();
  absl::StripAsciiWhitespace(&text);
  return text;
}

absl::Status XgboostError(absl::StatusCode code, absl::string_view what) {
  return absl::Status(code, absl::StrCat(what, ": ", LastXgboostError()));
}

struct BoosterDeleter {
  void operator()(void* handle) const { XGBoosterFree(handle); }
};
using BoosterPtr = std::unique_ptr<void, BoosterDeleter>;

std::string ModelPrefix(const ModelOptions& options) {
  return absl::StrCat("model '", options.name, "': ");
}

absl::StatusOr<fs::path> ResolveModelFile(const fs::path& dir,
                                          const ModelOptions& options) {
  std::vector<std::string> names;
  if (!options.default_model_filename.empty()) {
    names.push_back(options.default_model_filename);
  } else if (std::optional<std::string> type =
                 options.parameter("model_type")) {
    if (*type == "xgboost") {
      names.push_back("xgboost.model");
    } else if (*type == "xgboost_json") {
      names.push_back("xgboost.json");
    } else if (*type == "xgboost_ubj") {
      names.push_back("xgboost.ubj");
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(ModelPrefix(options), "parameters.model_type \"", *type,
                       "\" is not supported; expected xgboost, xgboost_json or "
                       "xgboost_ubj"));
    }
  } else {
    names.assign(std::begin(kCandidateFiles), std::end(kCandidateFiles));
  }
  for (const std::string& name : names) {
    std::error_code ec;
    fs::path path = dir / name;
    if (fs::is_regular_file(path, ec)) return path;
  }
  return absl::NotFoundError(
      absl::StrCat(ModelPrefix(options), "no XGBoost model file in ",
                   dir.string(), " (tried ", absl::StrJoin(names, ", "), ")"));
}

absl::StatusOr<bool> BoolParameter(const ModelOptions& options,
                                   const std::string& key) {
  std::optional<std::string> text = options.parameter(key);
  if (!text) return false;
  const std::string value = absl::AsciiStrToLower(*text);
  if (value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  return absl::InvalidArgumentError(
      absl::StrCat(ModelPrefix(options), "parameters.", key, " is \"", *text,
                   "\"; expected true or false"));
}

absl::StatusOr<float> ThresholdParameter(const ModelOptions& options) {
  std::optional<std::string> text = options.parameter("threshold");
  if (!text) return 0.5f;
  float value = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(ModelPrefix(options), "parameters.threshold is \"", *text,
                     "\"; expected a number"));
  }
  return value;
}

// What Run() asks XGBoost for and how it turns that into the output tensor.
enum class Transform {
  kNone,                 // XGBoost's values as they are
  kBinaryProbabilities,  // p → (1-p, p)
  kSoftmax,              // margins → probabilities per row
  kThreshold,            // p → p > threshold
  kArgmax,               // probabilities → index of the first maximum
};

struct OutputPlan {
  int predict_type = kPredictValue;
  Transform transform = Transform::kNone;
  int64_t xgboost_width = 1;  // values per row from XGBoost
  int64_t width = 1;          // values per row in the output tensor
  float threshold = 0.5f;
};

std::string PredictConfig(int predict_type) {
  // cache_id is required by 1.7's in-place prediction although it is not used.
  return absl::StrCat(
      "{\"type\": ", predict_type,
      ", \"training\": false, \"iteration_begin\": 0, \"iteration_end\": 0,"
      " \"strict_shape\": false, \"missing\": NaN, \"cache_id\": 0}");
}

// Predicts `rows` x `cols` floats at `data` (4-byte aligned). The result lives
// in the booster until its next call.
absl::StatusOr<absl::Span<const float>> PredictDense(
    BoosterHandle booster, const float* data, int64_t rows, int64_t cols,
    const std::string& config) {
  const std::string array =
      absl::StrCat("{\"data\": [", reinterpret_cast<uintptr_t>(data),
                   ", true], \"shape\": [", rows, ", ", cols,
                   "], \"typestr\": \"<f4\", \"version\": 3}");
  const bst_ulong* shape = nullptr;
  bst_ulong dim = 0;
  const float* result = nullptr;
  if (XGBoosterPredictFromDense(booster, array.c_str(), config.c_str(), nullptr,
                                &shape, &dim, &result) != 0) {
    return XgboostError(absl::StatusCode::kInternal,
                        "XGBoost prediction failed");
  }
  uint64_t n = dim == 0 ? 0 : 1;
  for (bst_ulong i = 0; i < dim; ++i) n *= shape[i];
  return absl::MakeConstSpan(result, n);
}

absl::StatusOr<std::string> Objective(BoosterHandle booster,
                                      const ModelOptions& options) {
  bst_ulong length = 0;
  const char* config = nullptr;
  if (XGBoosterSaveJsonConfig(booster, &length, &config) != 0) {
    return XgboostError(
        absl::StatusCode::kInvalidArgument,
        absl::StrCat(ModelPrefix(options), "reading the model's config"));
  }
  simdjson::ondemand::parser parser;
  simdjson::padded_string json(config, length);
  simdjson::ondemand::document doc;
  std::string_view name;
  if (parser.iterate(json).get(doc) != simdjson::SUCCESS ||
      doc["learner"]["objective"]["name"].get_string().get(name) !=
          simdjson::SUCCESS) {
    return absl::InvalidArgumentError(
        absl::StrCat(ModelPrefix(options),
                     "the model's config names no learner.objective.name"));
  }
  return std::string(name);
}

absl::StatusOr<OutputPlan> PlanOutput(BoosterHandle booster, uint64_t features,
                                      const ModelOptions& options) {
  const std::string predict_type =
      options.parameter("predict_type").value_or("value");
  if (predict_type != "value" && predict_type != "margin") {
    return absl::InvalidArgumentError(
        absl::StrCat(ModelPrefix(options), "parameters.predict_type is \"",
                     predict_type, "\"; expected value or margin"));
  }
  ASSIGN_OR_RETURN(const bool output_class,
                   BoolParameter(options, "output_class"));
  ASSIGN_OR_RETURN(const bool predict_proba,
                   BoolParameter(options, "predict_proba"));
  ASSIGN_OR_RETURN(const float threshold, ThresholdParameter(options));
  if (predict_type == "margin" && output_class) {
    return absl::InvalidArgumentError(absl::StrCat(
        ModelPrefix(options),
        "parameters.predict_type \"margin\" contradicts output_class true"));
  }
  ASSIGN_OR_RETURN(const std::string objective, Objective(booster, options));

  OutputPlan plan;
  plan.threshold = threshold;
  plan.predict_type = predict_type == "margin" ? kPredictMargin : kPredictValue;
  if (output_class && predict_proba) {
    if (objective == "multi:softmax") {
      plan.predict_type = kPredictMargin;
      plan.transform = Transform::kSoftmax;
    } else if (objective == "binary:logistic" || objective == "reg:logistic") {
      plan.transform = Transform::kBinaryProbabilities;
    } else if (objective != "multi:softprob") {
      return absl::InvalidArgumentError(
          absl::StrCat(ModelPrefix(options),
                       "parameters.predict_proba needs a model that gives "
                       "probabilities (binary:logistic, reg:logistic, "
                       "multi:softprob, multi:softmax); "
                       "this one's objective is ",
                       objective));
    }
  }

  // Probe one all-missing row: the number of values per row is the model's word
  // on its output width, whatever the objective (multi-target, ranking,
  // survival).
  const std::vector<float> row(features,
                               std::numeric_limits<float>::quiet_NaN());
  ASSIGN_OR_RETURN(
      absl::Span<const float> probe,
      PredictDense(booster, row.data(), 1, static_cast<int64_t>(features),
                   PredictConfig(plan.predict_type)));
  plan.xgboost_width = static_cast<int64_t>(probe.size());
  if (plan.xgboost_width < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        ModelPrefix(options), "the model predicts no values per row"));
  }
  plan.width = plan.xgboost_width;
  if (output_class && !predict_proba && objective != "multi:softmax") {
    plan.transform =
        plan.xgboost_width == 1 ? Transform::kThreshold : Transform::kArgmax;
  }
  if (plan.transform == Transform::kBinaryProbabilities) {
    if (plan.xgboost_width != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(ModelPrefix(options), "parameters.predict_proba: a ",
                       objective, " model with ", plan.xgboost_width,
                       " values per row is not a binary classifier"));
    }
    plan.width = 2;
  }
  if (plan.transform == Transform::kThreshold ||
      plan.transform == Transform::kArgmax) {
    plan.width = 1;
  }
  return plan;
}

// A booster loaded from a model directory, with what Create and AutoComplete
// derive from it.
struct LoadedModel {
  BoosterPtr booster;
  uint64_t features = 0;
  OutputPlan plan;
};

absl::StatusOr<LoadedModel> LoadModel(const fs::path& version_dir,
                                      const ModelOptions& options,
                                      int threads) {
  ASSIGN_OR_RETURN(const fs::path file, ResolveModelFile(version_dir, options));
  BoosterHandle handle = nullptr;
  if (XGBoosterCreate(nullptr, 0, &handle) != 0) {
    return XgboostError(
        absl::StatusCode::kInternal,
        absl::StrCat(ModelPrefix(options), "creating a booster"));
  }
  LoadedModel model;
  model.booster.reset(handle);
  if (XGBoosterLoadModel(handle, file.c_str()) != 0) {
    return XgboostError(absl::StatusCode::kInvalidArgument,
                        absl::StrCat(ModelPrefix(options),
                                     "XGBoost cannot load ", file.string()));
  }
  const std::string nthread = absl::StrCat(std::max(1, threads));
  if (XGBoosterSetParam(handle, "nthread", nthread.c_str()) != 0) {
    return XgboostError(
        absl::StatusCode::kInternal,
        absl::StrCat(ModelPrefix(options), "setting nthread=", nthread));
  }
  bst_ulong features = 0;
  if (XGBoosterGetNumFeature(handle, &features) != 0) {
    return XgboostError(
        absl::StatusCode::kInvalidArgument,
        absl::StrCat(ModelPrefix(options), "reading the feature count of ",
                     file.string()));
  }
  if (features == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(ModelPrefix(options), file.string(), " has no features"));
  }
  model.features = features;
  ASSIGN_OR_RETURN(model.plan, PlanOutput(handle, features, options));
  return model;
}

class XgboostEngine final : public Engine {
 public:
  XgboostEngine(LoadedModel model, std::string output_name)
      : booster_(std::move(model.booster)),
        features_(static_cast<int64_t>(model.features)),
        plan_(model.plan),
        predict_config_(PredictConfig(plan_.predict_type)),
        output_name_(std::move(output_name)) {}

  absl::StatusOr<std::vector<Tensor>> Run(
      absl::Span<const Tensor> inputs) override {
    if (inputs.size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("xgboost: expected 1 input, got ", inputs.size()));
    }
    const Tensor& input = inputs[0];
    if (input.dtype() != DataType::kFp32) {
      return absl::InvalidArgumentError(absl::StrCat("input '", input.name(),
                                                     "': expected FP32, got ",
                                                     ToString(input.dtype())));
    }
    const Shape& shape = input.shape();
    if (shape.size() != 2 || shape[0] < 0 || shape[1] != features_) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", input.name(), "': expected shape [batch,",
                       features_, "], got ", ShapeToString(shape)));
    }
    const int64_t rows = shape[0];
    const size_t want_bytes =
        static_cast<size_t>(rows * features_) * sizeof(float);
    if (input.byte_size() != want_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", input.name(), "': shape ", ShapeToString(shape), " needs ",
          want_bytes, " bytes, got ", input.byte_size()));
    }
    ASSIGN_OR_RETURN(Tensor output,
                     Tensor::Uninitialized(output_name_, DataType::kFp32,
                                           {rows, plan_.width}));
    if (rows == 0) return Vector(std::move(output));

    const float* data = reinterpret_cast<const float*>(input.data());
    if (reinterpret_cast<uintptr_t>(data) % alignof(float) != 0) {
      // A tensor borrowed from a request body may sit at any offset.
      aligned_.resize(static_cast<size_t>(rows * features_));
      std::memcpy(aligned_.data(), input.data(), want_bytes);
      data = aligned_.data();
    }
    ASSIGN_OR_RETURN(
        absl::Span<const float> values,
        PredictDense(booster_.get(), data, rows, features_, predict_config_));
    if (values.size() != static_cast<size_t>(rows * plan_.xgboost_width)) {
      return absl::InternalError(absl::StrCat(
          "xgboost: predicted ", values.size(), " values for ", rows,
          " rows; expected ", plan_.xgboost_width, " per row"));
    }
    Fill(values, rows, output.mutable_values<float>());
    return Vector(std::move(output));
  }

 private:
  static std::vector<Tensor> Vector(Tensor t) {
    std::vector<Tensor> out;
    out.push_back(std::move(t));
    return out;
  }

  void Fill(absl::Span<const float> in, int64_t rows,
            absl::Span<float> out) const {
    const int64_t k = plan_.xgboost_width;
    switch (plan_.transform) {
      case Transform::kNone:
        std::memcpy(out.data(), in.data(), in.size() * sizeof(float));
        return;
      case Transform::kBinaryProbabilities:
        for (int64_t i = 0; i < rows; ++i) {
          out[2 * i] = 1.0f - in[i];
          out[2 * i + 1] = in[i];
        }
        return;
      case Transform::kThreshold:
        for (int64_t i = 0; i < rows; ++i) {
          out[i] = in[i] > plan_.threshold ? 1.0f : 0.0f;
        }
        return;
      case Transform::kArgmax:
        for (int64_t i = 0; i < rows; ++i) {
          const float* row = in.data() + i * k;
          out[i] = static_cast<float>(std::max_element(row, row + k) - row);
        }
        return;
      case Transform::kSoftmax:
        // As XGBoost's own softmax (common::Softmax): subtract the maximum, in
        // float.
        for (int64_t i = 0; i < rows; ++i) {
          const float* row = in.data() + i * k;
          float* dst = out.data() + i * k;
          const float top = *std::max_element(row, row + k);
          float sum = 0.0f;
          for (int64_t j = 0; j < k; ++j) {
            dst[j] = std::exp(row[j] - top);
            sum += dst[j];
          }
          for (int64_t j = 0; j < k; ++j) dst[j] /= sum;
        }
        return;
    }
  }

  BoosterPtr booster_;
  int64_t features_;
  OutputPlan plan_;
  std::string predict_config_;
  std::string output_name_;
  std::vector<float> aligned_;  // scratch for misaligned inputs
};

// What Create() can check before it loads the model.
absl::Status CheckConfig(const ModelOptions& options) {
  const std::string prefix = ModelPrefix(options);
  if (options.max_batch_size <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        prefix, "xgboost models batch rows: set max_batch_size > 0 (got ",
        options.max_batch_size, ")"));
  }
  if (options.inputs.size() != 1 || options.outputs.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        prefix, "xgboost needs exactly 1 input and 1 output; config has ",
        options.inputs.size(), " inputs and ", options.outputs.size(),
        " outputs"));
  }
  const TensorSpec& in = options.inputs[0];
  if (in.dtype != DataType::kFp32) {
    return absl::InvalidArgumentError(
        absl::StrCat(prefix, "input '", in.name, "': expected TYPE_FP32, got ",
                     ToConfigString(in.dtype)));
  }
  const TensorSpec& out = options.outputs[0];
  if (out.dtype != DataType::kFp32) {
    return absl::InvalidArgumentError(
        absl::StrCat(prefix, "output '", out.name,
                     "': expected TYPE_FP32, got ", ToConfigString(out.dtype)));
  }
  return absl::OkStatus();
}

// The config's dims against what the loaded model takes and produces.
absl::Status CheckDims(const ModelOptions& options, const LoadedModel& model) {
  const std::string prefix = ModelPrefix(options);
  const TensorSpec& in = options.inputs[0];
  const int64_t features = static_cast<int64_t>(model.features);
  if (in.dims.size() != 1 || (in.dims[0] != -1 && in.dims[0] != features)) {
    return absl::InvalidArgumentError(absl::StrCat(
        prefix, "input '", in.name, "': dims ", ShapeToString(in.dims),
        " but the model has ", features, " features"));
  }
  const TensorSpec& out = options.outputs[0];
  if (out.dims.size() != 1 ||
      (out.dims[0] != -1 && out.dims[0] != model.plan.width)) {
    return absl::InvalidArgumentError(absl::StrCat(
        prefix, "output '", out.name, "': dims ", ShapeToString(out.dims),
        " but the model produces [", model.plan.width, "] per row"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> XgboostEngineFactory::Create(
    const EngineLoadContext& context) const {
  RETURN_IF_ERROR(CheckConfig(context.options));
  ASSIGN_OR_RETURN(LoadedModel model,
                   LoadModel(context.version_dir, context.options,
                             context.intra_op_threads));
  RETURN_IF_ERROR(CheckDims(context.options, model));
  return std::make_unique<XgboostEngine>(std::move(model),
                                         context.options.outputs[0].name);
}

absl::Status XgboostEngineFactory::AutoComplete(
    const std::filesystem::path& version_dir, ModelOptions* options) const {
  ASSIGN_OR_RETURN(const LoadedModel model,
                   LoadModel(version_dir, *options, 1));
  if (options->max_batch_size == 0) {
    options->max_batch_size = kAutoMaxBatchSize;
    if (!options->dynamic_batching.enabled) {
      options->dynamic_batching.enabled = true;
      options->dynamic_batching.max_queue_delay_us = kAutoMaxQueueDelayUs;
    }
  }
  if (options->inputs.empty()) {
    options->inputs.push_back(
        TensorSpec{.name = "input__0",
                   .dtype = DataType::kFp32,
                   .dims = {static_cast<int64_t>(model.features)}});
  }
  if (options->outputs.empty()) {
    options->outputs.push_back(TensorSpec{.name = "output__0",
                                          .dtype = DataType::kFp32,
                                          .dims = {model.plan.width}});
  }
  return absl::OkStatus();
}

absl::Status RegisterXgboostEngine(EngineRegistry* registry) {
  return registry->Register("xgboost",
                            std::make_unique<XgboostEngineFactory>());
}

}  // namespace ferry
