// SPDX-License-Identifier: Apache-2.0
#include "batcher_under_test.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_format.h"
#include "batching/batcher_options.h"
#include "core/clock.h"
#include "loadgen/latency_stats.h"

namespace ferry::bench {

double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  return ferry::Percentile(v, q);  // loadgen's nearest rank, as ferry bench
}

std::string FormatRate(double per_s) {
  if (per_s >= 1e6) return absl::StrFormat("%.2fM", per_s / 1e6);
  if (per_s >= 1e3) return absl::StrFormat("%.1fk", per_s / 1e3);
  return absl::StrFormat("%.0f", per_s);
}

absl::StatusOr<std::vector<Tensor>> TidRecordingEngine::Run(
    absl::Span<const Tensor> inputs) {
  tid_.store(GetTid(), std::memory_order_relaxed);
  return inner_->Run(inputs);
}

void BatcherUnderTest::NoteInstanceThreads() {
  for (const auto& w : wrapped) {
    if (w->tid() != 0) roles.instances.insert(w->tid());
  }
}

absl::StatusOr<std::unique_ptr<BatcherUnderTest>> StartBatcher(
    const ModelOptions& model, const std::vector<Engine*>& engines) {
  auto out = std::make_unique<BatcherUnderTest>();
  std::vector<Engine*> raw;
  for (Engine* e : engines) {
    out->wrapped.push_back(std::make_unique<TidRecordingEngine>(e));
    raw.push_back(out->wrapped.back().get());
  }
  absl::StatusOr<BatcherOptions> options = BatcherOptionsFromModel(model);
  if (!options.ok()) return options.status();
  const std::vector<int> before = ThreadIds();
  absl::StatusOr<std::unique_ptr<DynamicBatcher>> batcher =
      DynamicBatcher::Create(nullptr, model, raw, *std::move(options),
                             RealClock::Get());
  if (!batcher.ok()) return batcher.status();
  out->batcher = *std::move(batcher);
  // The scheduler and instance threads exist once Create returns.
  for (int tid : ThreadIds()) {
    if (std::find(before.begin(), before.end(), tid) == before.end()) {
      out->roles.batcher.insert(tid);
    }
  }
  return out;
}

}  // namespace ferry::bench
