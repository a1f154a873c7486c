// SPDX-License-Identifier: Apache-2.0
// The JSONL codec: OpenAI Batch API lines carrying KServe v2 request bodies.
// One line is one request; the payload is the body's JSON text, which
// BuildRequest hands to the KServe codec.
#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "api/json_writer.h"
#include "api/kserve_json.h"
#include "core/status_macros.h"
#include "jobs/formats/codecs.h"
#include "simdjson.h"

namespace ferry::internal {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

// Checks "/v2/models/<name>[/versions/<v>]/infer" and returns <name>.
absl::StatusOr<std::string> ModelOfUrl(absl::string_view url) {
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("'url' must be /v2/models/<model>[/versions/<v>]/infer, "
                     "got '",
                     url, "'"));
  };
  absl::string_view rest = url;
  if (!absl::ConsumePrefix(&rest, "/v2/models/") ||
      !absl::ConsumeSuffix(&rest, "/infer")) {
    return bad();
  }
  const size_t slash = rest.find('/');
  const absl::string_view name = rest.substr(0, slash);
  if (name.empty()) return bad();
  if (slash != absl::string_view::npos) {
    absl::string_view version = rest.substr(slash);
    if (!absl::ConsumePrefix(&version, "/versions/") || version.empty() ||
        !std::all_of(version.begin(), version.end(), absl::ascii_isdigit)) {
      return bad();
    }
  }
  return std::string(name);
}

// The custom_id of a line, if it is JSON with a string custom_id: error lines
// for records that failed to parse still name it when they can.
std::optional<std::string> RecoverCustomId(absl::string_view text) {
  simdjson::dom::parser parser;
  element doc;
  if (parser.parse(text.data(), text.size()).get(doc) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  std::string_view id;
  if (doc["custom_id"].get_string().get(id) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  return std::string(id);
}

// The OpenAI "id" of a record's output line: a function of the record number
// alone, so a chunk that is run again writes the same bytes.
std::string BatchRequestId(const RawRecord& raw) {
  return absl::StrCat("batch_req_", raw.number);
}

class JsonlCodec : public RecordCodec {
 public:
  explicit JsonlCodec(std::string model) : model_(std::move(model)) {}

  int max_records_per_request() const override { return 1; }
  absl::StatusOr<ParsedRecord> Parse(RawRecord raw) const override;
  absl::StatusOr<InferenceRequest> BuildRequest(
      absl::Span<const ParsedRecord* const> records) const override;
  absl::Status AppendResults(absl::Span<const ParsedRecord* const> records,
                             const InferenceResponse& response,
                             std::string* out) const override;
  std::string OutputPreamble() const override { return ""; }
  std::string InputPreamble() const override { return ""; }
  void AppendError(const RawRecord& raw, absl::string_view id,
                   absl::string_view code, const absl::Status& error,
                   int attempts, std::string* out) const override;
  void AppendDeadLetter(const RawRecord& raw, absl::string_view id,
                        const absl::Status& error, int attempts,
                        int64_t model_version, std::string* out) const override;

 private:
  // "custom_id": the given id, or the one recovered from the text, or null.
  void WriteCustomId(JsonWriter& w, const RawRecord& raw,
                     absl::string_view id) const;

  std::string model_;
};

absl::StatusOr<ParsedRecord> JsonlCodec::Parse(RawRecord raw) const {
  const auto invalid = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("line ", raw.line, ": ", what));
  };
  simdjson::dom::parser parser;
  element doc;
  if (auto err = parser.parse(raw.text.data(), raw.text.size()).get(doc);
      err != simdjson::SUCCESS) {
    return invalid(
        absl::StrCat("not valid JSON: ", simdjson::error_message(err)));
  }
  object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS) {
    return invalid("a request line must be a JSON object");
  }
  ParsedRecord parsed;
  std::string_view custom_id;
  if (root["custom_id"].get_string().get(custom_id) != simdjson::SUCCESS) {
    return invalid("'custom_id' is missing or not a string");
  }
  if (custom_id.empty()) return invalid("'custom_id' is empty");
  parsed.id.assign(custom_id.data(), custom_id.size());
  element el;
  if (root["method"].get(el) == simdjson::SUCCESS) {
    std::string_view method;
    if (el.get_string().get(method) != simdjson::SUCCESS || method != "POST") {
      return invalid(absl::StrCat("'method' must be \"POST\", got ",
                                  simdjson::minify(el)));
    }
  }
  if (root["url"].get(el) == simdjson::SUCCESS) {
    std::string_view url;
    if (el.get_string().get(url) != simdjson::SUCCESS) {
      return invalid("'url' must be a string");
    }
    absl::StatusOr<std::string> model =
        ModelOfUrl(absl::string_view(url.data(), url.size()));
    if (!model.ok()) return AtLine(raw.line, model.status());
    if (*model != model_) {
      return invalid(absl::StrCat("url names model '", *model,
                                  "', the job runs '", model_, "'"));
    }
  }
  object body;
  if (root["body"].get(el) != simdjson::SUCCESS ||
      el.get_object().get(body) != simdjson::SUCCESS) {
    return invalid("'body' is missing or not an object");
  }
  parsed.payload = simdjson::minify(el);
  parsed.raw = std::move(raw);
  return parsed;
}

