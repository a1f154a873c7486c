// SPDX-License-Identifier: Apache-2.0
// How `ferry bench` prints its results: an aligned table for people, JSON and
// CSV for scripts. Pure functions.
#ifndef FERRY_LOADGEN_REPORT_H_
#define FERRY_LOADGEN_REPORT_H_

#include <optional>
#include <string>
#include <vector>

#include "loadgen/load_driver.h"
#include "loadgen/server_metrics.h"

namespace ferry {

// One load point: what the client measured, and the server's split when its
// /metrics was scraped.
struct BenchPoint {
  LoadResult load;
  std::optional<ServerSplit> server;
};

struct BenchContext {
  std::string protocol;  // "http", "http-binary" or "grpc"
  std::string url;
  std::string model;
  int64_t rows_per_request = 1;
  int generator_threads = 1;  // threads that can drive the transport
};

std::string FormatTable(const BenchContext& context,
                        const std::vector<BenchPoint>& points);
std::string FormatJson(const BenchContext& context,
                       const std::vector<BenchPoint>& points);
std::string FormatCsv(const std::vector<BenchPoint>& points);

// A warning when the generator itself may have been the bottleneck (its CPU
// use near the threads it has), else empty.
std::string GeneratorWarning(const BenchContext& context,
                             const BenchPoint& point);

}  // namespace ferry

#endif  // FERRY_LOADGEN_REPORT_H_
