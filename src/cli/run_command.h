// SPDX-License-Identifier: Apache-2.0
// `ferry run`: scores a file of records with a model, as one durable offline
// job in this process: the SQLite job store and the chunk part files live in a
// state directory next to the output, so an interrupted run (Ctrl-C, SIGKILL,
// a crash) continues with --resume without redoing finished chunks, and the
// output is the same as an uninterrupted run's.
#ifndef FERRY_CLI_RUN_COMMAND_H_
#define FERRY_CLI_RUN_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "engines/engine_registry.h"

namespace ferry {

struct RunCommandOptions {
  std::string model_repository;
  std::string model;
  int64_t version = 0;
  std::string input;
  std::string output;
  std::string errors;        // default <output>.errors.jsonl
  std::string dead_letters;  // default <output>.dead_letters.jsonl
  std::string format;        // csv | jsonl; default from the input's extension
  std::string id_column;
  std::vector<std::string> columns;
  bool keep_columns = false;
  int64_t chunk_size = 10000;
  int max_attempts = 3;
  bool resume = false;
  std::string state_dir;  // default <output>.ferry-state
  int parallel_chunks = 2;
  double price_per_instance_hour = 0;
  std::string progress = "auto";  // auto | bar | lines | none
};

CLI::App* AddRunCommand(CLI::App& app, RunCommandOptions* options);

// Exit code: 0 when the job completed (failed records are in the error file),
// 1 when it could not run or failed, 130 when interrupted (resumable).
int RunRunCommand(const RunCommandOptions& options,
                  const EngineRegistry& engines, std::ostream& out,
                  std::ostream& err);

}  // namespace ferry

#endif  // FERRY_CLI_RUN_COMMAND_H_
