// SPDX-License-Identifier: Apache-2.0
// `ferry bench`: a load generator for a running server, in the spirit of
// Triton's perf_analyzer. KServe v2 over HTTP (JSON or binary tensors) or
// gRPC; closed loop over a concurrency sweep or open loop at request rates
// (Poisson, constant or bursty arrivals); random inputs shaped from the
// model's metadata or a request read from a file; warm-up, measurement
// windows until stable; throughput, latency percentiles, errors by code, and
// the server's queue/compute split and batch size from /metrics.
#ifndef FERRY_CLI_BENCH_COMMAND_H_
#define FERRY_CLI_BENCH_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace ferry {

struct BenchCommandOptions {
  std::string protocol = "http";  // http | grpc
  std::string url;                // default by protocol
  std::string model;
  std::string version;
  bool binary = false;
  std::string concurrency = "1";  // comma-separated sweep
  std::string request_rate;       // comma-separated; open loop when set
  std::string arrivals = "poisson";
  int64_t batch_size = 1;
  std::vector<std::string> shapes;
  int distinct_requests = 0;  // 0: 64 with ranged shapes, else 1
  int64_t int_max = 100;
  std::string input_data;
  double warmup_seconds = 2;
  double window_seconds = 3;
  int max_windows = 10;
  double stability_percent = 10;
  int threads = 1;
  int max_connections = 1024;
  double timeout_seconds = 30;
  std::string metrics_url;  // default: the HTTP server's /metrics
  bool no_metrics = false;
  std::string json_file;
  std::string csv_file;
  uint64_t seed = 1;
};

CLI::App* AddBenchCommand(CLI::App& app, BenchCommandOptions* options);

// 0 when every load point ran without errors; 1 when a point saw errors; 2
// when the benchmark could not start (bad flags, server unreachable, unknown
// model), with the reason on `err`.
int RunBenchCommand(const BenchCommandOptions& options, std::ostream& out,
                    std::ostream& err);

}  // namespace ferry

#endif  // FERRY_CLI_BENCH_COMMAND_H_
