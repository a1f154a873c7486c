// SPDX-License-Identifier: Apache-2.0
// `ferry serve`: loads a model repository into a ModelManager and serves it
// over HTTP (KServe v2 REST, and the job API under /v1) and gRPC until SIGTERM
// or SIGINT, then drains: the job runner gives its running chunks back (they
// continue on the next start), new inferences get 503, every accepted one
// gets its response (up to --grace-seconds), and the process exits 0.
//
// Called from main() on the main thread, before any other thread exists: it
// blocks SIGINT/SIGTERM for every thread it starts and waits for them with
// sigwait.
#ifndef FERRY_CLI_SERVE_COMMAND_H_
#define FERRY_CLI_SERVE_COMMAND_H_

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "engines/engine_registry.h"

namespace ferry {

struct ServeCommandOptions {
  std::string model_repository;
  std::string http_address = "0.0.0.0";
  int http_port = 8000;  // 0: pick a free port (printed on startup)
  int grpc_port = 8001;  // 0: pick a free port
  int http_threads = 2;
  double grace_seconds = 30;
  size_t max_body_bytes = size_t{64} << 20;
  // The job API (/v1): jobs.db, parts/ and files/ live in state_dir, which
  // one server at a time may use (a lock file).
  std::string state_dir = "ferry-state";
  std::vector<std::string> data_roots;  // where native jobs may read/write
  std::vector<std::string> input_url_prefixes;  // URLs jobs may download
  std::string webhook_secret_file;              // empty: no webhooks
  int job_workers = 1;                          // chunks processed at once
  int job_api_max_pending = 64;                 // /v1 requests queued at most
  std::string job_cpu_priority = "idle";  // idle | normal (see docs/jobs.md)
  double price_per_instance_hour = 0;     // for job costs
  size_t max_upload_bytes = size_t{256} << 20;
};

CLI::App* AddServeCommand(CLI::App& app, ServeCommandOptions* options);

// Returns the process exit code: 0 after a clean drain, 1 when the repository
// cannot be read, the HTTP port cannot be bound or the state directory cannot
// be used (another server holds it).
int RunServeCommand(const ServeCommandOptions& options,
                    const EngineRegistry& engines, std::ostream& out,
                    std::ostream& err);

}  // namespace ferry

#endif  // FERRY_CLI_SERVE_COMMAND_H_
