// SPDX-License-Identifier: Apache-2.0
#include "api/http/job_requests.h"

#include <optional>
#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/status_macros.h"
#include "jobs/webhook/http_post.h"
#include "simdjson.h"

namespace ferry {
namespace {

using simdjson::dom::element;

constexpr size_t kMaxMetadataPairs = 16;
constexpr size_t kMaxMetadataKey = 64;
constexpr size_t kMaxMetadataValue = 512;

absl::Status FieldError(absl::string_view field, absl::string_view expected) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": expected ", expected));
}

absl::StatusOr<std::string> AsString(element v, absl::string_view field) {
  std::string_view s;
  if (v.get_string().get(s) != simdjson::SUCCESS) {
    return FieldError(field, "a string");
  }
  return std::string(s);
}

absl::StatusOr<int64_t> AsInt(element v, absl::string_view field) {
  int64_t i = 0;
  if (v.get_int64().get(i) != simdjson::SUCCESS) {
    return FieldError(field, "an integer");
  }
  return i;
}

absl::StatusOr<bool> AsBool(element v, absl::string_view field) {
  bool b = false;
  if (v.get_bool().get(b) != simdjson::SUCCESS) {
    return FieldError(field, "true or false");
  }
  return b;
}

absl::StatusOr<std::vector<std::string>> AsStrings(element v,
                                                   absl::string_view field) {
  simdjson::dom::array arr;
  if (v.get_array().get(arr) != simdjson::SUCCESS) {
    return FieldError(field, "an array of strings");
  }
  std::vector<std::string> out;
  for (element e : arr) {
    std::string_view s;
    if (e.get_string().get(s) != simdjson::SUCCESS) {
      return FieldError(field, "an array of strings");
    }
    out.emplace_back(s);
  }
  return out;
}

// OpenAI's metadata: at most 16 string pairs, keys up to 64 characters,
// values up to 512; null is none.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> AsMetadata(
    element v) {
  std::vector<std::pair<std::string, std::string>> out;
  if (v.is_null()) return out;
  simdjson::dom::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) {
    return FieldError("metadata", "an object of strings");
  }
  for (auto [raw_key, value] : obj) {
    const absl::string_view key(raw_key.data(), raw_key.size());
    const std::string field = absl::StrCat("metadata.", std::string(key));
    if (key.size() > kMaxMetadataKey) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": keys are at most ", kMaxMetadataKey, " characters"));
    }
    ASSIGN_OR_RETURN(std::string s, AsString(value, field));
    if (s.size() > kMaxMetadataValue) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": values are at most ", kMaxMetadataValue, " characters"));
    }
    out.emplace_back(std::string(key), std::move(s));
  }
  if (out.size() > kMaxMetadataPairs) {
    return absl::InvalidArgumentError(absl::StrCat(
        "metadata: at most ", kMaxMetadataPairs, " pairs, not ", out.size()));
  }
  return out;
}

absl::Status ParseObject(const std::string& body, simdjson::dom::parser& parser,
                         simdjson::dom::object* out) {
  if (body.empty()) {
    return absl::InvalidArgumentError(
        "the request needs a JSON object body (Content-Type: "
        "application/json)");
  }
  element doc;
  if (auto err = parser.parse(body).get(doc); err != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request body is not valid JSON: ", simdjson::error_message(err)));
  }
  if (doc.get_object().get(*out) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError("request body must be a JSON object");
  }
  return absl::OkStatus();
}

absl::Status UnknownField(absl::string_view key, absl::string_view known) {
  return absl::InvalidArgumentError(
      absl::StrCat("unknown field '", key, "' (known: ", known, ")"));
}

}  // namespace

absl::StatusOr<std::pair<std::string, int64_t>> ParseModelEndpoint(
    absl::string_view endpoint) {
  auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("endpoint '", endpoint,
                     "' must be /v2/models/<model>/infer or "
                     "/v2/models/<model>/versions/<version>/infer"));
  };
  if (endpoint.empty() || endpoint[0] != '/') return bad();
  std::vector<absl::string_view> s =
      absl::StrSplit(endpoint.substr(1), '/', absl::AllowEmpty());
  if (s.size() == 4 && s[0] == "v2" && s[1] == "models" && !s[2].empty() &&
      s[3] == "infer") {
    return std::make_pair(std::string(s[2]), int64_t{0});
  }
  int64_t v = 0;
  if (s.size() == 6 && s[0] == "v2" && s[1] == "models" && !s[2].empty() &&
      s[3] == "versions" && absl::SimpleAtoi(s[4], &v) && v > 0 &&
      s[5] == "infer") {
    return std::make_pair(std::string(s[2]), v);
  }
  return bad();
}

