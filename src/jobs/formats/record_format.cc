// SPDX-License-Identifier: Apache-2.0
#include "jobs/formats/record_format.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "jobs/formats/codecs.h"
#include "simdjson.h"

namespace ferry {

absl::string_view RecordFormatName(RecordFormat format) {
  switch (format) {
    case RecordFormat::kCsv:
      return "csv";
    case RecordFormat::kJsonl:
      return "jsonl";
  }
  return "unknown";
}

absl::StatusOr<RecordFormat> ResolveRecordFormat(absl::string_view name,
                                                 absl::string_view path) {
  if (!name.empty()) {
    const std::string lower = absl::AsciiStrToLower(name);
    if (lower == "csv") return RecordFormat::kCsv;
    if (lower == "jsonl" || lower == "ndjson") return RecordFormat::kJsonl;
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown input format '", name, "' (expected csv or jsonl)"));
  }
  const size_t slash = path.find_last_of('/');
  const absl::string_view base =
      slash == absl::string_view::npos ? path : path.substr(slash + 1);
  const size_t dot = base.find_last_of('.');
  if (dot != absl::string_view::npos) {
    const std::string ext = absl::AsciiStrToLower(base.substr(dot + 1));
    if (ext == "csv") return RecordFormat::kCsv;
    if (ext == "jsonl" || ext == "ndjson") return RecordFormat::kJsonl;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("cannot tell the input format of '", path,
                   "' from its extension (.csv, .jsonl, .ndjson); name the "
                   "format (csv or jsonl)"));
}

absl::StatusOr<std::unique_ptr<RecordCodec>> RecordCodec::Create(
    RecordFormat format, const ModelOptions& model, const InputScan& scan,
    const CsvOptions& csv) {
  if (scan.format != format) {
    return absl::InvalidArgumentError(
        absl::StrCat("the input was scanned as ", RecordFormatName(scan.format),
                     ", not ", RecordFormatName(format)));
  }
  switch (format) {
    case RecordFormat::kCsv:
      return internal::CreateCsvCodec(model, scan, csv);
    case RecordFormat::kJsonl:
      return internal::CreateJsonlCodec(model, csv);
  }
  return absl::InvalidArgumentError("unknown record format");
}

absl::StatusOr<std::string> DeadLetterRecord(absl::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) {
    line.remove_suffix(1);
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto err = parser.parse(line.data(), line.size()).get(doc);
      err != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dead-letter line is not valid JSON: ", simdjson::error_message(err)));
  }
  std::string_view record;
  if (doc["record"].get_string().get(record) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(
        "dead-letter line: 'record' is missing or not a string");
  }
  return std::string(record);
}

namespace internal {

std::string StatusCodeName(absl::StatusCode code) {
  return absl::AsciiStrToLower(absl::StatusCodeToString(code));
}

absl::Status AtLine(int64_t line, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat("line ", line, ": ", status.message()));
}

}  // namespace internal
}  // namespace ferry
