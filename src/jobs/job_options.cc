// SPDX-License-Identifier: Apache-2.0
#include "jobs/job_options.h"

#include <charconv>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/json_writer.h"
#include "core/status_macros.h"
#include "simdjson.h"

namespace ferry {
namespace {

absl::StatusOr<int> ParseClock(absl::string_view text, absl::string_view all) {
  int h = 0;
  int m = 0;
  if (text.size() != 5 || text[2] != ':' ||
      std::from_chars(text.data(), text.data() + 2, h).ptr != text.data() + 2 ||
      std::from_chars(text.data() + 3, text.data() + 5, m).ptr !=
          text.data() + 5 ||
      h < 0 || h > 24 || m < 0 || m > 59 || (h == 24 && m != 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "run_window '", all, "': '", text, "' is not a time of day HH:MM"));
  }
  return h * 60 + m;
}

int MinuteOfDay(absl::Time t, absl::TimeZone tz) {
  const absl::TimeZone::CivilInfo c = tz.At(t);
  return c.cs.hour() * 60 + c.cs.minute();
}

using simdjson::dom::element;
using simdjson::dom::object;

absl::Status FieldError(absl::string_view field, absl::string_view want) {
  return absl::InvalidArgumentError(
      absl::StrCat("job options: '", field, "' must be ", want));
}

}  // namespace

absl::StatusOr<RunWindow> ParseRunWindow(absl::string_view text) {
  const size_t dash = text.find('-');
  if (dash == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "run_window '", text, "' must be HH:MM-HH:MM, e.g. 02:00-06:00"));
  }
  RunWindow w;
  ASSIGN_OR_RETURN(w.start_minute, ParseClock(text.substr(0, dash), text));
  ASSIGN_OR_RETURN(w.end_minute, ParseClock(text.substr(dash + 1), text));
  w.start_minute %= 24 * 60;
  w.end_minute %= 24 * 60;
  return w;
}

std::string FormatRunWindow(const RunWindow& w) {
  return absl::StrFormat("%02d:%02d-%02d:%02d", w.start_minute / 60,
                         w.start_minute % 60, w.end_minute / 60,
                         w.end_minute % 60);
}

bool InRunWindow(const RunWindow& w, absl::Time now, absl::TimeZone tz) {
  if (w.start_minute == w.end_minute) return true;
  const int m = MinuteOfDay(now, tz);
  if (w.start_minute < w.end_minute) {
    return m >= w.start_minute && m < w.end_minute;
  }
  return m >= w.start_minute || m < w.end_minute;  // wraps past midnight
}

absl::Time NextRunWindowOpen(const RunWindow& w, absl::Time now,
                             absl::TimeZone tz) {
  if (InRunWindow(w, now, tz)) return now;
  const absl::CivilDay today = absl::ToCivilDay(now, tz);
  for (int days = 0; days <= 2; ++days) {
    const absl::CivilMinute open =
        absl::CivilMinute(today + days) + w.start_minute;
    const absl::Time t = tz.At(open).pre;
    if (t > now) return t;
  }
  return now + absl::Hours(24);  // unreachable for a sane zone
}

absl::StatusOr<absl::Duration> ParseCompletionWindow(absl::string_view text) {
  absl::Duration d;
  if (!absl::ParseDuration(text, &d) || d <= absl::ZeroDuration() ||
      d == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "completion_window '", text, "' must be a positive duration like 24h"));
  }
  return d;
}

absl::Status ValidateJobOptions(const JobOptions& o) {
  if (o.chunk_records < 1 || o.chunk_records > kMaxChunkRecords) {
    return absl::InvalidArgumentError(
        absl::StrCat("chunk_size ", o.chunk_records, " must be 1..",
                     kMaxChunkRecords, " records"));
  }
  if (o.max_attempts < 1 || o.max_attempts > 100) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_attempts ", o.max_attempts, " must be 1..100"));
  }
  if (o.completion_window <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("completion_window must be positive");
  }
  if (!o.time_zone.empty()) {
    absl::TimeZone tz;
    if (!absl::LoadTimeZone(o.time_zone, &tz)) {
      return absl::InvalidArgumentError(
          absl::StrCat("time_zone '", o.time_zone, "' is not a known zone"));
    }
  }
  return absl::OkStatus();
}