absl::StatusOr<BatchRequest> ParseBatchRequest(const std::string& body) {
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  RETURN_IF_ERROR(ParseObject(body, parser, &obj));
  BatchRequest r;
  std::optional<std::string> input_file_id;
  std::optional<std::string> endpoint;
  std::string window = "24h";
  for (auto [raw_key, value] : obj) {
    const absl::string_view key(raw_key.data(), raw_key.size());
    if (key == "input_file_id") {
      ASSIGN_OR_RETURN(input_file_id, AsString(value, key));
    } else if (key == "endpoint") {
      ASSIGN_OR_RETURN(endpoint, AsString(value, key));
    } else if (key == "completion_window") {
      ASSIGN_OR_RETURN(window, AsString(value, key));
    } else if (key == "metadata") {
      ASSIGN_OR_RETURN(r.metadata, AsMetadata(value));
    } else {
      return UnknownField(
          key, "input_file_id, endpoint, completion_window, metadata");
    }
  }
  if (!input_file_id) {
    return absl::InvalidArgumentError("input_file_id is required");
  }
  if (!endpoint) {
    return absl::InvalidArgumentError(
        "endpoint is required, e.g. /v2/models/<model>/infer");
  }
  r.input_file_id = *std::move(input_file_id);
  r.endpoint = *std::move(endpoint);
  ASSIGN_OR_RETURN(std::tie(r.model, r.model_version),
                   ParseModelEndpoint(r.endpoint));
  ASSIGN_OR_RETURN(r.completion_window, ParseCompletionWindow(window));
  return r;
}

namespace {

// One field of a native job; `window` and `run_window` are parsed after the
// loop.
absl::Status NativeField(absl::string_view key, element value,
                         NativeJobRequest& r, std::string& window,
                         std::string& run_window) {
  JobOptions& o = r.options;
  if (key == "model") {
    ASSIGN_OR_RETURN(r.model, AsString(value, key));
  } else if (key == "version") {
    ASSIGN_OR_RETURN(r.model_version, AsInt(value, key));
    if (r.model_version < 1) {
      return FieldError(key, "a positive integer (a model version)");
    }
  } else if (key == "input") {
    ASSIGN_OR_RETURN(r.input, AsString(value, key));
  } else if (key == "input_file_id") {
    ASSIGN_OR_RETURN(r.input_file_id, AsString(value, key));
  } else if (key == "output") {
    ASSIGN_OR_RETURN(r.output, AsString(value, key));
  } else if (key == "format") {
    ASSIGN_OR_RETURN(r.format, AsString(value, key));
  } else if (key == "id_column") {
    ASSIGN_OR_RETURN(o.csv.id_column, AsString(value, key));
  } else if (key == "columns") {
    ASSIGN_OR_RETURN(o.csv.columns, AsStrings(value, key));
  } else if (key == "keep_columns") {
    ASSIGN_OR_RETURN(o.csv.keep_columns, AsBool(value, key));
  } else if (key == "chunk_size") {
    ASSIGN_OR_RETURN(o.chunk_records, AsInt(value, key));
  } else if (key == "max_attempts") {
    ASSIGN_OR_RETURN(int64_t a, AsInt(value, key));
    if (a < 1 || a > 100) return FieldError(key, "an integer in 1..100");
    o.max_attempts = static_cast<int>(a);
  } else if (key == "completion_window") {
    ASSIGN_OR_RETURN(window, AsString(value, key));
  } else if (key == "run_window") {
    ASSIGN_OR_RETURN(run_window, AsString(value, key));
  } else if (key == "time_zone") {
    ASSIGN_OR_RETURN(o.time_zone, AsString(value, key));
  } else if (key == "webhook_url") {
    ASSIGN_OR_RETURN(o.webhook_url, AsString(value, key));
  } else if (key == "metadata") {
    ASSIGN_OR_RETURN(o.metadata, AsMetadata(value));
  } else {
    return UnknownField(key,
                        "model, version, input, input_file_id, output, "
                        "format, id_column, columns, keep_columns, "
                        "chunk_size, max_attempts, completion_window, "
                        "run_window, time_zone, webhook_url, metadata");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<NativeJobRequest> ParseNativeJobRequest(
    const std::string& body) {
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  RETURN_IF_ERROR(ParseObject(body, parser, &obj));
  NativeJobRequest r;
  std::string window;
  std::string run_window;
  for (auto [raw_key, value] : obj) {
    RETURN_IF_ERROR(
        NativeField(absl::string_view(raw_key.data(), raw_key.size()), value, r,
                    window, run_window));
  }
  if (r.model.empty()) return absl::InvalidArgumentError("model is required");
  if (r.input.empty() == r.input_file_id.empty()) {
    return absl::InvalidArgumentError(
        "give either input (a local path or file:// URL under a data root) "
        "or input_file_id (an uploaded file)");
  }
  if (!window.empty()) {
    ASSIGN_OR_RETURN(r.options.completion_window,
                     ParseCompletionWindow(window));
  }
  if (!run_window.empty()) {
    ASSIGN_OR_RETURN(r.options.run_window, ParseRunWindow(run_window));
  }
  if (!r.options.webhook_url.empty()) {
    if (absl::Status s = ParseWebhookUrl(r.options.webhook_url).status();
        !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("webhook_url: ", s.message()));
    }
  }
  return r;
}

absl::StatusOr<std::string> ParseReplayRequest(const std::string& body) {
  std::string output;
  if (body.empty()) return output;
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  RETURN_IF_ERROR(ParseObject(body, parser, &obj));
  for (auto [raw_key, value] : obj) {
    const absl::string_view key(raw_key.data(), raw_key.size());
    if (key != "output") return UnknownField(key, "output");
    ASSIGN_OR_RETURN(output, AsString(value, key));
  }
  return output;
}

}  // namespace ferry
