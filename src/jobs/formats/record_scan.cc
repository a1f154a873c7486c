// SPDX-License-Identifier: Apache-2.0
// ScanInput and RecordReader: both walk the file with one RecordSplitter.
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "jobs/formats/csv_fields.h"
#include "jobs/formats/record_format.h"
#include "jobs/formats/record_splitter.h"

namespace ferry {
namespace {

using internal::RecordSplitter;
using internal::SplitRecord;

absl::StatusOr<std::vector<std::string>> ParseHeader(const SplitRecord& row) {
  std::string storage;
  internal::CsvFields fields;
  absl::Status split = internal::SplitCsvFields(row.text, &storage, &fields);
  if (!split.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("line ", row.line, ": CSV header: ", split.message()));
  }
  std::vector<std::string> names;
  names.reserve(fields.size());
  absl::flat_hash_map<absl::string_view, size_t> seen;
  for (size_t i = 0; i < fields.size(); ++i) {
    names.emplace_back(internal::TrimSpaces(fields[i]));
    if (names.back().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", row.line, ": CSV header: column ", i + 1,
                       " has an empty name"));
    }
  }
  for (size_t i = 0; i < names.size(); ++i) {
    auto [it, inserted] = seen.emplace(names[i], i);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat(
          "line ", row.line, ": CSV header: column '", names[i],
          "' appears twice (columns ", it->second + 1, " and ", i + 1, ")"));
    }
  }
  return names;
}

class SplitterReader : public RecordReader {
 public:
  SplitterReader(std::unique_ptr<RecordSplitter> splitter, int64_t first_record)
      : splitter_(std::move(splitter)), next_number_(first_record) {}

  absl::StatusOr<std::optional<RawRecord>> Next() override {
    SplitRecord split;
    ASSIGN_OR_RETURN(bool more, splitter_->Next(&split));
    if (!more) return std::nullopt;
    RawRecord raw;
    raw.number = next_number_++;
    raw.line = split.line;
    raw.text.assign(split.text.data(), split.text.size());
    return raw;
  }

 private:
  std::unique_ptr<RecordSplitter> splitter_;
  int64_t next_number_;
};

}  // namespace

absl::StatusOr<InputScan> ScanInput(const std::string& path,
                                    RecordFormat format, int64_t chunk_records,
                                    int64_t chunk_bytes) {
  if (chunk_records < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "chunk size must be at least 1 record, got ", chunk_records));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<RecordSplitter> splitter,
                   RecordSplitter::Open(path, format, 0, -1, 1));
  InputScan scan;
  scan.format = format;
  SplitRecord row;
  if (format == RecordFormat::kCsv) {
    ASSIGN_OR_RETURN(bool has_header, splitter->Next(&row));
    if (!has_header) {
      return absl::InvalidArgumentError(absl::StrCat(
          "CSV input '", path, "' is empty: it needs a header row"));
    }
    ASSIGN_OR_RETURN(scan.header, ParseHeader(row));
  }
  ChunkSpan chunk;
  for (;;) {
    ASSIGN_OR_RETURN(bool more, splitter->Next(&row));
    if (!more) break;
    if (chunk.record_count == 0) {
      chunk.begin_offset = row.begin_offset;
      chunk.first_record = scan.records;
      chunk.first_line = row.line;
    }
    chunk.end_offset = row.end_offset;
    ++chunk.record_count;
    ++scan.records;
    if (chunk.record_count == chunk_records ||
        (chunk_bytes > 0 &&
         chunk.end_offset - chunk.begin_offset >= chunk_bytes)) {
      scan.chunks.push_back(chunk);
      chunk = ChunkSpan();
    }
  }
  if (chunk.record_count > 0) scan.chunks.push_back(chunk);
  return scan;
}

absl::StatusOr<std::unique_ptr<RecordReader>> RecordReader::Open(
    const std::string& path, RecordFormat format, const ChunkSpan& span) {
  if (span.begin_offset < 0 || span.end_offset < span.begin_offset) {
    return absl::InvalidArgumentError(
        absl::StrCat("chunk byte range [", span.begin_offset, ", ",
                     span.end_offset, ") is not a range"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<RecordSplitter> splitter,
                   RecordSplitter::Open(path, format, span.begin_offset,
                                        span.end_offset, span.first_line));
  return std::unique_ptr<RecordReader>(
      new SplitterReader(std::move(splitter), span.first_record));
}

}  // namespace ferry
