// SPDX-License-Identifier: Apache-2.0
#include "repository/warmup.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace ferry {
namespace {

Shape RunShape(const ModelOptions& options, int64_t batch_size,
               const std::vector<int64_t>& dims) {
  Shape shape;
  if (options.max_batch_size > 0) shape.push_back(batch_size);
  for (int64_t d : dims) shape.push_back(d < 0 ? 1 : d);
  return shape;
}

void FillRandom(Tensor* t, std::mt19937* rng) {
  std::byte* p = t->mutable_data();
  const size_t n = t->byte_size();
  const size_t width = ByteSize(t->dtype());
  std::uniform_real_distribution<float> real(0.0f, 1.0f);
  std::uniform_int_distribution<int> small(0, 1);
  for (size_t i = 0; i < n; i += width) {
    switch (t->dtype()) {
      case DataType::kFp32: {
        const float v = real(*rng);
        std::memcpy(p + i, &v, sizeof v);
        break;
      }
      case DataType::kFp64: {
        const double v = real(*rng);
        std::memcpy(p + i, &v, sizeof v);
        break;
      }
      default:
        // Integers and bools stay in {0, 1}: valid token ids, masks and
        // indices.
        p[i] = static_cast<std::byte>(small(*rng));
        break;
    }
  }
}

absl::StatusOr<Tensor> ReadInputFile(const std::string& name, DataType dtype,
                                     Shape shape,
                                     const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("model_warmup input '", name,
                                            "': cannot read input_data_file ",
                                            path.string()));
  }
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  absl::StatusOr<Tensor> t =
      Tensor::FromBytes(name, dtype, std::move(shape), std::move(bytes));
  if (!t.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model_warmup input_data_file ", path.string(), ": ",
                     t.status().message()));
  }
  return t;
}

}  // namespace

absl::StatusOr<std::vector<WarmupOptions>> PlanWarmup(
    const ModelOptions& options) {
  if (!options.warmups.empty()) return options.warmups;
  std::vector<uint32_t> batch_sizes = {1};
  if (options.max_batch_size > 1) batch_sizes.push_back(options.max_batch_size);
  std::vector<WarmupOptions> plan;
  for (uint32_t b : batch_sizes) {
    WarmupOptions w;
    w.name = absl::StrCat("default_batch_", b);
    w.batch_size = b;
    for (const TensorSpec& in : options.inputs) {
      WarmupInput wi;
      wi.dtype = in.dtype;
      wi.dims = in.dims;
      w.inputs.emplace(in.name, std::move(wi));
    }
    plan.push_back(std::move(w));
  }
  return plan;
}

absl::StatusOr<std::vector<Tensor>> MakeWarmupInputs(
    const ModelOptions& options, const WarmupOptions& warmup,
    const std::filesystem::path& model_dir) {
  std::mt19937 rng(42);
  std::vector<Tensor> inputs;
  for (const TensorSpec& spec : options.inputs) {
    auto it = warmup.inputs.find(spec.name);
    if (it == warmup.inputs.end()) {
      if (spec.optional) continue;
      return absl::InvalidArgumentError(
          absl::StrCat("model_warmup '", warmup.name, "': no data for input '",
                       spec.name, "'"));
    }
    const WarmupInput& wi = it->second;
    if (wi.dtype != spec.dtype) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model_warmup '", warmup.name, "' input '", spec.name,
          "': data_type ", ToConfigString(wi.dtype),
          " differs from the input's ", ToConfigString(spec.dtype)));
    }
    Shape shape = RunShape(options, warmup.batch_size,
                           wi.dims.empty() ? spec.dims : wi.dims);
    if (wi.fill == WarmupInput::Fill::kFile) {
      ASSIGN_OR_RETURN(Tensor t,
                       ReadInputFile(spec.name, spec.dtype, std::move(shape),
                                     model_dir / "warmup" / wi.file));
      inputs.push_back(std::move(t));
      continue;
    }
    if (spec.dtype == DataType::kBytes) {
      std::vector<std::string> empty(static_cast<size_t>(NumElements(shape)));
      ASSIGN_OR_RETURN(Tensor t,
                       Tensor::FromStrings(spec.name, std::move(shape), empty));
      inputs.push_back(std::move(t));
      continue;
    }
    ASSIGN_OR_RETURN(Tensor t,
                     Tensor::Zeros(spec.name, spec.dtype, std::move(shape)));
    if (wi.fill == WarmupInput::Fill::kRandom) FillRandom(&t, &rng);
    inputs.push_back(std::move(t));
  }
  return inputs;
}

absl::Status CheckOutputs(const ModelOptions& options, int64_t batch_size,
                          absl::Span<const Tensor> outputs) {
  if (outputs.size() != options.outputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model returned ", outputs.size(),
                     " outputs; the config declares ", options.outputs.size()));
  }
  const bool batched = options.max_batch_size > 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorSpec& spec = options.outputs[i];
    const Tensor& t = outputs[i];
    const std::string where = absl::StrCat("output '", spec.name, "'");
    if (t.dtype() != spec.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": config data_type ", ToConfigString(spec.dtype),
                       " but the model produced ", ToString(t.dtype())));
    }
    Shape want;
    if (batched) want.push_back(batch_size);
    want.insert(want.end(), spec.dims.begin(), spec.dims.end());
    bool match = t.shape().size() == want.size();
    for (size_t d = 0; match && d < want.size(); ++d) {
      match = want[d] < 0 || want[d] == t.shape()[d];
    }
    if (!match) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": config dims ", ShapeToString(spec.dims),
          batched ? absl::StrCat(" (with batch ", batch_size, ")")
                  : std::string(),
          " but the model produced shape ", ShapeToString(t.shape())));
    }
  }
  return absl::OkStatus();
}

absl::Status WarmUp(Engine& engine, const ModelOptions& options,
                    const std::filesystem::path& model_dir) {
  ASSIGN_OR_RETURN(std::vector<WarmupOptions> plan, PlanWarmup(options));
  for (const WarmupOptions& w : plan) {
    ASSIGN_OR_RETURN(std::vector<Tensor> inputs,
                     MakeWarmupInputs(options, w, model_dir));
    for (uint32_t i = 0; i < std::max<uint32_t>(1, w.count); ++i) {
      absl::StatusOr<std::vector<Tensor>> outputs = engine.Run(inputs);
      if (!outputs.ok()) {
        return absl::Status(outputs.status().code(),
                            absl::StrCat("warm-up '", w.name, "' failed: ",
                                         outputs.status().message()));
      }
      absl::Status check = CheckOutputs(options, w.batch_size, *outputs);
      if (!check.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("warm-up '", w.name, "': ", check.message()));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace ferry
