// SPDX-License-Identifier: Apache-2.0
// Record formats of offline jobs: reading input files in chunks and turning
// records into inference requests and result lines.
//
//   ScanInput      the validation pass: counts records, cuts the file into
//                  chunks of byte ranges, rejects an unreadable file up front.
//   RecordReader   streams the records of one chunk (bounded memory).
//   RecordCodec    record → InferenceRequest, response → output lines, failure
//                  → error line. One per job (built from the model's metadata
//                  and the job's format options); stateless, thread-safe.
//
// Formats:
//   csv    header row, then one record per row (RFC 4180 quoting, quoted
//          newlines allowed; CRLF accepted; a UTF-8 BOM is skipped). A quote
//          opens a quoted field only as the field's first byte. Header names
//          and values are trimmed of spaces and tabs. Output is CSV: `id`,
//          kept input columns, then one column per output element
//          (`output__0`, or `output__0_3` for element 3 of a vector output),
//          outputs in the model config's order. Numbers are the shortest text
//          that round-trips, as JsonWriter (`ferry infer`) prints them; NaN and
//          infinities, which JSON writes as null, are nan, inf, -inf; BOOL is
//          true/false.
//   jsonl  the OpenAI Batch input shape, one request per line:
//          {"custom_id", "method": "POST", "url": "/v2/models/<m>/infer",
//           "body": <KServe v2 request>}; method and url may be left out
//          (url may name a version: /v2/models/<m>/versions/<v>/infer); the
//          url's model must be the job's. Output lines are
//          {"id", "custom_id", "response": {"status_code", "request_id",
//           "body"}, "error": null}, where "id" is "batch_req_<record number>"
//          (so a re-run chunk writes the same bytes) and "request_id" the
//          response's id, or "id" when it has none.
//
// CSV columns → model inputs (the model must batch, max_batch_size > 0, and
// its CSV inputs need fixed dims and a non-BYTES type):
//   one input of k values per row (product of its dims): the feature columns
//     are every column but the id column in file order, or CsvOptions.columns
//     in the order given; there must be exactly k.
//   several inputs: by name. An input of one value per row takes the column
//     named like the input (`age`); an input of k > 1 values takes `<input>_0`
//     .. `<input>_{k-1}` (`emb_0`, `emb_1`, ...). An optional input none of
//     whose columns exist is not sent. CsvOptions.columns does not apply.
//   Values: FP16/FP32/FP64 and the integer types as decimal text; BOOL as
//   true/false (any case) or 1/0. An empty value is an error.
//   The id is the id column's text, or the record's 0-based number in the file
//   (RawRecord::number) when there is no id column. keep_columns copies every
//   column but the id column, in file order, after the id.
//
// Error lines (both formats) are JSON lines naming the record's line number:
//   {"line": 17, "id" or "custom_id": ..., "error": {"code", "message"},
//    "attempts": n}
// JSONL error lines also carry OpenAI's "id" and "response":
//   {"status_code": 400 for invalid_* codes, else 500, "body": {"error": msg}};
// a custom_id the codec could not parse is recovered from the text, or null.
// Dead-letter lines add the original record and the model version, so
// a replay job can be built from them; their error code is the status code in
// snake case ("unavailable"):
//   {"line", "id"/"custom_id", "record": "<original text>", "error",
//    "attempts", "model_version"}
//
// Parse and BuildRequest errors start with "line N: ".
#ifndef FERRY_JOBS_FORMATS_RECORD_FORMAT_H_
#define FERRY_JOBS_FORMATS_RECORD_FORMAT_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "config/model_options.h"
#include "core/inference.h"

