// SPDX-License-Identifier: Apache-2.0
#include "core/logging.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace ferry {
namespace {

LogSeverity SeverityFromEnv() {
  const char* env = std::getenv("FERRY_LOG_LEVEL");
  if (env == nullptr) return LogSeverity::kInfo;
  const absl::string_view level(env);
  if (level == "debug") return LogSeverity::kDebug;
  if (level == "warning") return LogSeverity::kWarning;
  if (level == "error") return LogSeverity::kError;
  return LogSeverity::kInfo;
}

std::atomic<int>& MinSeverity() {
  static std::atomic<int> min(static_cast<int>(SeverityFromEnv()));
  return min;
}

char Letter(LogSeverity severity) {
  switch (severity) {
    case LogSeverity::kDebug:
      return 'D';
    case LogSeverity::kInfo:
      return 'I';
    case LogSeverity::kWarning:
      return 'W';
    case LogSeverity::kError:
      return 'E';
  }
  return '?';
}

}  // namespace

void SetMinLogSeverity(LogSeverity severity) {
  MinSeverity().store(static_cast<int>(severity), std::memory_order_relaxed);
}

bool LogEnabled(LogSeverity severity) {
  return static_cast<int>(severity) >=
         MinSeverity().load(std::memory_order_relaxed);
}

void LogMessage(LogSeverity severity, absl::string_view message) {
  const std::string line =
      absl::StrCat(std::string(1, Letter(severity)), " ",
                   absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(),
                                    absl::UTCTimeZone()),
                   " ", message, "\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
}

namespace internal {

void CheckFailed(const char* file, int line, const char* condition,
                 absl::string_view message) {
  const std::string text =
      absl::StrCat("F ", file, ":", line, " check failed: ", condition,
                   message.empty() ? "" : ": ", message, "\n");
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::abort();
}

}  // namespace internal
}  // namespace ferry
