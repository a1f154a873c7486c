// SPDX-License-Identifier: Apache-2.0
#include "config/model_config.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/data_type.h"

namespace ferry {
namespace {

namespace pb = ::google::protobuf;

// config.pbtxt files are a few KiB; anything far larger is not a config.
constexpr size_t kMaxConfigBytes = 4 << 20;

// Errors and warnings of one parse, each a finished line ("source: message" or
// "source:line:col: message").
class Problems {
 public:
  explicit Problems(absl::string_view source) : source_(source) {}

  void Error(absl::string_view message) {
    errors_.push_back(absl::StrCat(source_, ": ", message));
  }
  void Warn(absl::string_view message) {
    warnings_.push_back(absl::StrCat(source_, ": ", message));
  }
  void ErrorAt(int line, int column, absl::string_view message) {
    errors_.push_back(Located(line, column, message));
  }
  void WarnAt(int line, int column, absl::string_view message) {
    warnings_.push_back(Located(line, column, message));
  }

  bool has_errors() const { return !errors_.empty(); }
  absl::Status ToStatus() const {
    return absl::InvalidArgumentError(absl::StrJoin(errors_, "\n"));
  }
  std::vector<std::string> TakeWarnings() { return std::move(warnings_); }

 private:
  // Protobuf counts lines and columns from 0; editors count from 1.
  std::string Located(int line, int column, absl::string_view message) const {
    if (line < 0) return absl::StrCat(source_, ": ", message);
    return absl::StrCat(source_, ":", line + 1, ":", column + 1, ": ", message);
  }

  std::string source_;
  std::vector<std::string> errors_;
  std::vector<std::string> warnings_;
};

// Routes TextFormat's syntax errors and unknown-field warnings into Problems.
class TextFormatCollector : public pb::io::ErrorCollector {
 public:
  explicit TextFormatCollector(Problems* problems) : problems_(problems) {}

  void AddError(int line, pb::io::ColumnNumber column,
                const std::string& message) override {
    problems_->ErrorAt(line, column, message);
  }
  void AddWarning(int line, pb::io::ColumnNumber column,
                  const std::string& message) override {
    problems_->WarnAt(line, column, absl::StrCat(message, " Ignored."));
  }

