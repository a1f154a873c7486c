// SPDX-License-Identifier: Apache-2.0
// The only translation unit that includes libtorch (one costs ~20-35 s to
// compile).
#include "engines/torch/torch_engine.h"

#include <ATen/Parallel.h>
#include <c10/core/DeviceGuard.h>
#include <torch/cuda.h>
#include <torch/script.h>

#include <algorithm>
#include <charconv>
#include <exception>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "core/logging.h"
#include "core/status_macros.h"

namespace ferry {
namespace {

constexpr char kDefaultModelFilename[] = "model.pt";

std::optional<c10::ScalarType> ToScalarType(DataType type) {
  switch (type) {
    case DataType::kBool:
      return at::kBool;
    case DataType::kUint8:
      return at::kByte;
    case DataType::kInt8:
      return at::kChar;
    case DataType::kInt16:
      return at::kShort;
    case DataType::kInt32:
      return at::kInt;
    case DataType::kInt64:
      return at::kLong;
    case DataType::kFp16:
      return at::kHalf;
    case DataType::kFp32:
      return at::kFloat;
    case DataType::kFp64:
      return at::kDouble;
    case DataType::kUint16:
    case DataType::kUint32:
    case DataType::kUint64:
    case DataType::kBytes:
      return std::nullopt;  // libtorch 1.13 has no such type
  }
  return std::nullopt;
}

std::optional<DataType> FromScalarType(c10::ScalarType type) {
  switch (type) {
    case at::kBool:
      return DataType::kBool;
    case at::kByte:
      return DataType::kUint8;
    case at::kChar:
      return DataType::kInt8;
    case at::kShort:
      return DataType::kInt16;
    case at::kInt:
      return DataType::kInt32;
    case at::kLong:
      return DataType::kInt64;
    case at::kHalf:
      return DataType::kFp16;
    case at::kFloat:
      return DataType::kFp32;
    case at::kDouble:
      return DataType::kFp64;
    default:
      return std::nullopt;
  }
}

// "FP32", or torch's own name for a type Ferry has no name for ("BFloat16").
std::string ScalarTypeName(c10::ScalarType type) {
  std::optional<DataType> dtype = FromScalarType(type);
  return dtype ? std::string(ToString(*dtype))
               : std::string(c10::toString(type));
}

// The index of a Triton-style name "<anything>__<index>" ("INPUT__0" → 0).
std::optional<int> TritonIndex(absl::string_view name) {
  const size_t pos = name.rfind("__");
  if (pos == absl::string_view::npos) return std::nullopt;
  const absl::string_view digits = name.substr(pos + 2);
  if (digits.empty()) return std::nullopt;
  int index = 0;
  auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (ec != std::errc() || end != digits.data() + digits.size())
    return std::nullopt;
  return index;
}

// The `__<index>` of every spec when all of them have one, else nullopt.
std::optional<std::vector<int>> TritonIndices(
    const std::vector<TensorSpec>& specs) {
  std::vector<int> indices;
  for (const TensorSpec& spec : specs) {
    std::optional<int> index = TritonIndex(spec.name);
    if (!index) return std::nullopt;
    indices.push_back(*index);
  }
  return indices;
}

// The line of a torch error that says what went wrong. TorchScript interpreter
// errors open with a fixed sentence and a traceback and end with "RuntimeError:
// <reason>"; other errors say it on their first line.
std::string TorchMessage(const char* what) {
  const absl::string_view message(what == nullptr ? "" : what);
  std::vector<absl::string_view> lines =
      absl::StrSplit(message, '\n', absl::SkipWhitespace());
  if (lines.empty()) return "(no message)";
  if (absl::StartsWith(message,
                       "The following operation failed in the TorchScript")) {
    return std::string(lines.back());
  }
  return std::string(lines.front());
}

std::string TorchMessage(const std::exception& e) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e)) {
    return TorchMessage(c10_error->what_without_backtrace());
  }
  return TorchMessage(e.what());
}

// at::set_num_interop_threads throws when called twice or after inter-op work
// started; the first engine in the process sets it, and a failure only costs
// idle threads.
void SetInterOpThreadsOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    try {
      at::set_num_interop_threads(1);
    } catch (const std::exception& e) {
      FERRY_LOG(kDebug,
                "torch: inter-op threads already set: ", TorchMessage(e));
    }
  });
}

