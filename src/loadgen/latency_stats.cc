// SPDX-License-Identifier: Apache-2.0
#include "loadgen/latency_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace ferry {

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double n = static_cast<double>(sorted.size());
  // Rank ceil(q * n), 1-based; the epsilon keeps q * n from landing one rank
  // high through rounding (0.99 * 100 = 99.00000000000001).
  size_t rank = static_cast<size_t>(std::ceil(q * n - 1e-9));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

LatencySummary Summarize(std::vector<double>* samples_us) {
  LatencySummary s;
  std::vector<double>& v = *samples_us;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.count = static_cast<int64_t>(v.size());
  s.mean_us = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  s.p50_us = Percentile(v, 0.50);
  s.p90_us = Percentile(v, 0.90);
  s.p99_us = Percentile(v, 0.99);
  s.p999_us = Percentile(v, 0.999);
  s.max_us = v.back();
  return s;
}

void LatencyRecorder::RecordSuccess(double latency_us, int64_t rows) {
  MutexLock lock(&mu_);
  current_.latencies_us.push_back(latency_us);
  current_.rows += rows;
}

void LatencyRecorder::RecordError(const std::string& code) {
  MutexLock lock(&mu_);
  ++current_.errors[code];
}

WindowSamples LatencyRecorder::Take() {
  MutexLock lock(&mu_);
  WindowSamples out = std::move(current_);
  current_ = WindowSamples();
  return out;
}

}  // namespace ferry
