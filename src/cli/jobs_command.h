// SPDX-License-Identifier: Apache-2.0
// `ferry jobs`: a command-line client of a running server's job API
// (/v1/jobs, /v1/files; docs/api.md "Job API"): submit, status, list, cancel,
// wait, download, replay-dead-letters.
#ifndef FERRY_CLI_JOBS_COMMAND_H_
#define FERRY_CLI_JOBS_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace ferry {

struct JobsCommandOptions {
  std::string server = "http://127.0.0.1:8000";
  std::string action;  // the subcommand that was parsed
  std::string job;
  bool json = false;
  // submit
  std::string model;
  int64_t version = 0;
  std::string input;   // a path under the server's data roots
  std::string upload;  // a local file to upload instead
  std::string output;
  std::string format;
  std::string id_column;
  std::vector<std::string> columns;
  bool keep_columns = false;
  int64_t chunk_size = 0;
  int max_attempts = 0;
  std::string completion_window;
  std::string run_window;
  std::string time_zone;
  std::string webhook_url;
  std::vector<std::string> metadata;  // key=value
  bool wait = false;
  // list
  int limit = 20;
  // wait
  double timeout_s = 0;  // 0: no limit
  // download
  std::string output_file;  // empty: standard output
  std::string errors_file;
};

CLI::App* AddJobsCommand(CLI::App& app, JobsCommandOptions* options);

// Exit code: 0 on success (for wait: the job completed), 1 otherwise.
int RunJobsCommand(const JobsCommandOptions& options, std::ostream& out,
                   std::ostream& err);

}  // namespace ferry

#endif  // FERRY_CLI_JOBS_COMMAND_H_