 private:
  Problems* problems_;
};

// ----- proto → options
// ------------------------------------------------------------

// "input[1] 'x'": how messages name one tensor.
std::string TensorLabel(absl::string_view kind, int index,
                        absl::string_view name) {
  return absl::StrCat(kind, "[", index, "] '", name, "'");
}

DataType ConvertDataType(inference::DataType type, absl::string_view where,
                         Problems* problems) {
  if (type == inference::TYPE_INVALID) {
    problems->Error(
        absl::StrCat(where, ": data_type is not set (TYPE_INVALID)"));
    return DataType::kFp32;
  }
  const std::string& name = inference::DataType_Name(type);
  absl::StatusOr<DataType> converted = DataTypeFromConfigString(name);
  if (!converted.ok()) {
    problems->Error(absl::StrCat(where, ": data_type ", name,
                                 " is not supported by Ferry"));
    return DataType::kFp32;
  }
  return *converted;
}

uint32_t NarrowToUint32(uint64_t value, absl::string_view field,
                        Problems* problems) {
  if (value > std::numeric_limits<uint32_t>::max()) {
    problems->Error(absl::StrCat(field, " is ", value, "; must be at most ",
                                 std::numeric_limits<uint32_t>::max()));
    return 0;
  }
  return static_cast<uint32_t>(value);
}

bool IsKnownEngine(absl::string_view name) {
  return name == "pytorch_libtorch" || name == "xgboost" || name == "identity";
}

// Triton's platform and backend names → Ferry's engine names.

std::string ResolvePlatform(const inference::ModelConfig& config,
                            Problems* problems) {
  const std::string from_platform = CanonicalEngineName(config.platform());
  const std::string from_backend = CanonicalEngineName(config.backend());
  if (!from_platform.empty() && !from_backend.empty() &&
      from_platform != from_backend &&
      (IsKnownEngine(from_platform) || IsKnownEngine(from_backend))) {
    problems->Error(absl::StrCat("platform '", config.platform(),
                                 "' and backend '", config.backend(),
                                 "' name different engines"));
  }
  if (config.platform() == "fil" || config.backend() == "fil") {
    // Triton's FIL backend serves several model formats; Ferry serves
    // XGBoost's.
    auto it = config.parameters().find("model_type");
    if (it == config.parameters().end()) {
      problems->Error(
          "parameters.model_type is not set; backend 'fil' needs one of "
          "xgboost, "
          "xgboost_json, xgboost_ubj");
    } else {
      const std::string& type = it->second.string_value();
      if (type != "xgboost" && type != "xgboost_json" &&
          type != "xgboost_ubj") {
        problems->Error(
            absl::StrCat("parameters.model_type '", type,
                         "' is not supported for backend 'fil'; expected one "
                         "of xgboost, xgboost_json, xgboost_ubj"));
      }
    }
  }
  return from_platform.empty() ? from_backend : from_platform;
}

void ConvertInputs(const inference::ModelConfig& config, ModelOptions* options,
                   Problems* problems) {
  for (int i = 0; i < config.input_size(); ++i) {
    const inference::ModelInput& in = config.input(i);
    const std::string label = TensorLabel("input", i, in.name());
    TensorSpec spec;
    spec.name = in.name();
    spec.dtype = ConvertDataType(in.data_type(), label, problems);
    spec.dims.assign(in.dims().begin(), in.dims().end());
    spec.optional = in.optional();
    spec.allow_ragged_batch = in.allow_ragged_batch();
    if (in.has_reshape())
      problems->Warn(
          absl::StrCat(label, ": reshape is not supported; ignored"));
    if (in.is_shape_tensor()) {
      problems->Warn(
          absl::StrCat(label, ": is_shape_tensor is not supported; ignored"));
    }
    options->inputs.push_back(std::move(spec));
  }
}

void ConvertOutputs(const inference::ModelConfig& config, ModelOptions* options,
                    Problems* problems) {
  for (int i = 0; i < config.output_size(); ++i) {
    const inference::ModelOutput& out = config.output(i);
    const std::string label = TensorLabel("output", i, out.name());
    TensorSpec spec;
    spec.name = out.name();
    spec.dtype = ConvertDataType(out.data_type(), label, problems);
    spec.dims.assign(out.dims().begin(), out.dims().end());
    if (out.has_reshape()) {
      problems->Warn(
          absl::StrCat(label, ": reshape is not supported; ignored"));
    }
    if (out.is_shape_tensor()) {
      problems->Warn(
          absl::StrCat(label, ": is_shape_tensor is not supported; ignored"));
    }
    if (!out.label_filename().empty()) {
      problems->Warn(
          absl::StrCat(label, ": label_filename '", out.label_filename(),
                       "' is not supported (no classification); ignored"));
    }
    options->outputs.push_back(std::move(spec));
  }
}

QueuePolicyOptions ConvertQueuePolicy(
    const inference::ModelQueuePolicy& policy) {
  QueuePolicyOptions out;
  out.timeout_action =
      policy.timeout_action() == inference::ModelQueuePolicy::DELAY
          ? TimeoutAction::kDelay
          : TimeoutAction::kReject;
  out.default_timeout_us = policy.default_timeout_microseconds();
  out.allow_timeout_override = policy.allow_timeout_override();
  out.max_queue_size = policy.max_queue_size();
  return out;
}

void ConvertDynamicBatching(const inference::ModelConfig& config,
                            ModelOptions* options, Problems* problems) {
  if (!config.has_dynamic_batching()) return;
  const inference::ModelDynamicBatching& db = config.dynamic_batching();
  DynamicBatchingOptions& out = options->dynamic_batching;
  out.enabled = true;
  out.preferred_batch_sizes.assign(db.preferred_batch_size().begin(),
                                   db.preferred_batch_size().end());
  out.max_queue_delay_us = db.max_queue_delay_microseconds();
  out.preserve_ordering = db.preserve_ordering();
  out.priority_levels = NarrowToUint32(
      db.priority_levels(), "dynamic_batching.priority_levels", problems);
  out.default_priority_level =
      NarrowToUint32(db.default_priority_level(),
                     "dynamic_batching.default_priority_level", problems);
  out.default_queue_policy = ConvertQueuePolicy(db.default_queue_policy());
  for (const auto& [level, policy] : db.priority_queue_policy()) {
    uint32_t key = NarrowToUint32(
        level,
        absl::StrCat("dynamic_batching.priority_queue_policy key ", level),
        problems);
    out.priority_queue_policies[key] = ConvertQueuePolicy(policy);
  }
}

void ConvertInstanceGroups(const inference::ModelConfig& config,
                           ModelOptions* options, Problems* problems) {
  for (int i = 0; i < config.instance_group_size(); ++i) {
    const inference::ModelInstanceGroup& group = config.instance_group(i);
    const std::string label = absl::StrCat("instance_group[", i, "]");
    InstanceGroupOptions out;
    out.name = group.name();
    out.count =
        group.count();  // 0: the repository picks (ResolveInstanceCounts)
    switch (group.kind()) {
      case inference::ModelInstanceGroup::KIND_GPU:
        out.kind = DeviceKind::kGpu;
        break;
      case inference::ModelInstanceGroup::KIND_CPU:
        out.kind = DeviceKind::kCpu;
        break;
      case inference::ModelInstanceGroup::KIND_AUTO:
        out.kind = DeviceKind::kAuto;
        break;
      default:
        problems->Error(absl::StrCat(
            label, ": kind ",
            inference::ModelInstanceGroup::Kind_Name(group.kind()),
            " is not supported; use KIND_AUTO, KIND_CPU or KIND_GPU"));
        break;
    }
    out.gpus.assign(group.gpus().begin(), group.gpus().end());
    if (group.passive())
      problems->Warn(
          absl::StrCat(label, ": passive is not supported; ignored"));
    if (group.profile_size() > 0) {
      problems->Warn(
          absl::StrCat(label, ": profile is not supported; ignored"));
    }
    options->instance_groups.push_back(std::move(out));
  }
  if (options->instance_groups.empty()) {
    InstanceGroupOptions any;
    any.count = 0;
    options->instance_groups.push_back(any);
  }
}

void ConvertVersionPolicy(const inference::ModelConfig& config,
                          ModelOptions* options) {
  const inference::ModelVersionPolicy& policy = config.version_policy();
  VersionPolicyOptions& out = options->version_policy;
  switch (policy.policy_choice_case()) {
    case inference::ModelVersionPolicy::kLatest:
      out.kind = VersionPolicyOptions::Kind::kLatest;
      out.num_versions = policy.latest().num_versions();
      break;
    case inference::ModelVersionPolicy::kAll:
      out.kind = VersionPolicyOptions::Kind::kAll;
      break;
    case inference::ModelVersionPolicy::kSpecific:
      out.kind = VersionPolicyOptions::Kind::kSpecific;
      out.versions.assign(policy.specific().versions().begin(),
                          policy.specific().versions().end());
      break;
    case inference::ModelVersionPolicy::POLICY_CHOICE_NOT_SET:
      break;  // Triton's default: the latest version.
  }
}

void ConvertWarmups(const inference::ModelConfig& config, ModelOptions* options,
                    Problems* problems) {
  for (int i = 0; i < config.model_warmup_size(); ++i) {
    const inference::ModelWarmup& warmup = config.model_warmup(i);
    const std::string label =
        absl::StrCat("model_warmup[", i, "] '", warmup.name(), "'");
    WarmupOptions out;
    out.name = warmup.name();
    out.batch_size = warmup.batch_size();
    out.count =
        warmup.count() == 0 ? 1 : warmup.count();  // Triton: 0 runs it once
    for (const auto& [name, input] : warmup.inputs()) {
      WarmupInput in;
      in.dtype = ConvertDataType(input.data_type(),
                                 absl::StrCat(label, " inputs['", name, "']"),
                                 problems);
      in.dims.assign(input.dims().begin(), input.dims().end());
      switch (input.input_data_type_case()) {
        case inference::ModelWarmup::Input::kRandomData:
          in.fill = WarmupInput::Fill::kRandom;
          break;
        case inference::ModelWarmup::Input::kInputDataFile:
          in.fill = WarmupInput::Fill::kFile;
          in.file = input.input_data_file();
          break;
        case inference::ModelWarmup::Input::kZeroData:
        case inference::ModelWarmup::Input::INPUT_DATA_TYPE_NOT_SET:
          in.fill = WarmupInput::Fill::kZero;
          break;
      }
      out.inputs.emplace(name, std::move(in));
    }
    options->warmups.push_back(std::move(out));
  }
}

ModelOptions ConvertConfig(const inference::ModelConfig& config,
                           absl::string_view default_name, Problems* problems) {
  ModelOptions options;
  options.name =
      config.name().empty() ? std::string(default_name) : config.name();
  if (!config.name().empty() && !default_name.empty() &&
      config.name() != default_name) {
    problems->Error(absl::StrCat("name '", config.name(),
                                 "' does not match the model directory '",
                                 default_name, "'; they must be equal"));
  }
  options.platform = ResolvePlatform(config, problems);
  options.backend = config.backend();
  options.max_batch_size = config.max_batch_size();
  ConvertInputs(config, &options, problems);
  ConvertOutputs(config, &options, problems);
  ConvertDynamicBatching(config, &options, problems);
  ConvertInstanceGroups(config, &options, problems);
  ConvertVersionPolicy(config, &options);
  ConvertWarmups(config, &options, problems);
  for (const auto& [key, value] : config.parameters()) {
    options.parameters[key] = value.string_value();
  }
  options.default_model_filename = config.default_model_filename();
  if (!config.cc_model_filenames().empty()) {
    problems->Warn(
        "cc_model_filenames is not supported; default_model_filename is used");
  }
  if (!config.metric_tags().empty())
    problems->Warn("metric_tags is not supported; ignored");
  return options;
}

// ----- validation
// -----------------------------------------------------------------

void CheckTensors(absl::string_view kind,
                  const std::vector<TensorSpec>& tensors,
                  std::vector<std::string>* errors) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorSpec& t = tensors[i];
    const std::string label = TensorLabel(kind, static_cast<int>(i), t.name);
    if (t.name.empty())
      errors->push_back(absl::StrCat(kind, "[", i, "]: name is empty"));
    for (size_t j = 0; j < i; ++j) {
      if (!t.name.empty() && tensors[j].name == t.name) {
        errors->push_back(absl::StrCat(label, ": name '", t.name,
                                       "' is also used by ", kind, "[", j,
                                       "]; names must be unique"));
        break;
      }
    }
    for (size_t d = 0; d < t.dims.size(); ++d) {
      if (t.dims[d] <= 0 && t.dims[d] != -1) {
        errors->push_back(absl::StrCat(label, ": dims[", d, "] is ", t.dims[d],
                                       "; dims must be positive or -1"));
      }
    }
  }
}

