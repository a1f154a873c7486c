// SPDX-License-Identifier: Apache-2.0
#include "loadgen/arrivals.h"

#include <cmath>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ferry {

absl::Status ParseArrivalPattern(absl::string_view text, ArrivalOptions* out) {
  if (text == "poisson") {
    out->pattern = ArrivalPattern::kPoisson;
    return absl::OkStatus();
  }
  if (text == "constant") {
    out->pattern = ArrivalPattern::kConstant;
    return absl::OkStatus();
  }
  if (absl::ConsumePrefix(&text, "bursty:")) {
    std::vector<absl::string_view> parts = absl::StrSplit(text, '/');
    int64_t on_ms = 0;
    int64_t off_ms = 0;
    if (parts.size() == 2 && absl::SimpleAtoi(parts[0], &on_ms) &&
        absl::SimpleAtoi(parts[1], &off_ms) && on_ms > 0 && off_ms >= 0) {
      out->pattern = ArrivalPattern::kBursty;
      out->burst_on = absl::Milliseconds(on_ms);
      out->burst_off = absl::Milliseconds(off_ms);
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--arrivals '", text,
                   "': want poisson, constant or bursty:ON_MS/OFF_MS (e.g. "
                   "bursty:100/400)"));
}

ArrivalSchedule::ArrivalSchedule(const ArrivalOptions& options)
    : options_(options), rng_(options.seed) {}

absl::Duration ArrivalSchedule::Next() {
  const double rate = options_.rate;
  switch (options_.pattern) {
    case ArrivalPattern::kConstant: {
      const double at = t_;
      t_ += 1.0 / rate;
      return absl::Seconds(at);
    }
    case ArrivalPattern::kPoisson: {
      std::exponential_distribution<double> gap(rate);
      t_ += gap(rng_);
      return absl::Seconds(t_);
    }
    case ArrivalPattern::kBursty: {
      // A Poisson process in "on-time", at the rate that gives `rate` on
      // average, mapped onto the wall clock by inserting the off periods.
      const double on = absl::ToDoubleSeconds(options_.burst_on);
      const double off = absl::ToDoubleSeconds(options_.burst_off);
      std::exponential_distribution<double> gap(rate * (on + off) / on);
      t_ += gap(rng_);
      const double period = std::floor(t_ / on);
      return absl::Seconds(period * (on + off) + (t_ - period * on));
    }
  }
  return absl::Seconds(t_);
}

}  // namespace ferry
