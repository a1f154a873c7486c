// SPDX-License-Identifier: Apache-2.0
#include "batching/latency_model.h"

#include <algorithm>
#include <cmath>

#include "core/logging.h"

namespace ferry {
namespace {

// Below this spread of rows (weighted standard deviation relative to the
// weighted mean) a slope fitted from the samples is mostly noise: fall back to
// the proportional estimate. 5% keeps a fit when a steady load of full batches
// is mixed with a few smaller ones, and drops it when nearly every batch has
// the same size.
constexpr double kMinRelativeRowSpread = 0.05;

}  // namespace

LatencyModel::LatencyModel(Options options) : options_(options) {
  FERRY_CHECK(options_.decay > 0 && options_.decay <= 1,
              "LatencyModel decay must be in (0, 1], got ", options_.decay);
  FERRY_CHECK(options_.min_samples >= 1,
              "LatencyModel min_samples must be >= 1, got ",
              options_.min_samples);
}

void LatencyModel::Observe(int64_t rows, absl::Duration compute) {
  if (rows < 1 || compute < absl::ZeroDuration() ||
      compute == absl::InfiniteDuration()) {
    return;
  }
  const double x = static_cast<double>(rows);
  const double y = absl::ToDoubleMicroseconds(compute);
  MutexLock lock(&mu_);
  weight_ = options_.decay * weight_ + 1;
  co_xx_ *= options_.decay;
  co_xy_ *= options_.decay;
  const double dx = x - mean_x_;
  mean_x_ += dx / weight_;
  mean_y_ += (y - mean_y_) / weight_;
  co_xx_ += dx * (x - mean_x_);
  co_xy_ += dx * (y - mean_y_);
  ++samples_;
}

LatencyModel::Fit LatencyModel::FitLocked() const {
  Fit fit;
  fit.mean_rows = mean_x_;
  fit.mean_compute_us = mean_y_;
  fit.samples = samples_;
  const double variance_x = std::max(co_xx_, 0.0) / weight_;
  const double min_spread = kMinRelativeRowSpread * mean_x_;
  if (variance_x <= min_spread * min_spread) {
    fit.proportional = true;
    return fit;
  }
  double slope = co_xy_ / co_xx_;
  double intercept = mean_y_ - slope * mean_x_;
  if (slope < 0) {
    // Bigger batches looked cheaper (noise, or drift within the window): the
    // best non-negative slope is 0 and the best constant is the mean.
    slope = 0;
    intercept = mean_y_;
  } else if (intercept < 0) {
    // Least squares through the origin: b = Σwxy / Σwxx, from the centred
    // moments.
    slope = (co_xy_ + weight_ * mean_x_ * mean_y_) /
            (co_xx_ + weight_ * mean_x_ * mean_x_);
    intercept = 0;
  }
  fit.intercept_us = intercept;
  fit.slope_us_per_row = slope;
  return fit;
}

std::optional<LatencyModel::Fit> LatencyModel::CurrentFit() const {
  MutexLock lock(&mu_);
  if (samples_ < options_.min_samples) return std::nullopt;
  return FitLocked();
}

std::optional<absl::Duration> LatencyModel::Predict(int64_t rows) const {
  std::optional<Fit> fit = CurrentFit();
  if (!fit.has_value()) return std::nullopt;
  const double x = static_cast<double>(std::max<int64_t>(rows, 0));
  double us;
  if (fit->proportional) {
    us = fit->mean_compute_us * std::max(1.0, x / fit->mean_rows);
  } else {
    us = fit->intercept_us + fit->slope_us_per_row * x;
  }
  return absl::Microseconds(std::max(us, 0.0));
}

}  // namespace ferry