void CheckDynamicBatching(const ModelOptions& options,
                          std::vector<std::string>* errors) {
  const DynamicBatchingOptions& db = options.dynamic_batching;
  if (!db.enabled) return;
  if (options.max_batch_size <= 0) {
    errors->push_back(
        absl::StrCat("dynamic_batching requires max_batch_size > 0; "
                     "max_batch_size is ",
                     options.max_batch_size));
  } else {
    for (size_t i = 0; i < db.preferred_batch_sizes.size(); ++i) {
      int32_t size = db.preferred_batch_sizes[i];
      if (size < 1 || size > options.max_batch_size) {
        errors->push_back(absl::StrCat(
            "dynamic_batching.preferred_batch_size[", i, "] is ", size,
            "; must be in 1..", options.max_batch_size, " (max_batch_size)"));
      }
    }
  }
  if (db.priority_levels == 0) {
    if (db.default_priority_level != 0) {
      errors->push_back(
          absl::StrCat("dynamic_batching.default_priority_level is ",
                       db.default_priority_level,
                       " but priority_levels is 0 (priorities disabled)"));
    }
    if (!db.priority_queue_policies.empty()) {
      errors->push_back(
          "dynamic_batching.priority_queue_policy is set but priority_levels "
          "is 0 "
          "(priorities disabled)");
    }
    return;
  }
  if (db.default_priority_level < 1 ||
      db.default_priority_level > db.priority_levels) {
    errors->push_back(
        absl::StrCat("dynamic_batching.default_priority_level is ",
                     db.default_priority_level, "; must be in 1..",
                     db.priority_levels, " (priority_levels)"));
  }
  for (const auto& [level, policy] : db.priority_queue_policies) {
    if (level < 1 || level > db.priority_levels) {
      errors->push_back(
          absl::StrCat("dynamic_batching.priority_queue_policy key ", level,
                       " is out of range; must be in 1..", db.priority_levels,
                       " (priority_levels)"));
    }
  }
}