// OpenMP's thread count is per thread, and a new thread does not inherit what
// another thread set (see reference/engine-measurements.md), so every thread
// that runs an engine sets it before its first call, and again whenever it
// switches to an engine that wants a different count.
thread_local int tls_intra_op_threads = 0;

void UseIntraOpThreads(int threads) {
  if (tls_intra_op_threads == threads) return;
  at::set_num_threads(threads);
  tls_intra_op_threads = threads;
}

// Which device instance `context.instance_index` runs on; see the header.
absl::StatusOr<c10::Device> PickDevice(const EngineLoadContext& context) {
  const ModelOptions& options = context.options;
  const InstanceGroupOptions* group = nullptr;
  int group_index = 0;
  int local_index = context.instance_index;
  for (const InstanceGroupOptions& g : options.instance_groups) {
    if (local_index < g.count) {
      group = &g;
      break;
    }
    local_index -= g.count;
    ++group_index;
  }
  const DeviceKind kind = group == nullptr ? DeviceKind::kAuto : group->kind;
  const int cuda_devices = TorchCudaDeviceCount();
  switch (kind) {
    case DeviceKind::kCpu:
      return c10::Device(c10::kCPU);
    case DeviceKind::kAuto:
      if (cuda_devices == 0) return c10::Device(c10::kCPU);
      return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(
                                         local_index % cuda_devices));
    case DeviceKind::kGpu: {
      const std::string where = absl::StrCat(
          "model '", options.name, "': instance_group ", group_index,
          group->name.empty() ? "" : absl::StrCat(" ('", group->name, "')"));
      if (cuda_devices == 0) {
        return absl::UnavailableError(absl::StrCat(
            where,
            " asks for KIND_GPU, but libtorch sees no CUDA device (no GPU, or "
            "a CPU-only libtorch build); use KIND_CPU or a CUDA-enabled "
            "libtorch"));
      }
      const int gpu = group->gpus.empty()
                          ? local_index % cuda_devices
                          : group->gpus[local_index % group->gpus.size()];
      if (gpu < 0 || gpu >= cuda_devices) {
        return absl::UnavailableError(
            absl::StrCat(where, " asks for gpu ", gpu, ", but libtorch sees ",
                         cuda_devices, " CUDA device(s)"));
      }
      return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(gpu));
    }
  }
  return c10::Device(c10::kCPU);
}

absl::Status CheckSupportedTypes(const ModelOptions& options) {
  for (const auto* specs : {&options.inputs, &options.outputs}) {
    const char* kind = specs == &options.inputs ? "input" : "output";
    for (const TensorSpec& spec : *specs) {
      if (!ToScalarType(spec.dtype)) {
        return absl::InvalidArgumentError(
            absl::StrCat("model '", options.name, "': ", kind, " '", spec.name,
                         "' has type ", ToString(spec.dtype),
                         ", which libtorch does not support (use BOOL, UINT8, "
                         "INT8, INT16, INT32, INT64, FP16, FP32 or FP64)"));
      }
    }
  }
  return absl::OkStatus();
}

// For each configured input, the position of the forward() argument it feeds (0
// is the first argument after self).
absl::StatusOr<std::vector<int>> MapInputs(const ModelOptions& options,
                                           const c10::FunctionSchema& schema) {
  const std::vector<c10::Argument>& all_args = schema.arguments();
  std::vector<std::string> arg_names;
  for (size_t i = 1; i < all_args.size(); ++i)
    arg_names.push_back(all_args[i].name());
  const std::vector<TensorSpec>& inputs = options.inputs;
  const int n = static_cast<int>(inputs.size());
  if (arg_names.size() != inputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model '", options.name, "': the config declares ", n,
                     " input(s), but forward(", absl::StrJoin(arg_names, ", "),
                     ") takes ", arg_names.size()));
  }

  std::vector<int> positions(n);
  if (std::optional<std::vector<int>> indices = TritonIndices(inputs)) {
    positions = *std::move(indices);
  } else {
    bool by_name = true;
    for (int i = 0; i < n && by_name; ++i) {
      auto it = std::find(arg_names.begin(), arg_names.end(), inputs[i].name);
      if (it == arg_names.end()) {
        by_name = false;
      } else {
        positions[i] = static_cast<int>(it - arg_names.begin());
      }
    }
    if (!by_name) {
      for (int i = 0; i < n; ++i) positions[i] = i;
    }
  }

  std::vector<int> input_at(n, -1);  // forward() position → config input
  for (int i = 0; i < n; ++i) {
    const int pos = positions[i];
    if (pos < 0 || pos >= n) {
      return absl::InvalidArgumentError(
          absl::StrCat("model '", options.name, "': input '", inputs[i].name,
                       "' names forward() "
                       "argument ",
                       pos, ", but forward() takes ", n));
    }
    if (input_at[pos] >= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model '", options.name, "': inputs '", inputs[input_at[pos]].name,
          "' and '", inputs[i].name, "' both map to forward() argument ", pos));
    }
    input_at[pos] = i;
    const c10::TypePtr& type = all_args[pos + 1].type();
    if (!c10::TensorType::get()->isSubtypeOf(*type)) {
      return absl::InvalidArgumentError(
          absl::StrCat("model '", options.name, "': input '", inputs[i].name,
                       "' maps to forward() "
                       "argument '",
                       arg_names[pos], "' of type ", type->str(),
                       ", which cannot take a Tensor"));
    }
  }
  return positions;
}

