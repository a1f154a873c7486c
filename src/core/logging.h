// SPDX-License-Identifier: Apache-2.0
// Minimal logging to stderr, and FERRY_CHECK for programmer errors (never user
// input). Thread-safe: each message is written with one call.
#ifndef FERRY_CORE_LOGGING_H_
#define FERRY_CORE_LOGGING_H_

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ferry {

enum class LogSeverity { kDebug, kInfo, kWarning, kError };

// Messages below the threshold are dropped. Default kInfo; FERRY_LOG_LEVEL
// (debug|info|warning|error) in the environment overrides it at first use.
void SetMinLogSeverity(LogSeverity severity);
bool LogEnabled(LogSeverity severity);
void LogMessage(LogSeverity severity, absl::string_view message);

namespace internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* condition,
                              absl::string_view message);
}  // namespace internal

}  // namespace ferry

#define FERRY_LOG(severity, ...)                               \
  do {                                                         \
    if (::ferry::LogEnabled(::ferry::LogSeverity::severity)) { \
      ::ferry::LogMessage(::ferry::LogSeverity::severity,      \
                          ::absl::StrCat(__VA_ARGS__));        \
    }                                                          \
  } while (false)

// Aborts with a message when `cond` is false. For broken invariants only.
#define FERRY_CHECK(cond, ...)                            \
  do {                                                    \
    if (!(cond)) {                                        \
      ::ferry::internal::CheckFailed(                     \
          __FILE__, __LINE__, #cond,                      \
          ::absl::StrCat("" __VA_OPT__(, ) __VA_ARGS__)); \
    }                                                     \
  } while (false)

#endif  // FERRY_CORE_LOGGING_H_