void CheckInstanceGroups(const ModelOptions& options,
                         std::vector<std::string>* errors) {
  if (options.instance_groups.empty()) {
    errors->push_back(
        "instance_group is empty; at least one group is required");
  }
  for (size_t i = 0; i < options.instance_groups.size(); ++i) {
    const InstanceGroupOptions& g = options.instance_groups[i];
    const std::string label = absl::StrCat("instance_group[", i, "]");
    if (g.count < 0) {
      errors->push_back(absl::StrCat(label, ".count is ", g.count,
                                     "; must be >= 0 (0: Ferry picks)"));
    }
    if (g.kind == DeviceKind::kCpu && !g.gpus.empty()) {
      errors->push_back(
          absl::StrCat(label, ": kind KIND_CPU cannot list gpus (gpus: [",
                       absl::StrJoin(g.gpus, ", "), "])"));
    }
    for (size_t j = 0; j < g.gpus.size(); ++j) {
      if (g.gpus[j] < 0) {
        errors->push_back(absl::StrCat(label, ".gpus[", j, "] is ", g.gpus[j],
                                       "; must be >= 0"));
      }
    }
  }
}

void CheckVersionPolicy(const VersionPolicyOptions& policy,
                        std::vector<std::string>* errors) {
  switch (policy.kind) {
    case VersionPolicyOptions::Kind::kLatest:
      if (policy.num_versions < 1) {
        errors->push_back(absl::StrCat("version_policy.latest.num_versions is ",
                                       policy.num_versions, "; must be >= 1"));
      }
      break;
    case VersionPolicyOptions::Kind::kSpecific:
      if (policy.versions.empty()) {
        errors->push_back(
            "version_policy.specific.versions is empty; list at least one");
      }
      for (size_t i = 0; i < policy.versions.size(); ++i) {
        if (policy.versions[i] < 1) {
          errors->push_back(absl::StrCat("version_policy.specific.versions[", i,
                                         "] is ", policy.versions[i],
                                         "; versions must be >= 1"));
        }
      }
      break;
    case VersionPolicyOptions::Kind::kAll:
      break;
  }
}

