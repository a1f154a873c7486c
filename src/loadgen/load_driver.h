// SPDX-License-Identifier: Apache-2.0
// RunLoad: drives a Transport at one load point, closed loop (a fixed number
// of calls always in flight) or open loop (arrivals on a schedule, whatever
// the answers do), and measures it the way perf_analyzer does: a warm-up,
// then measurement windows until the last few agree (throughput and mean
// latency within a tolerance) or a window budget runs out.
//
// Open-loop latency counts from each call's scheduled send time, so a
// generator or connection pool that falls behind shows up as latency instead
// of hiding it (no coordinated omission).
#ifndef FERRY_LOADGEN_LOAD_DRIVER_H_
#define FERRY_LOADGEN_LOAD_DRIVER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "loadgen/arrivals.h"
#include "loadgen/latency_stats.h"
#include "loadgen/transport.h"

namespace ferry {

struct LoadOptions {
  int concurrency = 1;                     // closed loop, when no arrivals
  std::optional<ArrivalOptions> arrivals;  // open loop
  int64_t rows_per_request = 1;
  absl::Duration warmup = absl::Seconds(2);
  absl::Duration window = absl::Seconds(3);
  int stable_windows = 3;   // the last this many must agree...
  double stability = 0.10;  // ...within this fraction of their mean
  int max_windows = 10;
  // Open loop: calls in flight beyond this are not sent but counted as the
  // error "generator backlog".
  int64_t max_in_flight = 100000;
  // How long to wait for calls in flight once measuring ends.
  absl::Duration drain_timeout = absl::Seconds(35);
};

struct LoadResult {
  int concurrency = 0;     // closed loop
  double target_rate = 0;  // open loop
  double seconds = 0;      // measured (the windows reported)
  int windows = 0;         // reported windows
  int windows_run = 0;     // measured in all
  bool stable = false;
  int64_t requests = 0;  // successful
  int64_t rows = 0;
  double requests_per_s = 0;
  double rows_per_s = 0;
  LatencySummary latency;
  std::map<std::string, int64_t> errors;
  int64_t failed = 0;
  // The generator's own CPU use while measuring, in cores.
  double client_cpu_cores = 0;
  // Calls still in flight when the drain timed out (0 normally).
  int64_t abandoned = 0;
};

LoadResult RunLoad(Transport* transport, const LoadOptions& options);

}  // namespace ferry

#endif  // FERRY_LOADGEN_LOAD_DRIVER_H_