// For each configured output, its position in a returned tuple or list.
absl::StatusOr<std::vector<int>> MapOutputs(const ModelOptions& options) {
  const std::vector<TensorSpec>& outputs = options.outputs;
  std::vector<int> positions(outputs.size());
  if (std::optional<std::vector<int>> indices = TritonIndices(outputs)) {
    positions = *std::move(indices);
  } else {
    for (size_t i = 0; i < outputs.size(); ++i)
      positions[i] = static_cast<int>(i);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (positions[i] == positions[j]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "model '", options.name, "': outputs '", outputs[j].name, "' and '",
            outputs[i].name, "' both name result element ", positions[i]));
      }
    }
  }
  return positions;
}

bool Overlaps(const void* a, size_t a_size, const void* b, size_t b_size) {
  if (a_size == 0 || b_size == 0) return false;
  const auto* a0 = static_cast<const std::byte*>(a);
  const auto* b0 = static_cast<const std::byte*>(b);
  return a0 < b0 + b_size && b0 < a0 + a_size;
}

class TorchEngine final : public Engine {
 public:
  TorchEngine(ModelOptions options, torch::jit::Module module,
              c10::Device device, int intra_op_threads,
              std::vector<int> input_positions,
              std::vector<int> output_positions)
      : options_(std::move(options)),
        module_(std::move(module)),
        device_(device),
        intra_op_threads_(intra_op_threads),
        input_positions_(std::move(input_positions)),
        output_positions_(std::move(output_positions)) {}

