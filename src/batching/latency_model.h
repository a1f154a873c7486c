// SPDX-License-Identifier: Apache-2.0
// LatencyModel: an online estimate of how long the engine takes to run a batch
// of `rows` rows, fitted from the batches it has just run. The DynamicBatcher
// uses it for deadline-aware dispatch: it sends a batch early when waiting
// longer would make a request in it miss its deadline, and rejects at once a
// request that cannot make its deadline even when run alone.
//
// Model: compute ≈ a + b·rows, fitted by exponentially weighted least squares.
// Every new sample multiplies the weight of all earlier ones by `decay`, so the
// fit follows drift (a warmer cache, a busier machine) with an effective memory
// of about (1 + decay) / (1 - decay) samples. Intercept and slope are clamped
// to be non-negative, so predictions are never negative. When the recent
// samples all have (nearly) the same rows — a steady load that always fills
// batches to max_batch_size, say — the slope cannot be told apart from the
// intercept; the model then falls back to a conservative proportional estimate
// (see Predict).
//
// Callers: engine instance threads call Observe after each batch; the batcher
// thread calls Predict. Safe for concurrent use (one mutex; both calls are
// O(1)).
#ifndef FERRY_BATCHING_LATENCY_MODEL_H_
#define FERRY_BATCHING_LATENCY_MODEL_H_

#include <cstdint>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "core/mutex.h"

namespace ferry {

class LatencyModel {
 public:
  struct Options {
    // Weight kept by every earlier sample when a new one arrives; in (0, 1]. 1
    // means no forgetting (plain least squares over all samples).
    double decay = 0.95;
    // Predict answers nullopt until this many samples were observed; >= 1.
    int min_samples = 3;
  };

  // The fitted model, for metrics and tests. Units are microseconds.
  struct Fit {
    double intercept_us = 0;      // a
    double slope_us_per_row = 0;  // b
    // True when the rows of recent samples were too alike to fit a slope;
    // Predict then uses mean_compute_us · max(1, rows / mean_rows), not a +
    // b·rows.
    bool proportional = false;
    double mean_rows = 0;  // weighted mean of recent samples' rows
    double mean_compute_us =
        0;                // weighted mean of recent samples' compute time
    int64_t samples = 0;  // samples observed in total (not decayed)
  };

  // Aborts (FERRY_CHECK) on options outside the ranges above: they come from
  // code.
  explicit LatencyModel(Options options);
  LatencyModel() : LatencyModel(Options()) {}

  LatencyModel(const LatencyModel&) = delete;
  LatencyModel& operator=(const LatencyModel&) = delete;

  // Records that a batch of `rows` rows took `compute` in the engine. Samples
  // with rows < 1, or a negative or infinite duration, carry no information and
  // are ignored.
  void Observe(int64_t rows, absl::Duration compute) ABSL_LOCKS_EXCLUDED(mu_);

  // The expected compute time of a batch of `rows` rows (rows < 0 is read as
  // 0), or nullopt before min_samples samples. Never negative. With a fitted
  // slope this is a + b·rows, extrapolated linearly beyond the rows seen. In
  // the proportional fallback it is mean_compute · rows / mean_rows for rows
  // above the mean, and the mean compute itself for rows at or below it: with
  // no slope there is no telling how much of the time is fixed overhead, so a
  // smaller batch is not assumed cheaper and a larger one is assumed to cost in
  // full proportion — both err towards "slower", which makes deadline checks
  // dispatch early rather than late.
  std::optional<absl::Duration> Predict(int64_t rows) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // The current fit, or nullopt before min_samples samples.
  std::optional<Fit> CurrentFit() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Fit FitLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable Mutex mu_;
  // Exponentially weighted running moments (West's weighted Welford update),
  // kept centred so that large row counts do not cancel catastrophically.
  double weight_ ABSL_GUARDED_BY(mu_) = 0;  // Σ w
  double mean_x_ ABSL_GUARDED_BY(mu_) = 0;  // rows
  double mean_y_ ABSL_GUARDED_BY(mu_) = 0;  // compute, microseconds
  double co_xx_ ABSL_GUARDED_BY(mu_) = 0;   // Σ w (x - mean_x)²
  double co_xy_ ABSL_GUARDED_BY(mu_) = 0;   // Σ w (x - mean_x)(y - mean_y)
  int64_t samples_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ferry

#endif  // FERRY_BATCHING_LATENCY_MODEL_H_
