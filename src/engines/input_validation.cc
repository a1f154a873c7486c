// SPDX-License-Identifier: Apache-2.0
#include "engines/input_validation.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"

namespace ferry {
namespace {

std::string ExpectedShape(const ModelOptions& options, const TensorSpec& spec) {
  Shape shape;
  if (options.max_batch_size > 0) shape.push_back(-1);
  shape.insert(shape.end(), spec.dims.begin(), spec.dims.end());
  return ShapeToString(shape);
}

absl::Status CheckOne(const ModelOptions& options, const TensorSpec& spec,
                      const Tensor& t, bool check_batch_limit,
                      std::optional<int64_t>* batch) {
  if (t.dtype() != spec.dtype) {
    return absl::InvalidArgumentError(
        absl::StrCat("input '", spec.name, "': expected ", ToString(spec.dtype),
                     ", got ", ToString(t.dtype())));
  }
  const bool batched = options.max_batch_size > 0;
  const Shape& shape = t.shape();
  const size_t rank = spec.dims.size() + (batched ? 1 : 0);
  bool ok = shape.size() == rank;
  for (size_t i = 0; ok && i < spec.dims.size(); ++i) {
    const int64_t want = spec.dims[i];
    ok = want < 0 || shape[i + (batched ? 1 : 0)] == want;
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input '", spec.name, "': shape ", ShapeToString(shape),
        " does not match the model's ", ExpectedShape(options, spec)));
  }
  if (!batched) return absl::OkStatus();
  const int64_t b = shape[0];
  if (b < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input '", spec.name, "': batch dimension is ", b, "; must be >= 1"));
  }
  if (check_batch_limit && b > options.max_batch_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("input '", spec.name, "': batch size ", b,
                     " exceeds max_batch_size ", options.max_batch_size));
  }
  if (batch->has_value() && **batch != b) {
    return absl::InvalidArgumentError(
        absl::StrCat("input '", spec.name, "': batch size ", b,
                     " differs from the other inputs' ", **batch));
  }
  *batch = b;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<size_t>> CheckInputs(const ModelOptions& options,
                                                absl::Span<const Tensor> inputs,
                                                bool check_batch_limit) {
  std::vector<std::optional<size_t>> slots(options.inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& t = inputs[k];
    size_t i = 0;
    while (i < options.inputs.size() && options.inputs[i].name != t.name()) ++i;
    if (i == options.inputs.size()) {
      std::string known;
      for (const TensorSpec& s : options.inputs) {
        absl::StrAppend(&known, known.empty() ? "" : ", ", "'", s.name, "'");
      }
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected input '", t.name(), "'; model '",
                       options.name, "' takes ", known));
    }
    if (slots[i].has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", t.name(), "' appears more than once"));
    }
    slots[i] = k;
  }
  std::optional<int64_t> batch;
  std::vector<size_t> order;
  order.reserve(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    const TensorSpec& spec = options.inputs[i];
    if (!slots[i].has_value()) {
      if (spec.optional) continue;
      return absl::InvalidArgumentError(
          absl::StrCat("input '", spec.name, "' is missing; model '",
                       options.name, "' requires it"));
    }
    absl::Status s =
        CheckOne(options, spec, inputs[*slots[i]], check_batch_limit, &batch);
    if (!s.ok()) return s;
    order.push_back(*slots[i]);
  }
  return order;
}

absl::StatusOr<std::vector<Tensor>> ValidateAndOrderInputs(
    const ModelOptions& options, std::vector<Tensor> inputs,
    bool check_batch_limit) {
  absl::StatusOr<std::vector<size_t>> order =
      CheckInputs(options, inputs, check_batch_limit);
  if (!order.ok()) return order.status();
  std::vector<Tensor> ordered;
  ordered.reserve(order->size());
  for (size_t k : *order) ordered.push_back(std::move(inputs[k]));
  return ordered;
}

}  // namespace ferry
