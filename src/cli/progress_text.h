// SPDX-License-Identifier: Apache-2.0
// How `ferry run` and `ferry jobs` print a job's rate and ETA.
#ifndef FERRY_CLI_PROGRESS_TEXT_H_
#define FERRY_CLI_PROGRESS_TEXT_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"

namespace ferry {

// "850", "12.3k", "1.25M".
inline std::string RateText(double per_second) {
  if (per_second >= 1e6) return absl::StrFormat("%.2fM", per_second / 1e6);
  if (per_second >= 1e3) return absl::StrFormat("%.1fk", per_second / 1e3);
  return absl::StrFormat("%.0f", per_second);
}

// "mm:ss" or "h:mm:ss"; "--:--" when unknown (negative) or absurd.
inline std::string EtaText(double seconds) {
  if (!(seconds >= 0) || seconds > 1e7) return "--:--";
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) {
    return absl::StrFormat("%d:%02d:%02d", s / 3600, (s / 60) % 60, s % 60);
  }
  return absl::StrFormat("%02d:%02d", s / 60, s % 60);
}

}  // namespace ferry

#endif  // FERRY_CLI_PROGRESS_TEXT_H_
