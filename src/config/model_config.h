// SPDX-License-Identifier: Apache-2.0
// Model configuration at the edge: Triton's config.pbtxt text in, validated
// ModelOptions out, and back again.
//
// The repository calls LoadModelConfigFile() for models/<name>/config.pbtxt,
// lets the engine auto-complete what the file leaves out, then calls
// ValidateModelOptions() on the result. `ferry models` and the model-config
// endpoints turn options back into Triton's proto or text with
// ToModelConfigProto() / ToConfigText().
//
// The accepted text is a subset of Triton's ModelConfig
// (config/model_config.proto): fields Ferry does not know are reported as
// warnings and ignored, so a Triton model repository loads unchanged;
// everything Ferry does know is checked, and errors are INVALID_ARGUMENT
// messages that name the file, the field and the value.
//
// All functions are pure (LoadModelConfigFile reads one file) and safe to call
// concurrently.
#ifndef FERRY_CONFIG_MODEL_CONFIG_H_
#define FERRY_CONFIG_MODEL_CONFIG_H_

#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "config/model_config.pb.h"
#include "config/model_options.h"

namespace ferry {

struct ParsedModelConfig {
  ModelOptions options;
  // Things that did not stop the parse but that the user should see, one per
  // line, "source:line:col: message" where a position is known (unknown fields,
  // fields Ferry reads but does not act on).
  std::vector<std::string> warnings;
};

// Parses config.pbtxt text. `source` names the file in messages; `default_name`
// (the model directory's name) is used when `name` is missing, and a different
// explicit name is an error, as in Triton. Platform names are canonicalized
// ("pytorch" backend → "pytorch_libtorch", FIL backend → "xgboost"); an empty
// platform is allowed here and left empty for auto-complete. When the platform
// is set the options are validated as far as a config that an engine may still
// complete allows (inputs and outputs may be missing). Errors: INVALID_ARGUMENT
// with every problem found, one per line.
absl::StatusOr<ParsedModelConfig> ParseModelConfig(
    absl::string_view text, absl::string_view source,
    absl::string_view default_name);

// Reads and parses `path`. NOT_FOUND when the file does not exist,
// INVALID_ARGUMENT when it cannot be read or parsed.
absl::StatusOr<ParsedModelConfig> LoadModelConfigFile(
    const std::filesystem::path& path, absl::string_view default_name);

// Checks a complete ModelOptions (after any auto-complete): platform and name
// set, at least one input and one output, and every rule ParseModelConfig
// applies. INVALID_ARGUMENT naming each offending field and value, one per
// line.
absl::Status ValidateModelOptions(const ModelOptions& options);

// Triton's proto for `options`, for the model-config endpoints. Fields Ferry
// does not keep are left unset.
inference::ModelConfig ToModelConfigProto(const ModelOptions& options);

// `options` as config.pbtxt text that ParseModelConfig() reads back to equal
// options.
std::string ToConfigText(const ModelOptions& options);

// The engine a platform or backend name selects: "pytorch" →
// "pytorch_libtorch", "fil" → "xgboost"; other names unchanged.
std::string CanonicalEngineName(absl::string_view name);

}  // namespace ferry

#endif  // FERRY_CONFIG_MODEL_CONFIG_H_
