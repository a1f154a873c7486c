// SPDX-License-Identifier: Apache-2.0
// What bench/batcher_bench measures with a real engine: the closed loops (the
// clients against the DynamicBatcher, or against DirectQueue with or without
// engines), the bare engine in a loop, and the ceiling the two give for this
// machine. Used by bench/batcher_bench only.
#ifndef FERRY_BENCH_ENGINE_LOOPS_H_
#define FERRY_BENCH_ENGINE_LOOPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "closed_loop.h"
#include "config/model_options.h"
#include "cpu_usage.h"
#include "engines/engine.h"

namespace ferry::bench {

struct ClosedLoopResult {
  std::string label;
  int max_batch_size = 0;
  uint64_t max_queue_delay_us = 0;
  double rows_per_s = 0;
  double avg_batch = 0;
  double p50_ms = 0, p99_ms = 0;
  double engine_busy = 0;  // share of the window the engines computed
  double callback_us_per_row = 0;
  ProcessCpu cpu;
  double cpu_cores = 0, cpu_us_per_row = 0;
  double wall_s = 0;
  uint64_t errors = 0;
  CpuBreakdown threads;
};

// The clients against DynamicBatcher with batching on (max_batch_size 256,
// max_queue_delay `delay_us`) or off (max_batch_size 1).
absl::StatusOr<ClosedLoopResult> BatcherLoop(
    const ModelOptions& base, bool batching, uint64_t delay_us,
    const std::vector<Engine*>& engines, const Rows& rows,
    const ClosedLoopOptions& opts);

// The clients against DirectQueue: no engine (what the clients cost), or
// the engines with greedy batching and no policy.
ClosedLoopResult DirectLoop(const Rows& rows, const ClosedLoopOptions& opts,
                            const std::vector<Engine*>& engines = {});

struct BareResult {
  int64_t batch = 0;
  double rows_per_s = 0;
  double cpu_us_per_row = 0;  // process CPU per row, warm-up included
};

// Every engine runs in its own thread on its own pre-built batch of `batch`
// rows for `seconds` after a short warm-up; the rates add up.
absl::StatusOr<BareResult> Bare(const std::vector<Engine*>& engines,
                                const std::string& input, const Rows& rows,
                                int64_t batch, double seconds);

// The most the closed loop can deliver on `cores` cores when the batcher costs
// nothing and no core idles: every row costs the client threads what they
// cost against DirectQueue with no engine (`clients`, CPU µs per row, their
// wake-ups included) plus what the bare engine spends on it at that batch
// size; the cores are shared by both. Capped at the bare engine's rate.
double Ceiling(unsigned cores, const ClosedLoopResult& clients,
               const BareResult& bare);

// One JSON object / one human-readable line for a closed loop.
std::string ClosedLoopJson(const ClosedLoopResult& r);
std::string ClosedLoopLine(const ClosedLoopResult& r);

}  // namespace ferry::bench

#endif  // FERRY_BENCH_ENGINE_LOOPS_H_
