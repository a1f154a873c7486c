// SPDX-License-Identifier: Apache-2.0
// The identity-engine half of bench/batcher_bench: what the DynamicBatcher
// itself costs per request, with an engine that only copies its input.
//   IdentitySaturation: P producer threads enqueue pre-built one-row requests
//     as fast as they can (retrying on UNAVAILABLE, queue full) into a batcher
//     with 1 instance, max_batch_size 64, delay 0.
//   IdentityLowLoad: one client, one request at a time; enqueue → callback
//     latency, next to the machine's floor for the same two thread hand-offs.
//
// Used by bench/ only. Each call starts and shuts down its own batcher and
// joins its threads before it returns.
#ifndef FERRY_BENCH_IDENTITY_BENCH_H_
#define FERRY_BENCH_IDENTITY_BENCH_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "cpu_usage.h"

namespace ferry::bench {

struct SaturationResult {
  int64_t requests = 0;
  double wall_s = 0;
  ProcessCpu cpu;
  double requests_per_s = 0, wall_us_per_request = 0, cpu_us_per_request = 0;
  double avg_batch = 0;
  uint64_t retries = 0;
  CpuBreakdown threads;
};

struct LowLoadResult {
  int requests = 0;
  double callback_p50_us = 0, callback_p99_us = 0;
  double round_trip_p50_us = 0, round_trip_p99_us = 0;
  // The machine's floor for the same hand-offs: the median round trip of two
  // threads waking each other through a condition variable (2 wake-ups).
  double ping_pong_p50_us = 0;
  // The same with both threads pinned to one core: the cost of a wake-up and
  // a context switch without an idle core to wake.
  double ping_pong_same_core_p50_us = 0;
};

absl::StatusOr<SaturationResult> IdentitySaturation(int producers,
                                                    int64_t total);
absl::StatusOr<LowLoadResult> IdentityLowLoad(int requests);

}  // namespace ferry::bench

#endif  // FERRY_BENCH_IDENTITY_BENCH_H_
