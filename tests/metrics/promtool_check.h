// SPDX-License-Identifier: Apache-2.0
// PromtoolCheck: runs `promtool check metrics` (Debian's prometheus package) on
// a text exposition and returns its exit code and output, for tests that hold
// the renderer to Prometheus' own parser and linter.
#ifndef FERRY_TESTS_METRICS_PROMTOOL_CHECK_H_
#define FERRY_TESTS_METRICS_PROMTOOL_CHECK_H_

#include <string>

#include "absl/status/statusor.h"

namespace ferry::testing {

struct PromtoolResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// The path of promtool found on PATH, or NOT_FOUND.
absl::StatusOr<std::string> FindPromtool();

// Writes `text` to a temporary file and runs `promtool check metrics < file`.
// NOT_FOUND without promtool; INTERNAL when it cannot run.
absl::StatusOr<PromtoolResult> PromtoolCheckMetrics(const std::string& text);

}  // namespace ferry::testing

#endif  // FERRY_TESTS_METRICS_PROMTOOL_CHECK_H_
