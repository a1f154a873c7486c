// SPDX-License-Identifier: Apache-2.0
#include "engines/identity/identity_engine.h"

#include <charconv>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/status_macros.h"

namespace ferry {
namespace {

absl::StatusOr<std::optional<double>> NumberParameter(
    const ModelOptions& options, const std::string& key) {
  std::optional<std::string> text = options.parameter(key);
  if (!text) return std::nullopt;
  double value = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end) {
    return absl::InvalidArgumentError(
        absl::StrCat("model '", options.name, "': parameters.", key, " is \"",
                     *text, "\"; expected a number"));
  }
  return value;
}

std::optional<double> FirstValue(const Tensor& t) {
  if (t.num_elements() == 0) return std::nullopt;
  switch (t.dtype()) {
    case DataType::kFp32:
      return t.values<float>()[0];
    case DataType::kInt32:
      return t.values<int32_t>()[0];
    case DataType::kInt64:
      return static_cast<double>(t.values<int64_t>()[0]);
    default:
      return std::nullopt;
  }
}

class IdentityEngine final : public Engine {
 public:
  IdentityEngine(std::vector<TensorSpec> outputs, absl::Duration delay,
                 std::optional<double> fail_value)
      : outputs_(std::move(outputs)), delay_(delay), fail_value_(fail_value) {}

  absl::StatusOr<std::vector<Tensor>> Run(
      absl::Span<const Tensor> inputs) override {
    const absl::Time start = absl::Now();
    if (inputs.size() != outputs_.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("identity: got ", inputs.size(),
                       " inputs, configured for ", outputs_.size()));
    }
    if (fail_value_ && FirstValue(inputs[0]) == fail_value_) {
      return absl::InternalError(
          absl::StrCat("identity: input '", inputs[0].name(), "' starts with ",
                       *fail_value_, " (parameters.fail_on_first_value)"));
    }
    std::vector<Tensor> out;
    out.reserve(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].dtype() != outputs_[i].dtype) {
        return absl::InvalidArgumentError(absl::StrCat(
            "identity: input '", inputs[i].name(), "' is ",
            ToString(inputs[i].dtype()), ", output '", outputs_[i].name,
            "' is ", ToString(outputs_[i].dtype)));
      }
      Tensor t = inputs[i].Clone();
      t.set_name(outputs_[i].name);
      out.push_back(std::move(t));
    }
    const absl::Duration left = delay_ - (absl::Now() - start);
    if (left > absl::ZeroDuration()) absl::SleepFor(left);
    return out;
  }

 private:
  std::vector<TensorSpec> outputs_;
  absl::Duration delay_;
  std::optional<double> fail_value_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> IdentityEngineFactory::Create(
    const EngineLoadContext& context) const {
  const ModelOptions& options = context.options;
  if (options.inputs.size() != options.outputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model '", options.name,
                     "': identity needs as many outputs as inputs; config has ",
                     options.inputs.size(), " inputs and ",
                     options.outputs.size(), " outputs"));
  }
  for (size_t i = 0; i < options.inputs.size(); ++i) {
    if (options.inputs[i].dtype != options.outputs[i].dtype) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model '", options.name, "': output[", i, "] '",
          options.outputs[i].name, "' data_type ",
          ToConfigString(options.outputs[i].dtype), " differs from input[", i,
          "] '", options.inputs[i].name, "' data_type ",
          ToConfigString(options.inputs[i].dtype)));
    }
  }
  ASSIGN_OR_RETURN(std::optional<double> delay_us,
                   NumberParameter(options, "execute_delay_us"));
  ASSIGN_OR_RETURN(std::optional<double> fail_value,
                   NumberParameter(options, "fail_on_first_value"));
  return std::make_unique<IdentityEngine>(
      options.outputs, absl::Microseconds(delay_us.value_or(0)), fail_value);
}

absl::Status IdentityEngineFactory::AutoComplete(const std::filesystem::path&,
                                                 ModelOptions* options) const {
  if (options->inputs.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("model '", options->name,
                     "': identity models need a config.pbtxt with inputs"));
  }
  if (options->outputs.empty()) {
    for (size_t i = 0; i < options->inputs.size(); ++i) {
      TensorSpec out = options->inputs[i];
      out.name = absl::StrCat("OUTPUT", i);
      out.optional = false;
      options->outputs.push_back(std::move(out));
    }
  }
  return absl::OkStatus();
}

absl::Status RegisterIdentityEngine(EngineRegistry* registry) {
  return registry->Register("identity",
                            std::make_unique<IdentityEngineFactory>());
}

}  // namespace ferry