// A warmup data file must stay inside <model>/warmup/.
bool IsContainedRelativePath(const std::string& file) {
  std::filesystem::path path(file);
  if (file.empty() || path.is_absolute() || path.has_root_name()) return false;
  for (const auto& part : path) {
    if (part == "..") return false;
  }
  return true;
}

void CheckWarmups(const ModelOptions& options, bool complete,
                  std::vector<std::string>* errors) {
  const int32_t max_batch =
      options.max_batch_size > 1 ? options.max_batch_size : 1;
  std::set<std::string> input_names;
  for (const TensorSpec& in : options.inputs) input_names.insert(in.name);
  // Before auto-complete the inputs may not be known yet.
  const bool check_names = complete || !options.inputs.empty();
  for (size_t i = 0; i < options.warmups.size(); ++i) {
    const WarmupOptions& w = options.warmups[i];
    const std::string label =
        absl::StrCat("model_warmup[", i, "] '", w.name, "'");
    if (w.batch_size < 1 || w.batch_size > static_cast<uint32_t>(max_batch)) {
      errors->push_back(absl::StrCat(
          label, ": batch_size is ", w.batch_size, "; must be in 1..",
          max_batch, options.max_batch_size > 1 ? " (max_batch_size)" : ""));
    }
    if (w.count < 1) {
      errors->push_back(
          absl::StrCat(label, ": count is ", w.count, "; must be >= 1"));
    }
    for (const auto& [name, in] : w.inputs) {
      const std::string where = absl::StrCat(label, " inputs['", name, "']");
      if (check_names && input_names.count(name) == 0) {
        errors->push_back(
            absl::StrCat(where, ": '", name, "' is not an input of the model"));
      }
      for (size_t d = 0; d < in.dims.size(); ++d) {
        if (in.dims[d] < 1) {
          errors->push_back(absl::StrCat(where, ": dims[", d, "] is ",
                                         in.dims[d],
                                         "; warmup dims must be positive"));
        }
      }
      if (in.fill == WarmupInput::Fill::kFile &&
          !IsContainedRelativePath(in.file)) {
        errors->push_back(
            absl::StrCat(where, ": input_data_file '", in.file,
                         "' must be a relative path inside the model's "
                         "warmup/ directory"));
      }
    }
  }
}

