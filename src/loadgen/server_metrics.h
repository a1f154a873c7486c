// SPDX-License-Identifier: Apache-2.0
// The server's side of a `ferry bench` measurement, from two scrapes of
// Ferry's Prometheus /metrics (before and after): where a request's time went
// (queue vs compute) and how large the batches were.
//
// Pure functions.
#ifndef FERRY_LOADGEN_SERVER_METRICS_H_
#define FERRY_LOADGEN_SERVER_METRICS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ferry {

struct MetricSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Parses the Prometheus text exposition format (comments skipped; label
// values unescaped). INVALID_ARGUMENT names the line.
absl::StatusOr<std::vector<MetricSample>> ParsePrometheusText(
    absl::string_view text);

// The sum of the samples called `name` that carry every label in `match`.
double SumSamples(const std::vector<MetricSample>& samples,
                  absl::string_view name,
                  const std::map<std::string, std::string>& match);

struct ServerSplit {
  int64_t requests = 0;  // online requests that finished, all levels
  int64_t batches = 0;
  double avg_queue_us = 0;    // per request
  double avg_compute_us = 0;  // per batch
  double avg_batch_rows = 0;
  // Padding elements ÷ all batch input elements (variable-length inputs).
  double padding_waste = 0;
};

// The deltas between two scrapes for `model` (every version and level).
ServerSplit ComputeServerSplit(const std::vector<MetricSample>& before,
                               const std::vector<MetricSample>& after,
                               const std::string& model);

}  // namespace ferry

#endif  // FERRY_LOADGEN_SERVER_METRICS_H_
