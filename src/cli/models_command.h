// SPDX-License-Identifier: Apache-2.0
// `ferry models`: loads a model repository and prints each model version's
// state, platform, tensors and max batch size, as a table or as JSON.
#ifndef FERRY_CLI_MODELS_COMMAND_H_
#define FERRY_CLI_MODELS_COMMAND_H_

#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "engines/engine_registry.h"

namespace ferry {

struct ModelsCommandOptions {
  std::string model_repository;
  bool json = false;
  bool strict = false;  // exit 1 when any model version is not READY
};

CLI::App* AddModelsCommand(CLI::App& app, ModelsCommandOptions* options);

// Returns the process exit code.
int RunModelsCommand(const ModelsCommandOptions& options,
                     const EngineRegistry& engines, std::ostream& out,
                     std::ostream& err);

}  // namespace ferry

#endif  // FERRY_CLI_MODELS_COMMAND_H_