absl::StatusOr<InferenceRequest> JsonlCodec::BuildRequest(
    absl::Span<const ParsedRecord* const> records) const {
  if (records.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a JSONL request carries exactly 1 record, got ", records.size()));
  }
  const ParsedRecord& record = *records[0];
  absl::StatusOr<InferenceRequest> request =
      ParseInferenceRequest(record.payload);
  if (!request.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "line ", record.raw.line, ": body: ", request.status().message()));
  }
  return request;
}

absl::Status JsonlCodec::AppendResults(
    absl::Span<const ParsedRecord* const> records,
    const InferenceResponse& response, std::string* out) const {
  if (records.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a JSONL response answers exactly 1 record, got ", records.size()));
  }
  const ParsedRecord& record = *records[0];
  const std::string id = BatchRequestId(record.raw);
  // JsonWriter cannot splice the body's JSON in, so the line is built by hand.
  out->append("{\"id\":");
  AppendJsonString(out, id);
  out->append(",\"custom_id\":");
  AppendJsonString(out, record.id);
  out->append(",\"response\":{\"status_code\":200,\"request_id\":");
  AppendJsonString(out, response.id.empty() ? id : response.id);
  out->append(",\"body\":");
  out->append(InferenceResponseToJson(response));
  out->append("},\"error\":null}\n");
  return absl::OkStatus();
}

void JsonlCodec::WriteCustomId(JsonWriter& w, const RawRecord& raw,
                               absl::string_view id) const {
  w.Key("custom_id");
  if (!id.empty()) {
    w.String(id);
    return;
  }
  std::optional<std::string> recovered = RecoverCustomId(raw.text);
  if (recovered.has_value()) {
    w.String(*recovered);
  } else {
    w.Null();
  }
}

void JsonlCodec::AppendError(const RawRecord& raw, absl::string_view id,
                             absl::string_view code, const absl::Status& error,
                             int attempts, std::string* out) const {
  // OpenAI's error file: the request's ids, an HTTP-like response, an error.
  const int status_code = absl::StartsWith(code, "invalid_") ? 400 : 500;
  JsonWriter w(out);
  w.BeginObject();
  w.Key("line").Int(raw.line);
  w.Key("id").String(BatchRequestId(raw));
  WriteCustomId(w, raw, id);
  w.Key("response").BeginObject();
  w.Key("status_code").Int(status_code);
  w.Key("body").BeginObject().Key("error").String(error.message()).EndObject();
  w.EndObject();
  w.Key("error").BeginObject();
  w.Key("code").String(code);
  w.Key("message").String(error.message());
  w.EndObject();
  w.Key("attempts").Int(attempts);
  w.EndObject();
  out->push_back('\n');
}

void JsonlCodec::AppendDeadLetter(const RawRecord& raw, absl::string_view id,
                                  const absl::Status& error, int attempts,
                                  int64_t model_version,
                                  std::string* out) const {
  JsonWriter w(out);
  w.BeginObject();
  w.Key("line").Int(raw.line);
  WriteCustomId(w, raw, id);
  w.Key("record").String(raw.text);
  w.Key("error").BeginObject();
  w.Key("code").String(StatusCodeName(error.code()));
  w.Key("message").String(error.message());
  w.EndObject();
  w.Key("attempts").Int(attempts);
  w.Key("model_version").Int(model_version);
  w.EndObject();
  out->push_back('\n');
}

}  // namespace

absl::StatusOr<std::unique_ptr<RecordCodec>> CreateJsonlCodec(
    const ModelOptions& model, const CsvOptions& csv) {
  // A CSV option on a JSONL job is a mistake the user should hear about.
  if (!csv.id_column.empty()) {
    return absl::InvalidArgumentError(
        "id_column applies to CSV input; a jsonl line's custom_id is its id");
  }
  if (!csv.columns.empty()) {
    return absl::InvalidArgumentError(
        "columns applies to CSV input; a jsonl line's body names its inputs");
  }
  if (csv.keep_columns) {
    return absl::InvalidArgumentError("keep_columns applies to CSV input");
  }
  if (model.name.empty()) {
    return absl::InvalidArgumentError("the job's model has no name");
  }
  return std::unique_ptr<RecordCodec>(new JsonlCodec(model.name));
}

}  // namespace ferry::internal
