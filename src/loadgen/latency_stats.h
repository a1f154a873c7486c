// SPDX-License-Identifier: Apache-2.0
// Latency statistics for `ferry bench`: nearest-rank percentiles over every
// sample of a measurement (no histogram buckets, so no bucket error).
//
// Pure functions; LatencyRecorder is thread-safe.
#ifndef FERRY_LOADGEN_LATENCY_STATS_H_
#define FERRY_LOADGEN_LATENCY_STATS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "core/mutex.h"

namespace ferry {

// The nearest-rank percentile of ascending `sorted` samples: the smallest
// sample such that at least a fraction `q` (0 < q <= 1) of all samples are
// less than or equal to it. 0 for no samples.
double Percentile(const std::vector<double>& sorted, double q);

struct LatencySummary {
  int64_t count = 0;
  double mean_us = 0;
  double p50_us = 0;
  double p90_us = 0;
  double p99_us = 0;
  double p999_us = 0;
  double max_us = 0;
};

// Summarizes samples in microseconds (any order; sorted in place).
LatencySummary Summarize(std::vector<double>* samples_us);

// What one measurement window saw.
struct WindowSamples {
  std::vector<double> latencies_us;       // successful calls only
  std::map<std::string, int64_t> errors;  // by code, e.g. "http 503"
  int64_t rows = 0;                       // rows of successful calls
};

// Collects call outcomes from the transport threads; Take() hands over what
// came since the last Take().
class LatencyRecorder {
 public:
  void RecordSuccess(double latency_us, int64_t rows) ABSL_LOCKS_EXCLUDED(mu_);
  void RecordError(const std::string& code) ABSL_LOCKS_EXCLUDED(mu_);
  WindowSamples Take() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Mutex mu_;
  WindowSamples current_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ferry

#endif  // FERRY_LOADGEN_LATENCY_STATS_H_
