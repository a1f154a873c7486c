// SPDX-License-Identifier: Apache-2.0
// `ferry infer`: loads one model from a repository, runs one KServe v2 JSON
// inference request through its engine and prints the KServe v2 JSON response.
#ifndef FERRY_CLI_INFER_COMMAND_H_
#define FERRY_CLI_INFER_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "engines/engine_registry.h"

namespace ferry {

struct InferCommandOptions {
  std::string model_repository;
  std::string model;
  int64_t version = 0;  // 0: the latest READY version
  std::string request;  // a file, or "-" for standard input
};

CLI::App* AddInferCommand(CLI::App& app, InferCommandOptions* options);

// Returns the process exit code: 0 on success, 1 when the request or the model
// fails (the message, naming the field, goes to `err`).
int RunInferCommand(const InferCommandOptions& options,
                    const EngineRegistry& engines, std::ostream& out,
                    std::ostream& err);

}  // namespace ferry

#endif  // FERRY_CLI_INFER_COMMAND_H_