  absl::StatusOr<std::vector<Tensor>> Run(
      absl::Span<const Tensor> inputs) override {
    RETURN_IF_ERROR(CheckInputs(inputs));
    try {
      return RunOrThrow(inputs);
    } catch (const c10::OutOfMemoryError& e) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "model '", options_.name, "': out of memory: ", TorchMessage(e)));
    } catch (const std::bad_alloc& e) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "model '", options_.name, "': out of memory: ", e.what()));
    } catch (const std::exception& e) {
      // Shapes or values that forward() rejects: almost always the request's
      // doing.
      return absl::InvalidArgumentError(absl::StrCat(
          "model '", options_.name, "': forward() failed: ", TorchMessage(e)));
    }
  }

 private:
  absl::Status CheckInputs(absl::Span<const Tensor> inputs) const {
    if (inputs.size() != options_.inputs.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model '", options_.name, "': expected ", options_.inputs.size(),
          " input(s), got ", inputs.size()));
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      const TensorSpec& spec = options_.inputs[i];
      if (!ToScalarType(inputs[i].dtype())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "model '", options_.name, "': input '", spec.name, "': type ",
            ToString(inputs[i].dtype()), " is not supported by libtorch"));
      }
      if (inputs[i].dtype() != spec.dtype) {
        return absl::InvalidArgumentError(absl::StrCat(
            "model '", options_.name, "': input '", spec.name, "': expected ",
            ToString(spec.dtype), ", got ", ToString(inputs[i].dtype())));
      }
    }
    return absl::OkStatus();
  }

  // Dimension 0 of the inputs when the model batches, else -1 (nothing to
  // check).
  int64_t BatchSize(absl::Span<const Tensor> inputs) const {
    if (options_.max_batch_size <= 0 || inputs.empty() ||
        inputs[0].shape().empty()) {
      return -1;
    }
    return inputs[0].shape()[0];
  }

  absl::StatusOr<std::vector<Tensor>> RunOrThrow(
      absl::Span<const Tensor> inputs) {
    UseIntraOpThreads(intra_op_threads_);
    c10::InferenceMode inference_mode;
    c10::OptionalDeviceGuard device_guard(
        device_.is_cuda() ? c10::optional<c10::Device>(device_) : c10::nullopt);

    std::vector<c10::IValue> args(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& input = inputs[i];
      const auto options =
          at::TensorOptions().dtype(*ToScalarType(input.dtype()));
      // from_blob borrows the caller's bytes; the engine never writes to its
      // inputs.
      at::Tensor t = input.num_elements() == 0
                         ? at::empty(input.shape(), options)
                         : at::from_blob(const_cast<std::byte*>(input.data()),
                                         input.shape(), options);
      if (!device_.is_cpu()) t = t.to(device_);
      args[input_positions_[i]] = std::move(t);
    }

    const c10::IValue result = module_.forward(std::move(args));

    ASSIGN_OR_RETURN(std::vector<at::Tensor> selected, SelectOutputs(result));
    std::vector<Tensor> outputs;
    outputs.reserve(selected.size());
    const int64_t batch = BatchSize(inputs);
    for (size_t i = 0; i < selected.size(); ++i) {
      ASSIGN_OR_RETURN(Tensor out,
                       ToOutput(i, std::move(selected[i]), batch, inputs));
      outputs.push_back(std::move(out));
    }
    return outputs;
  }

  // Picks the tensor for each configured output out of forward()'s result.
  absl::StatusOr<std::vector<at::Tensor>> SelectOutputs(
      const c10::IValue& result) const {
    const std::vector<TensorSpec>& specs = options_.outputs;
    std::vector<at::Tensor> selected(specs.size());
    if (result.isTensor()) {
      if (specs.size() != 1 || output_positions_[0] != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "model '", options_.name,
            "': forward() returned one Tensor, but the config "
            "declares ",
            specs.size(), " output(s)",
            specs.size() == 1
                ? absl::StrCat(" ('", specs[0].name, "' is element ",
                               output_positions_[0], ")")
                : ""));
      }
      selected[0] = result.toTensor();
      return selected;
    }
    if (result.isTuple() || result.isList()) {
      const c10::ArrayRef<c10::IValue> elements =
          result.isTuple() ? result.toTupleRef().elements().asArrayRef()
                           : result.toListRef();
      for (size_t i = 0; i < specs.size(); ++i) {
        const size_t pos = static_cast<size_t>(output_positions_[i]);
        if (pos >= elements.size()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "model '", options_.name, "': output '", specs[i].name,
              "' is element ", pos, " of the result, but forward() returned ",
              elements.size()));
        }
        if (!elements[pos].isTensor()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "model '", options_.name, "': output '", specs[i].name,
              "': element ", pos, " of the result is a ",
              elements[pos].tagKind(), ", not a Tensor"));
        }
        selected[i] = elements[pos].toTensor();
      }
      return selected;
    }
    if (result.isGenericDict()) {
      const c10::Dict<c10::IValue, c10::IValue> dict = result.toGenericDict();
      for (size_t i = 0; i < specs.size(); ++i) {
        auto it = dict.find(c10::IValue(specs[i].name));
        if (it == dict.end()) {
          std::vector<std::string> keys;
          for (const auto& entry : dict) {
            keys.push_back(entry.key().isString() ? entry.key().toStringRef()
                                                  : entry.key().tagKind());
          }
          return absl::InvalidArgumentError(absl::StrCat(
              "model '", options_.name, "': output '", specs[i].name,
              "' is not a key of the dict forward() returned (keys: ",
              absl::StrJoin(keys, ", "), ")"));
        }
        if (!it->value().isTensor()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "model '", options_.name, "': output '", specs[i].name, "' is a ",
              it->value().tagKind(), ", not a Tensor"));
        }
        selected[i] = it->value().toTensor();
      }
      return selected;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", options_.name, "': forward() returned a ", result.tagKind(),
        "; expected a Tensor, a tuple or list of Tensors, or a Dict[str, "
        "Tensor]"));
  }

  // Checks one output and hands it out without copying it.
  absl::StatusOr<Tensor> ToOutput(size_t i, at::Tensor t, int64_t batch,
                                  absl::Span<const Tensor> inputs) const {
    const TensorSpec& spec = options_.outputs[i];
    if (FromScalarType(t.scalar_type()) != spec.dtype) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model '", options_.name, "': output '", spec.name, "': expected ",
          ToString(spec.dtype), ", got ", ScalarTypeName(t.scalar_type())));
    }
    if (batch >= 0 && (t.dim() == 0 || t.size(0) != batch)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model '", options_.name, "': output '", spec.name, "' has shape ",
          ShapeToString(
              absl::MakeConstSpan(t.sizes().data(), t.sizes().size())),
          ", but its dimension 0 must be the batch size ", batch));
    }
    t = t.to(at::kCPU).contiguous();
    // An output may be (a view of) an input, i.e. the caller's buffer, which
    // can go away before the output does: copy those.
    for (const Tensor& input : inputs) {
      if (Overlaps(t.data_ptr(), t.nbytes(), input.data(), input.byte_size())) {
        t = t.clone();
        break;
      }
    }
    Shape shape(t.sizes().begin(), t.sizes().end());
    auto keepalive = std::make_shared<at::Tensor>(std::move(t));
    const void* data = keepalive->data_ptr();
    const size_t byte_size = keepalive->nbytes();
    return Tensor::Borrow(spec.name, spec.dtype, std::move(shape), data,
                          byte_size, std::move(keepalive));
  }

  const ModelOptions options_;
  torch::jit::Module module_;
  const c10::Device device_;
  const int intra_op_threads_;
  const std::vector<int> input_positions_;  // config input → forward() argument
  const std::vector<int> output_positions_;  // config output → result element
};

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> TorchEngineFactory::Create(
    const EngineLoadContext& context) const {
  const ModelOptions& options = context.options;
  const std::filesystem::path path =
      context.version_dir / (options.default_model_filename.empty()
                                 ? std::string(kDefaultModelFilename)
                                 : options.default_model_filename);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::NotFoundError(absl::StrCat("model '", options.name,
                                            "': TorchScript file '",
                                            path.string(), "' not found"));
  }
  if (context.intra_op_threads < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", options.name, "': intra_op_threads must be >= 1, got ",
        context.intra_op_threads));
  }
  RETURN_IF_ERROR(CheckSupportedTypes(options));
  ASSIGN_OR_RETURN(const c10::Device device, PickDevice(context));
  ASSIGN_OR_RETURN(std::vector<int> output_positions, MapOutputs(options));
  SetInterOpThreadsOnce();

  torch::jit::Module module;
  std::vector<int> input_positions;
  try {
    module = torch::jit::load(path.string(), device);
    module.eval();
    auto forward = module.find_method("forward");
    if (!forward) {
      return absl::InvalidArgumentError(
          absl::StrCat("model '", options.name, "': '", path.string(),
                       "' has no forward() method"));
    }
    ASSIGN_OR_RETURN(input_positions,
                     MapInputs(options, forward->function().getSchema()));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", options.name, "': cannot load TorchScript file '",
        path.string(), "': ", TorchMessage(e)));
  }
  FERRY_LOG(kInfo, "model '", options.name, "': instance ",
            context.instance_index, " loaded '", path.string(), "' on ",
            device.str(), " with ", context.intra_op_threads,
            " intra-op thread(s)");
  return std::make_unique<TorchEngine>(
      options, std::move(module), device, context.intra_op_threads,
      std::move(input_positions), std::move(output_positions));
}

absl::Status TorchEngineFactory::AutoComplete(
    const std::filesystem::path& /*version_dir*/, ModelOptions* options) const {
  if (!options->inputs.empty() && !options->outputs.empty())
    return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "model '", options->name, "': ", kTorchPlatform,
      " models need a config.pbtxt with input and output (TorchScript does not "
      "describe "
      "its tensors; missing: ",
      options->inputs.empty() && options->outputs.empty() ? "input and output"
      : options->inputs.empty()                           ? "input"
                                                          : "output",
      ")"));
}

absl::Status RegisterTorchEngine(EngineRegistry* registry) {
  return registry->Register(kTorchPlatform,
                            std::make_unique<TorchEngineFactory>());
}

int TorchCudaDeviceCount() {
  try {
    return static_cast<int>(torch::cuda::device_count());
  } catch (const std::exception& e) {
    FERRY_LOG(kWarning, "torch: cannot count CUDA devices: ", TorchMessage(e));
    return 0;
  }
}

}  // namespace ferry