// Every rule, as messages without the source prefix. `complete`: the config is
// final (no auto-complete to come), so platform, inputs and outputs must be
// set.
std::vector<std::string> CheckOptions(const ModelOptions& options,
                                      bool complete) {
  std::vector<std::string> errors;
  if (options.name.empty()) errors.push_back("name is empty");
  if (complete && options.platform.empty()) {
    errors.push_back("platform or backend must be set");
  }
  if (options.max_batch_size < 0) {
    errors.push_back(absl::StrCat("max_batch_size is ", options.max_batch_size,
                                  "; must be >= 0"));
  }
  if (complete && options.inputs.empty())
    errors.push_back("no input; at least one is required");
  if (complete && options.outputs.empty()) {
    errors.push_back("no output; at least one is required");
  }
  CheckTensors("input", options.inputs, &errors);
  CheckTensors("output", options.outputs, &errors);
  CheckDynamicBatching(options, &errors);
  CheckInstanceGroups(options, &errors);
  CheckVersionPolicy(options.version_policy, &errors);
  CheckWarmups(options, complete, &errors);
  return errors;
}

}  // namespace

absl::StatusOr<ParsedModelConfig> ParseModelConfig(
    absl::string_view text, absl::string_view source,
    absl::string_view default_name) {
  Problems problems(source);
  if (text.size() > kMaxConfigBytes) {
    problems.Error(absl::StrCat("config is ", text.size(),
                                " bytes; the limit is ", kMaxConfigBytes));
    return problems.ToStatus();
  }
  inference::ModelConfig config;
  TextFormatCollector collector(&problems);
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&collector);
  // Triton configs carry fields Ferry does not model (optimization,
  // sequence_batching,
  // ...). TextFormat reports each through AddWarning and skips its value.
  parser.AllowUnknownField(true);
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  if (!parser.Parse(&input, &config) || problems.has_errors()) {
    if (!problems.has_errors()) problems.Error("config could not be parsed");
    return problems.ToStatus();
  }

  ParsedModelConfig parsed;
  parsed.options = ConvertConfig(config, default_name, &problems);
  if (problems.has_errors()) return problems.ToStatus();
  if (!parsed.options.platform.empty()) {
    for (const std::string& error :
         CheckOptions(parsed.options, /*complete=*/false)) {
      problems.Error(error);
    }
    if (problems.has_errors()) return problems.ToStatus();
  }
  parsed.warnings = problems.TakeWarnings();
  return parsed;
}

absl::StatusOr<ParsedModelConfig> LoadModelConfigFile(
    const std::filesystem::path& path, absl::string_view default_name) {
  const std::string source = path.string();
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) {
    return absl::NotFoundError(absl::StrCat(source, ": no such file"));
  }
  if (ec)
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", ec.message()));
  if (!std::filesystem::is_regular_file(status)) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": not a regular file"));
  }
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec)
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", ec.message()));
  if (size > kMaxConfigBytes) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": config is ", size,
                                                   " bytes; the limit is ",
                                                   kMaxConfigBytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": cannot open for reading"));
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  if (in.bad())
    return absl::InvalidArgumentError(absl::StrCat(source, ": read failed"));
  return ParseModelConfig(text, source, default_name);
}

absl::Status ValidateModelOptions(const ModelOptions& options) {
  std::vector<std::string> errors = CheckOptions(options, /*complete=*/true);
  if (errors.empty()) return absl::OkStatus();
  const std::string prefix = options.name.empty()
                                 ? "model config: "
                                 : absl::StrCat("model '", options.name, "': ");
  return absl::InvalidArgumentError(absl::StrJoin(
      errors, "\n", [&prefix](std::string* out, const std::string& error) {
        absl::StrAppend(out, prefix, error);
      }));
}

std::string CanonicalEngineName(absl::string_view name) {
  if (name == "pytorch" || name == "pytorch_libtorch")
    return "pytorch_libtorch";
  if (name == "xgboost" || name == "fil") return "xgboost";
  return std::string(name);
}

}  // namespace ferry
