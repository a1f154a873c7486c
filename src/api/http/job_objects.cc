// SPDX-License-Identifier: Apache-2.0
#include "api/http/job_objects.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "jobs/webhook/http_post.h"

namespace ferry {
namespace {

void Time(JsonWriter& w, absl::string_view key, absl::Time t) {
  w.Key(key);
  if (t == absl::InfinitePast() || t == absl::InfiniteFuture()) {
    w.Null();
  } else {
    w.Int(absl::ToUnixSeconds(t));
  }
}

void StringOrNull(JsonWriter& w, absl::string_view key,
                  absl::string_view value) {
  w.Key(key);
  if (value.empty()) {
    w.Null();
  } else {
    w.String(value);
  }
}

// Batch `errors`: null, or the reason the job failed as one entry, with the
// input line when the message names one ("line 17: ...").
void Errors(const JobView& v, absl::string_view param, JsonWriter& w) {
  w.Key("errors");
  if (v.job.state != JobState::kFailed || v.job.error.empty()) {
    w.Null();
    return;
  }
  const bool validation = v.job.in_progress_at == absl::InfinitePast();
  absl::string_view message = v.job.error;
  int64_t line = 0;
  bool has_line = false;
  if (absl::string_view rest = message; absl::ConsumePrefix(&rest, "line ")) {
    const size_t colon = rest.find(':');
    has_line = colon != absl::string_view::npos &&
               absl::SimpleAtoi(rest.substr(0, colon), &line);
  }
  w.BeginObject().Key("object").String("list");
  w.Key("data").BeginArray().BeginObject();
  w.Key("code").String(validation ? "invalid_input" : "job_failed");
  w.Key("message").String(message);
  StringOrNull(w, "param", validation ? param : "");
  w.Key("line");
  if (has_line) {
    w.Int(line);
  } else {
    w.Null();
  }
  w.EndObject().EndArray().EndObject();
}

// The fields a Batch and a native job share, in the Batch object's order.
void BatchFields(const JobView& v, absl::string_view object,
                 absl::string_view param, JsonWriter& w) {
  const JobRecord& j = v.job;
  w.Key("id").String(j.id);
  w.Key("object").String(object);
  StringOrNull(w, "endpoint", v.options.endpoint);
  Errors(v, param, w);
  StringOrNull(w, "input_file_id", v.input_file_id);
  w.Key("completion_window")
      .String(FormatCompletionWindow(v.options.completion_window));
  w.Key("status").String(JobStateName(j.state));
  StringOrNull(w, "output_file_id", v.results.output_file_id);
  StringOrNull(w, "error_file_id", v.results.error_file_id);
  Time(w, "created_at", j.created_at);
  Time(w, "in_progress_at", j.in_progress_at);
  Time(w, "expires_at", j.expires_at);
  Time(w, "finalizing_at", j.finalizing_at);
  Time(w, "completed_at", j.completed_at);
  Time(w, "failed_at", j.failed_at);
  Time(w, "expired_at", j.expired_at);
  Time(w, "cancelling_at", j.cancelling_at);
  Time(w, "cancelled_at", j.cancelled_at);
  w.Key("request_counts").BeginObject();
  w.Key("total").Int(j.counts.total);
  w.Key("completed").Int(j.counts.completed);
  w.Key("failed").Int(j.counts.failed);
  w.EndObject();
  w.Key("metadata");
  if (v.options.metadata.empty()) {
    w.Null();
  } else {
    w.BeginObject();
    for (const auto& [k, value] : v.options.metadata) w.Key(k).String(value);
    w.EndObject();
  }
}

}  // namespace

std::string FormatCompletionWindow(absl::Duration window) {
  const int64_t s = absl::ToInt64Seconds(window);
  if (s > 0 && s % 3600 == 0) return absl::StrCat(s / 3600, "h");
  if (s > 0 && s % 60 == 0) return absl::StrCat(s / 60, "m");
  return absl::StrCat(s, "s");
}

void WriteBatchObject(const JobView& v, JsonWriter& w) {
  w.BeginObject();
  BatchFields(v, "batch", "input_file_id", w);
  w.EndObject();
}

void WriteJobObject(const JobView& v, JsonWriter& w) {
  const JobRecord& j = v.job;
  w.BeginObject();
  BatchFields(v, "job", "input", w);
  w.Key("model").String(j.model);
  w.Key("model_version");
  if (j.model_version > 0) {
    w.Int(j.model_version);
  } else {
    w.Null();
  }
  w.Key("format").String(j.input_format);
  w.Key("input").String(j.input_path);
  w.Key("output").String(j.output_path);
  w.Key("error_file").String(j.error_path);
  w.Key("dead_letter_file").String(j.dead_letter_path);
  const int64_t done = std::min(v.records_done, j.counts.total);
  double percent = 0;
  if (j.counts.total > 0) {
    percent =
        100.0 * static_cast<double>(done) / static_cast<double>(j.counts.total);
  } else if (j.state == JobState::kCompleted) {
    percent = 100;
  }
  w.Key("progress").BeginObject();
  w.Key("records_done").Int(done);
  w.Key("percent").Double(
      static_cast<double>(static_cast<int64_t>(percent * 10 + 0.5)) / 10);
  w.Key("records_per_second");
  if (v.records_per_second) {
    w.Double(*v.records_per_second);
  } else {
    w.Null();
  }
  w.Key("eta_seconds");
  if (v.eta_seconds) {
    w.Double(*v.eta_seconds);
  } else {
    w.Null();
  }
  w.EndObject();
  w.Key("compute_seconds").Double(j.compute_seconds);
  w.Key("cost").Double(j.compute_seconds * v.price_per_instance_hour / 3600.0);
  StringOrNull(w, "run_window",
               v.options.run_window ? FormatRunWindow(*v.options.run_window)
                                    : std::string());
  StringOrNull(w, "time_zone", v.options.time_zone);
  // The URL's query often holds a token: show it as the sender logs it.
  absl::StatusOr<WebhookUrl> url = ParseWebhookUrl(v.options.webhook_url);
  StringOrNull(w, "webhook_url", url.ok() ? url->display : "");
  absl::StatusOr<WebhookUrl> input_url = ParseWebhookUrl(v.options.input_url);
  StringOrNull(w, "input_url", input_url.ok() ? input_url->display : "");
  StringOrNull(w, "replay_of", v.options.replay_of);
  w.EndObject();
}

void WriteFileObject(const StoredFile& f, JsonWriter& w) {
  w.BeginObject();
  w.Key("id").String(f.id);
  w.Key("object").String("file");
  w.Key("bytes").Int(f.bytes);
  w.Key("created_at").Int(absl::ToUnixSeconds(f.created_at));
  w.Key("filename").String(f.filename);
  w.Key("purpose").String(f.purpose);
  w.Key("status").String("processed");
  w.EndObject();
}

}  // namespace ferry
