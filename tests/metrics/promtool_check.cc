// SPDX-License-Identifier: Apache-2.0
#include "metrics/promtool_check.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "test_util/temp_dir.h"

namespace ferry::testing {

absl::StatusOr<std::string> FindPromtool() {
  const char* path = std::getenv("PATH");
  for (absl::string_view dir :
       absl::StrSplit(path ? path : "/usr/bin:/bin", ':')) {
    if (dir.empty()) continue;
    const std::filesystem::path candidate =
        std::filesystem::path(std::string(dir)) / "promtool";
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec)) {
      return candidate.string();
    }
  }
  return absl::NotFoundError(
      "promtool is not on PATH; install Debian's prometheus package "
      "(scripts/install-deps.sh)");
}

absl::StatusOr<PromtoolResult> PromtoolCheckMetrics(const std::string& text) {
  absl::StatusOr<std::string> promtool = FindPromtool();
  if (!promtool.ok()) return promtool.status();
  TempDir dir;
  const std::filesystem::path file = dir.path() / "metrics.txt";
  WriteFile(file, text);
  const std::string command = absl::StrCat(
      "'", *promtool, "' check metrics < '", file.string(), "' 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return absl::InternalError(absl::StrCat("cannot run: ", command));
  }
  PromtoolResult result;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0)
    result.output.append(buf, n);
  const int status = pclose(pipe);
  if (status == -1 || !WIFEXITED(status)) {
    return absl::InternalError(
        absl::StrCat("'", command, "' did not exit normally: ", status));
  }
  result.exit_code = WEXITSTATUS(status);
  return result;
}

}  // namespace ferry::testing
