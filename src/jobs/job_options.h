// SPDX-License-Identifier: Apache-2.0
// JobOptions: how one offline job runs (format mapping, chunking, retries,
// windows, webhook, metadata). Stored with the job as JSON (JobRecord's
// options_json), so a resumed or restarted runner sees exactly what was
// submitted. Plain data; the functions are pure.
#ifndef FERRY_JOBS_JOB_OPTIONS_H_
#define FERRY_JOBS_JOB_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "jobs/formats/record_format.h"

namespace ferry {

// A daily window of local time in which a job may run, e.g. 02:00-06:00.
// start > end wraps past midnight (22:00-04:00); start == end is all day.
struct RunWindow {
  int start_minute = 0;  // minutes after local midnight
  int end_minute = 0;
  friend bool operator==(const RunWindow&, const RunWindow&) = default;
};

// "HH:MM-HH:MM". INVALID_ARGUMENT naming the text otherwise.
absl::StatusOr<RunWindow> ParseRunWindow(absl::string_view text);
std::string FormatRunWindow(const RunWindow& window);
// Whether `now` falls in the window, in time zone `tz`.
bool InRunWindow(const RunWindow& window, absl::Time now, absl::TimeZone tz);
// The next time the window opens at or after `now` (now itself when inside).
absl::Time NextRunWindowOpen(const RunWindow& window, absl::Time now,
                             absl::TimeZone tz);

// A worker holds a chunk's records in memory while it runs them: chunks are
// bounded in records here and in bytes by ScanInput.
inline constexpr int64_t kMaxChunkRecords = 1'000'000;

struct JobOptions {
  RecordFormat format = RecordFormat::kCsv;
  CsvOptions csv;
  int64_t chunk_records = 10000;
  // Attempts per record for transient failures (engine errors, UNAVAILABLE);
  // then the record goes to the dead-letter file.
  int max_attempts = 3;
  absl::Duration completion_window = absl::Hours(24);
  std::optional<RunWindow> run_window;
  std::string time_zone;  // IANA name for run_window; empty: local time
  std::string webhook_url;
  // An http(s) URL the input is downloaded from (to the job's input_path)
  // before validation; empty: the input is a local file.
  std::string input_url;
  std::vector<std::pair<std::string, std::string>> metadata;
  // The OpenAI Batch API's endpoint field ("/v2/models/<m>/infer"); empty for
  // jobs submitted natively or by `ferry run`.
  std::string endpoint;
  // Set on a job made from another job's dead letters.
  std::string replay_of;
  // The CSV header, recorded by the validation pass so a restarted runner
  // maps columns without reading the file again.
  std::vector<std::string> header;
};

std::string JobOptionsToJson(const JobOptions& options);
// INVALID_ARGUMENT naming the field.
absl::StatusOr<JobOptions> JobOptionsFromJson(absl::string_view json);
// Checks ranges (chunk_records >= 1, max_attempts 1..100, window > 0, time
// zone known). INVALID_ARGUMENT naming the option.
absl::Status ValidateJobOptions(const JobOptions& options);
// "24h", "90m", "3600s" (Go duration syntax, as absl parses it) — the Batch
// API's completion_window. INVALID_ARGUMENT otherwise.
absl::StatusOr<absl::Duration> ParseCompletionWindow(absl::string_view text);

}  // namespace ferry

#endif  // FERRY_JOBS_JOB_OPTIONS_H_