namespace ferry {

enum class RecordFormat { kCsv, kJsonl };
absl::string_view RecordFormatName(RecordFormat format);  // "csv", "jsonl"
// From a name ("csv", "jsonl") or, for "" , from the path's extension (.csv,
// .jsonl, .ndjson). INVALID_ARGUMENT otherwise.
absl::StatusOr<RecordFormat> ResolveRecordFormat(absl::string_view name,
                                                 absl::string_view path);

// A byte range of the input holding whole records.
struct ChunkSpan {
  int64_t begin_offset = 0;
  int64_t end_offset = 0;
  int64_t first_record = 0;  // 0-based record number in the file
  int64_t first_line = 1;    // 1-based physical line of the first record
  int64_t record_count = 0;
};

struct InputScan {
  RecordFormat format = RecordFormat::kCsv;
  int64_t records = 0;
  std::vector<std::string> header;  // CSV column names; empty for JSONL
  std::vector<ChunkSpan> chunks;    // in file order, covering every record
};

inline constexpr int64_t kDefaultChunkBytes = int64_t{32} << 20;  // 32 MiB

// Reads the whole file once (streaming) and cuts it into chunks of at most
// `chunk_records` records, and closes a chunk once it holds `chunk_bytes`
// (0: no byte cap), so large records (images as JSON) keep chunks, which
// a worker holds in memory while it runs them, bounded. Blank lines are not
// records (they are skipped; line numbers still count them). INVALID_ARGUMENT
// for an unreadable file, a CSV without a header, a header with duplicate or
// empty names, an unterminated quote (naming the line), chunk_records < 1;
// NOT_FOUND for a missing file. Chunks begin at their first record and end
// after their last one's line terminator; a CSV header with no rows gives no
// chunks.
absl::StatusOr<InputScan> ScanInput(const std::string& path,
                                    RecordFormat format, int64_t chunk_records,
                                    int64_t chunk_bytes = kDefaultChunkBytes);

// One record as it appears in the input.
struct RawRecord {
  int64_t number = 0;  // 0-based record number in the file
  int64_t line = 1;    // 1-based physical line where it starts
  std::string text;    // the record's bytes, without the line terminator
};

// Streams the records of one chunk. Memory is bounded by the longest record.
class RecordReader {
 public:
  static absl::StatusOr<std::unique_ptr<RecordReader>> Open(
      const std::string& path, RecordFormat format, const ChunkSpan& span);
  virtual ~RecordReader() = default;
  // The next record; nullopt at the chunk's end. An I/O error is an error.
  virtual absl::StatusOr<std::optional<RawRecord>> Next() = 0;
};

// How a CSV file maps to the model's inputs (ferry run's flags; the job's
// options).
struct CsvOptions {
  std::string id_column;             // empty: the record number is the id
  std::vector<std::string> columns;  // empty: every column but the id column
  bool keep_columns = false;         // copy the input columns to the output
};

// A record parsed for inference. `payload` is the codec's own encoding (for
// CSV the row's values packed per input; for JSONL the request body).
struct ParsedRecord {
  RawRecord raw;
  std::string id;  // CSV: the id column or record number; JSONL: custom_id
  std::string payload;
};

class RecordCodec {
 public:
  // Checks the mapping against the model (and the CSV header): a column that
  // does not exist, a feature count that differs from the input's width, a
  // JSONL job against a model that is not named in its lines... errors are
  // INVALID_ARGUMENT naming the option or column.
  static absl::StatusOr<std::unique_ptr<RecordCodec>> Create(
      RecordFormat format, const ModelOptions& model, const InputScan& scan,
      const CsvOptions& csv);
  virtual ~RecordCodec() = default;

  // How many records one request may carry (CSV: several rows of one batch;
  // JSONL: 1, each line is a request of its own).
  virtual int max_records_per_request() const = 0;

  // Parses one record. A malformed record is a permanent failure:
  // INVALID_ARGUMENT naming the column or field and the reason.
  virtual absl::StatusOr<ParsedRecord> Parse(RawRecord raw) const = 0;

  // One request for 1..max_records_per_request() parsed records, in order.
  virtual absl::StatusOr<InferenceRequest> BuildRequest(
      absl::Span<const ParsedRecord* const> records) const = 0;

  // Appends the output line of each record (in order) given the response to
  // the request BuildRequest made for them.
  virtual absl::Status AppendResults(
      absl::Span<const ParsedRecord* const> records,
      const InferenceResponse& response, std::string* out) const = 0;

  // Written once at the start of the output file (CSV header line with its
  // newline; empty for JSONL).
  virtual std::string OutputPreamble() const = 0;

  // Written once at the start of a replay input file (the CSV header line;
  // empty for JSONL).
  virtual std::string InputPreamble() const = 0;

  // An error line for a record. `id` is empty when the record could not be
  // parsed far enough to have one (the record number is used). `code` is the
  // error's machine name: "invalid_record" (parse), "invalid_request" (the
  // model refused it), "inference_failed" (transient, attempts exhausted),
  // "batch_expired", "cancelled"; the message is error.message().
  virtual void AppendError(const RawRecord& raw, absl::string_view id,
                           absl::string_view code, const absl::Status& error,
                           int attempts, std::string* out) const = 0;
  // A dead-letter line for a record.
  virtual void AppendDeadLetter(const RawRecord& raw, absl::string_view id,
                                const absl::Status& error, int attempts,
                                int64_t model_version,
                                std::string* out) const = 0;
};

// The original record text of a dead-letter line (for a replay input file).
absl::StatusOr<std::string> DeadLetterRecord(absl::string_view line);

}  // namespace ferry

#endif  // FERRY_JOBS_FORMATS_RECORD_FORMAT_H_
