// SPDX-License-Identifier: Apache-2.0
// When an open-loop `ferry bench` sends: Poisson arrivals at a mean rate,
// evenly spaced ones, or bursts (on/off: Poisson at a higher rate while on,
// silence while off, the same mean rate overall).
//
// Deterministic for a seed; not thread-safe (one schedule per sender).
#ifndef FERRY_LOADGEN_ARRIVALS_H_
#define FERRY_LOADGEN_ARRIVALS_H_

#include <cstdint>
#include <random>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ferry {

enum class ArrivalPattern { kPoisson, kConstant, kBursty };

struct ArrivalOptions {
  double rate = 100;  // mean requests per second, > 0
  ArrivalPattern pattern = ArrivalPattern::kPoisson;
  absl::Duration burst_on = absl::Milliseconds(100);  // kBursty
  absl::Duration burst_off = absl::Milliseconds(400);
  uint64_t seed = 1;
};

// "poisson", "constant", or "bursty:ON_MS/OFF_MS" (e.g. bursty:100/400).
// INVALID_ARGUMENT names the pattern.
absl::Status ParseArrivalPattern(absl::string_view text, ArrivalOptions* out);

class ArrivalSchedule {
 public:
  explicit ArrivalSchedule(const ArrivalOptions& options);

  // The next arrival's offset from the start; non-decreasing.
  absl::Duration Next();

 private:
  ArrivalOptions options_;
  std::mt19937_64 rng_;
  double t_ = 0;  // seconds: wall time, or on-time for kBursty
};

}  // namespace ferry

#endif  // FERRY_LOADGEN_ARRIVALS_H_
