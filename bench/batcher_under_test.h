// SPDX-License-Identifier: Apache-2.0
// Helpers shared by bench/batcher_bench's measurements: a DynamicBatcher
// started over given engines whose threads are known by role, and small
// statistics and formatting helpers.
//
// Used by bench/ only. BatcherUnderTest is as thread-safe as DynamicBatcher;
// NoteInstanceThreads() and the roles are for the thread that owns it.
#ifndef FERRY_BENCH_BATCHER_UNDER_TEST_H_
#define FERRY_BENCH_BATCHER_UNDER_TEST_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "batching/dynamic_batcher.h"
#include "config/model_options.h"
#include "cpu_usage.h"
#include "engines/engine.h"

namespace ferry::bench {

using SteadyClock = std::chrono::steady_clock;

double SecondsSince(SteadyClock::time_point start);
// The q-quantile (nearest rank) of `v`; NaN when empty.
double Percentile(std::vector<double> v, double q);
// "1.23M", "45.6k", "789".
std::string FormatRate(double per_s);

// Forwards to the real engine and remembers which thread ran it.
class TidRecordingEngine final : public Engine {
 public:
  explicit TidRecordingEngine(Engine* inner) : inner_(inner) {}
  absl::StatusOr<std::vector<Tensor>> Run(
      absl::Span<const Tensor> inputs) override;
  int tid() const { return tid_.load(std::memory_order_relaxed); }

 private:
  Engine* const inner_;
  std::atomic<int> tid_{0};
};

// A running DynamicBatcher over some engines, with its threads' roles.
struct BatcherUnderTest {
  std::vector<std::unique_ptr<TidRecordingEngine>> wrapped;
  std::unique_ptr<DynamicBatcher> batcher;
  ThreadRoles roles;

  // Call once the instance threads have run the engine.
  void NoteInstanceThreads();
};

// A batcher configured from `model` (BatcherOptionsFromModel) over `engines`,
// which must outlive it; the threads Create started are recorded as batcher
// threads.
absl::StatusOr<std::unique_ptr<BatcherUnderTest>> StartBatcher(
    const ModelOptions& model, const std::vector<Engine*>& engines);

}  // namespace ferry::bench

#endif  // FERRY_BENCH_BATCHER_UNDER_TEST_H_