std::string JobOptionsToJson(const JobOptions& o) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("format").String(RecordFormatName(o.format));
  w.Key("id_column").String(o.csv.id_column);
  w.Key("columns").BeginArray();
  for (const std::string& c : o.csv.columns) w.String(c);
  w.EndArray();
  w.Key("keep_columns").Bool(o.csv.keep_columns);
  w.Key("chunk_size").Int(o.chunk_records);
  w.Key("max_attempts").Int(o.max_attempts);
  w.Key("completion_window_s").Int(absl::ToInt64Seconds(o.completion_window));
  if (o.run_window) w.Key("run_window").String(FormatRunWindow(*o.run_window));
  w.Key("time_zone").String(o.time_zone);
  w.Key("webhook_url").String(o.webhook_url);
  if (!o.input_url.empty()) w.Key("input_url").String(o.input_url);
  w.Key("metadata").BeginObject();
  for (const auto& [k, v] : o.metadata) w.Key(k).String(v);
  w.EndObject();
  w.Key("endpoint").String(o.endpoint);
  w.Key("replay_of").String(o.replay_of);
  w.Key("header").BeginArray();
  for (const std::string& c : o.header) w.String(c);
  w.EndArray();
  w.EndObject();
  return out;
}

absl::StatusOr<JobOptions> JobOptionsFromJson(absl::string_view json) {
  simdjson::dom::parser parser;
  element root;
  if (parser.parse(json.data(), json.size()).get(root) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError("job options are not valid JSON");
  }
  object obj;
  if (root.get_object().get(obj) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError("job options must be a JSON object");
  }
  JobOptions o;
  for (auto field : obj) {
    const absl::string_view key(field.key.data(), field.key.size());
    const element v = field.value;
    // Typed readers: each names the field when the value has the wrong type.
    auto text = [&]() -> absl::StatusOr<std::string> {
      std::string_view s;
      if (v.get_string().get(s) != simdjson::SUCCESS) {
        return FieldError(key, "a string");
      }
      return std::string(s);
    };
    auto texts = [&](std::vector<std::string>* out) -> absl::Status {
      simdjson::dom::array arr;
      if (v.get_array().get(arr) != simdjson::SUCCESS) {
        return FieldError(key, "an array of strings");
      }
      for (element c : arr) {
        std::string_view s;
        if (c.get_string().get(s) != simdjson::SUCCESS) {
          return FieldError(key, "an array of strings");
        }
        out->emplace_back(s);
      }
      return absl::OkStatus();
    };
    auto integer = [&]() -> absl::StatusOr<int64_t> {
      int64_t i = 0;
      if (v.get_int64().get(i) != simdjson::SUCCESS) {
        return FieldError(key, "an integer");
      }
      return i;
    };
    if (key == "format") {
      ASSIGN_OR_RETURN(std::string s, text());
      ASSIGN_OR_RETURN(o.format, ResolveRecordFormat(s, ""));
    } else if (key == "id_column") {
      ASSIGN_OR_RETURN(o.csv.id_column, text());
    } else if (key == "columns") {
      RETURN_IF_ERROR(texts(&o.csv.columns));
    } else if (key == "header") {
      RETURN_IF_ERROR(texts(&o.header));
    } else if (key == "keep_columns") {
      bool b = false;
      if (v.get_bool().get(b) != simdjson::SUCCESS) {
        return FieldError(key, "true or false");
      }
      o.csv.keep_columns = b;
    } else if (key == "chunk_size") {
      ASSIGN_OR_RETURN(o.chunk_records, integer());
    } else if (key == "max_attempts") {
      ASSIGN_OR_RETURN(int64_t i, integer());
      if (i > 1000 || i < -1000) return FieldError(key, "1..100");
      o.max_attempts = static_cast<int>(i);
    } else if (key == "completion_window_s") {
      ASSIGN_OR_RETURN(int64_t i, integer());
      o.completion_window = absl::Seconds(i);
    } else if (key == "run_window") {
      ASSIGN_OR_RETURN(std::string s, text());
      ASSIGN_OR_RETURN(o.run_window, ParseRunWindow(s));
    } else if (key == "time_zone") {
      ASSIGN_OR_RETURN(o.time_zone, text());
    } else if (key == "webhook_url") {
      ASSIGN_OR_RETURN(o.webhook_url, text());
    } else if (key == "input_url") {
      ASSIGN_OR_RETURN(o.input_url, text());
    } else if (key == "metadata") {
      object md;
      if (v.get_object().get(md) != simdjson::SUCCESS) {
        return FieldError(key, "an object of strings");
      }
      for (auto kv : md) {
        std::string_view s;
        if (kv.value.get_string().get(s) != simdjson::SUCCESS) {
          return FieldError(absl::StrCat("metadata.", std::string(kv.key)),
                            "a string");
        }
        o.metadata.emplace_back(std::string(kv.key), std::string(s));
      }
    } else if (key == "endpoint") {
      ASSIGN_OR_RETURN(o.endpoint, text());
    } else if (key == "replay_of") {
      ASSIGN_OR_RETURN(o.replay_of, text());
    }
    // Unknown keys: written by a newer Ferry; ignored.
  }
  RETURN_IF_ERROR(ValidateJobOptions(o));
  return o;
}

}  // namespace ferry
