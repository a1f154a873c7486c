// SPDX-License-Identifier: Apache-2.0
// The CSV codec. Parse turns a row into the packed little-endian values of
// every input (concatenated in input order), so BuildRequest only copies
// rows into tensors; kept columns follow the values as 4-byte length + text.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/json_writer.h"
#include "core/half.h"
#include "core/status_macros.h"
#include "core/tensor.h"
#include "jobs/formats/codecs.h"
#include "jobs/formats/csv_fields.h"

namespace ferry::internal {
namespace {

// At most this many rows per request, whatever the model allows: enough to
// fill a batch, small enough that one failed request fails few rows.
constexpr int kMaxRowsPerRequest = 64;

enum class ValueError {
  kNone,
  kEmpty,
  kNotNumber,
  kNotInteger,
  kOutOfRange,
  kNotBool
};

// Full-range fallback for what from_chars calls out of range: underflow
// becomes zero (or a subnormal) as strtod rounds it; overflow is an error.
bool ParseOutOfRange(absl::string_view s, double* value) {
  char buf[128];
  if (s.size() >= sizeof buf) return false;
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  *value = std::strtod(buf, nullptr);
  return std::isfinite(*value);
}

// from_chars rejects a leading '+', which spreadsheets write.
absl::string_view StripPlus(absl::string_view s) {
  if (s.size() > 1 && s[0] == '+' && s[1] != '-' && s[1] != '+') {
    s.remove_prefix(1);
  }
  return s;
}

template <typename T>
ValueError ParseFloating(absl::string_view s, T* value) {
  s = StripPlus(s);
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, *value);
  if (ptr != end) return ValueError::kNotNumber;
  if (ec == std::errc()) return ValueError::kNone;
  if (ec != std::errc::result_out_of_range) return ValueError::kNotNumber;
  double d = 0;
  if (!ParseOutOfRange(s, &d) ||
      std::fabs(d) > static_cast<double>(std::numeric_limits<T>::max())) {
    return ValueError::kOutOfRange;
  }
  *value = static_cast<T>(d);
  return ValueError::kNone;
}

template <typename T>
ValueError ParseInteger(absl::string_view s, char* dst) {
  s = StripPlus(s);
  const char* end = s.data() + s.size();
  T v;
  auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (ec == std::errc::result_out_of_range) return ValueError::kOutOfRange;
  if (ec != std::errc() || ptr != end) {
    if constexpr (std::is_unsigned_v<T>) {
      // "-3" is an integer, just not one this type holds.
      int64_t signed_value;
      auto [p2, ec2] = std::from_chars(s.data(), end, signed_value);
      if (ec2 == std::errc() && p2 == end) return ValueError::kOutOfRange;
    }
    return ValueError::kNotInteger;
  }
  std::memcpy(dst, &v, sizeof v);
  return ValueError::kNone;
}

ValueError ParseValue(absl::string_view s, DataType dtype, char* dst) {
  if (s.empty()) return ValueError::kEmpty;
  switch (dtype) {
    case DataType::kFp32: {
      float v;
      const ValueError e = ParseFloating(s, &v);
      if (e == ValueError::kNone) std::memcpy(dst, &v, sizeof v);
      return e;
    }
    case DataType::kFp64: {
      double v;
      const ValueError e = ParseFloating(s, &v);
      if (e == ValueError::kNone) std::memcpy(dst, &v, sizeof v);
      return e;
    }
    case DataType::kFp16: {
      float v;
      const ValueError e = ParseFloating(s, &v);
      if (e != ValueError::kNone) return e;
      const uint16_t bits = FloatToHalf(v);
      if (std::isfinite(v) && std::isinf(HalfToFloat(bits))) {
        return ValueError::kOutOfRange;
      }
      std::memcpy(dst, &bits, sizeof bits);
      return ValueError::kNone;
    }
    case DataType::kBool: {
      bool v;
      if (s == "1" || absl::EqualsIgnoreCase(s, "true")) {
        v = true;
      } else if (s == "0" || absl::EqualsIgnoreCase(s, "false")) {
        v = false;
      } else {
        return ValueError::kNotBool;
      }
      *dst = v ? 1 : 0;
      return ValueError::kNone;
    }
    case DataType::kUint8:
      return ParseInteger<uint8_t>(s, dst);
    case DataType::kUint16:
      return ParseInteger<uint16_t>(s, dst);
    case DataType::kUint32:
      return ParseInteger<uint32_t>(s, dst);
    case DataType::kUint64:
      return ParseInteger<uint64_t>(s, dst);
    case DataType::kInt8:
      return ParseInteger<int8_t>(s, dst);
    case DataType::kInt16:
      return ParseInteger<int16_t>(s, dst);
    case DataType::kInt32:
      return ParseInteger<int32_t>(s, dst);
    case DataType::kInt64:
      return ParseInteger<int64_t>(s, dst);
    case DataType::kBytes:
      break;
  }
  return ValueError::kNotNumber;  // BYTES inputs are refused by Create
}

absl::Status ValueErrorStatus(ValueError error, int64_t line,
                              absl::string_view column, absl::string_view text,
                              DataType dtype) {
  constexpr size_t kMaxQuoted = 64;
  const std::string shown =
      text.size() > kMaxQuoted ? absl::StrCat(text.substr(0, kMaxQuoted), "...")
                               : std::string(text);
  const std::string at = absl::StrCat("line ", line, ": column '", column, "'");
  switch (error) {
    case ValueError::kEmpty:
      return absl::InvalidArgumentError(absl::StrCat(at, " is empty"));
    case ValueError::kNotNumber:
      return absl::InvalidArgumentError(
          absl::StrCat(at, ": '", shown, "' is not a number"));
    case ValueError::kNotInteger:
      return absl::InvalidArgumentError(
          absl::StrCat(at, ": '", shown, "' is not an integer"));
    case ValueError::kOutOfRange:
      return absl::InvalidArgumentError(absl::StrCat(
          at, ": '", shown, "' is out of range for ", ToString(dtype)));
    case ValueError::kNotBool:
      return absl::InvalidArgumentError(absl::StrCat(
          at, ": '", shown, "' is not a boolean (true, false, 1 or 0)"));
    case ValueError::kNone:
      break;
  }
  return absl::OkStatus();
}

template <typename T>
void AppendRow(std::string* out, const std::byte* data, int64_t first,
               int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, data + (first + i) * sizeof(T), sizeof(T));
    out->push_back(',');
    AppendShortestNumber(out, v);
  }
}

void AppendTensorRow(std::string* out, const Tensor& t,
                     const std::vector<absl::string_view>& strings, int64_t row,
                     int64_t per_row) {
  const int64_t first = row * per_row;
  const std::byte* data = t.data();
  switch (t.dtype()) {
    case DataType::kFp32:
      return AppendRow<float>(out, data, first, per_row);
    case DataType::kFp64:
      return AppendRow<double>(out, data, first, per_row);
    case DataType::kFp16:
      for (int64_t i = 0; i < per_row; ++i) {
        uint16_t bits;
        std::memcpy(&bits, data + (first + i) * 2, 2);
        out->push_back(',');
        AppendShortestNumber(out, HalfToFloat(bits));
      }
      return;
    case DataType::kBool:
      for (int64_t i = 0; i < per_row; ++i) {
        out->append(data[first + i] != std::byte{0} ? ",true" : ",false");
      }
      return;
    case DataType::kUint8:
      return AppendRow<uint8_t>(out, data, first, per_row);
    case DataType::kUint16:
      return AppendRow<uint16_t>(out, data, first, per_row);
    case DataType::kUint32:
      return AppendRow<uint32_t>(out, data, first, per_row);
    case DataType::kUint64:
      return AppendRow<uint64_t>(out, data, first, per_row);
    case DataType::kInt8:
      return AppendRow<int8_t>(out, data, first, per_row);
    case DataType::kInt16:
      return AppendRow<int16_t>(out, data, first, per_row);
    case DataType::kInt32:
      return AppendRow<int32_t>(out, data, first, per_row);
    case DataType::kInt64:
      return AppendRow<int64_t>(out, data, first, per_row);
    case DataType::kBytes:
      for (int64_t i = 0; i < per_row; ++i) {
        out->push_back(',');
        AppendCsvField(out, strings[first + i]);
      }
      return;
  }
}

void AppendLength(std::string* out, uint32_t n) {
  const char bytes[4] = {static_cast<char>(n), static_cast<char>(n >> 8),
                         static_cast<char>(n >> 16),
                         static_cast<char>(n >> 24)};
  out->append(bytes, 4);
}

uint32_t ReadLength(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint32_t>(u[0]) | static_cast<uint32_t>(u[1]) << 8 |
         static_cast<uint32_t>(u[2]) << 16 | static_cast<uint32_t>(u[3]) << 24;
}

// "a, b, c" with at most `limit` names, for messages about the header.
std::string ListNames(const std::vector<std::string>& names, size_t limit) {
  std::vector<std::string> quoted;
  for (size_t i = 0; i < names.size() && i < limit; ++i) {
    quoted.push_back(absl::StrCat("'", names[i], "'"));
  }
  std::string list = absl::StrJoin(quoted, ", ");
  if (names.size() > limit) {
    absl::StrAppend(&list, ", ... (", names.size(), " columns)");
  }
  return list;
}

struct InputPlan {
  std::string name;
  DataType dtype;
  Shape row_dims;        // without the batch dimension
  size_t offset;         // in the payload
  size_t bytes_per_row;  // width * element size
};

struct OutputPlan {
  std::string name;
  int64_t per_row;  // elements per row
};

// What one header column does.
struct ColumnPlan {
  int64_t value_offset = -1;  // payload offset of its value; -1: not a feature
  DataType dtype = DataType::kFp32;
};

class CsvCodec : public RecordCodec {
 public:
  int max_records_per_request() const override { return max_records_; }
  absl::StatusOr<ParsedRecord> Parse(RawRecord raw) const override;
  absl::StatusOr<InferenceRequest> BuildRequest(
      absl::Span<const ParsedRecord* const> records) const override;
  absl::Status AppendResults(absl::Span<const ParsedRecord* const> records,
                             const InferenceResponse& response,
                             std::string* out) const override;
  std::string OutputPreamble() const override { return output_preamble_; }
  std::string InputPreamble() const override { return input_preamble_; }
  void AppendError(const RawRecord& raw, absl::string_view id,
                   absl::string_view code, const absl::Status& error,
                   int attempts, std::string* out) const override;
  void AppendDeadLetter(const RawRecord& raw, absl::string_view id,
                        const absl::Status& error, int attempts,
                        int64_t model_version, std::string* out) const override;

 private:
  friend absl::StatusOr<std::unique_ptr<RecordCodec>> internal::CreateCsvCodec(
      const ModelOptions&, const InputScan&, const CsvOptions&);

  // The record's id for an error line: the parsed one, else (a record that
  // did not parse) its id column when that much of the line splits, else its
  // record number.
  std::string IdOf(const RawRecord& raw, absl::string_view id) const {
    if (!id.empty()) return std::string(id);
    if (id_column_ >= 0) {
      CsvFields fields;
      std::string storage;
      if (SplitCsvFields(raw.text, &storage, &fields).ok() &&
          id_column_ < static_cast<int>(fields.size())) {
        return std::string(fields[id_column_]);
      }
    }
    return absl::StrCat(raw.number);
  }

  std::vector<std::string> header_;
  int id_column_ = -1;
  bool keep_columns_ = false;
  std::vector<ColumnPlan> columns_;  // one per header column
  std::vector<InputPlan> inputs_;
  std::vector<OutputPlan> outputs_;
  size_t value_bytes_ = 0;  // packed values per row, all inputs
  int max_records_ = 1;
  std::string output_preamble_;
  std::string input_preamble_;
};

absl::StatusOr<ParsedRecord> CsvCodec::Parse(RawRecord raw) const {
  CsvFields fields;
  std::string storage;
  absl::Status split = SplitCsvFields(raw.text, &storage, &fields);
  if (!split.ok()) return AtLine(raw.line, split);
  if (fields.size() != header_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("line ", raw.line, ": ", fields.size(),
                     " fields, header has ", header_.size()));
  }
  ParsedRecord parsed;
  parsed.payload.resize(value_bytes_);
  char* values = parsed.payload.data();
  for (size_t i = 0; i < fields.size(); ++i) {
    const ColumnPlan& column = columns_[i];
    if (column.value_offset < 0) continue;
    const absl::string_view text = TrimSpaces(fields[i]);
    const ValueError error =
        ParseValue(text, column.dtype, values + column.value_offset);
    if (error != ValueError::kNone) {
      return ValueErrorStatus(error, raw.line, header_[i], text, column.dtype);
    }
  }
  if (keep_columns_) {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (static_cast<int>(i) == id_column_) continue;
      AppendLength(&parsed.payload, static_cast<uint32_t>(fields[i].size()));
      parsed.payload.append(fields[i].data(), fields[i].size());
    }
  }
  if (id_column_ >= 0) {
    parsed.id.assign(fields[id_column_].data(), fields[id_column_].size());
  } else {
    parsed.id = absl::StrCat(raw.number);
  }
  // Last: `fields` may point into raw.text.
  parsed.raw = std::move(raw);
  return parsed;
}

absl::StatusOr<InferenceRequest> CsvCodec::BuildRequest(
    absl::Span<const ParsedRecord* const> records) const {
  const int64_t k = static_cast<int64_t>(records.size());
  if (k < 1 || k > max_records_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a CSV request carries 1 to ", max_records_, " rows, got ", k));
  }
  for (const ParsedRecord* r : records) {
    if (r->payload.size() < value_bytes_) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", r->raw.line, ": record was not parsed by ",
                       "this CSV codec (payload of ", r->payload.size(),
                       " bytes, expected at least ", value_bytes_, ")"));
    }
  }
  InferenceRequest request;
  request.inputs.reserve(inputs_.size());
  for (const InputPlan& input : inputs_) {
    Shape shape;
    shape.reserve(input.row_dims.size() + 1);
    shape.push_back(k);
    shape.insert(shape.end(), input.row_dims.begin(), input.row_dims.end());
    ASSIGN_OR_RETURN(Tensor t, Tensor::Uninitialized(input.name, input.dtype,
                                                     std::move(shape)));
    std::byte* dst = t.mutable_data();
    for (int64_t r = 0; r < k; ++r) {
      std::memcpy(dst + r * input.bytes_per_row,
                  records[r]->payload.data() + input.offset,
                  input.bytes_per_row);
    }
    request.inputs.push_back(std::move(t));
  }
  return request;
}

absl::Status CsvCodec::AppendResults(
    absl::Span<const ParsedRecord* const> records,
    const InferenceResponse& response, std::string* out) const {
  const int64_t k = static_cast<int64_t>(records.size());
  // Check everything first, so that an error leaves `out` untouched.
  std::vector<const Tensor*> tensors;
  std::vector<std::vector<absl::string_view>> strings(outputs_.size());
  tensors.reserve(outputs_.size());
  for (size_t o = 0; o < outputs_.size(); ++o) {
    const OutputPlan& plan = outputs_[o];
    const Tensor* found = nullptr;
    // The engine returns outputs in config order; the name decides anyway.
    if (o < response.outputs.size() &&
        response.outputs[o].name() == plan.name) {
      found = &response.outputs[o];
    } else {
      for (const Tensor& t : response.outputs) {
        if (t.name() == plan.name) found = &t;
      }
    }
    if (found == nullptr) {
      return absl::InternalError(
          absl::StrCat("response has no output '", plan.name, "'"));
    }
    if (found->shape().empty() || found->shape()[0] != k ||
        found->num_elements() != k * plan.per_row) {
      return absl::InternalError(absl::StrCat(
          "output '", plan.name, "' has shape ", ShapeToString(found->shape()),
          ", expected ", k, " rows of ", plan.per_row, " elements"));
    }
    if (found->dtype() == DataType::kBytes) {
      strings[o] = found->strings();
    } else if (found->byte_size() != static_cast<size_t>(k * plan.per_row) *
                                         ByteSize(found->dtype())) {
      return absl::InternalError(absl::StrCat("output '", plan.name, "' holds ",
                                              found->byte_size(), " bytes"));
    }
    tensors.push_back(found);
  }
  for (int64_t r = 0; r < k; ++r) {
    const ParsedRecord& record = *records[r];
    AppendCsvField(out, record.id);
    if (keep_columns_) {
      const char* p = record.payload.data() + value_bytes_;
      const char* end = record.payload.data() + record.payload.size();
      while (end - p >= 4) {
        const uint32_t n = ReadLength(p);
        p += 4;
        if (static_cast<size_t>(end - p) < n) break;
        out->push_back(',');
        AppendCsvField(out, absl::string_view(p, n));
        p += n;
      }
    }
    for (size_t o = 0; o < outputs_.size(); ++o) {
      AppendTensorRow(out, *tensors[o], strings[o], r, outputs_[o].per_row);
    }
    out->push_back('\n');
  }
  return absl::OkStatus();
}

void CsvCodec::AppendError(const RawRecord& raw, absl::string_view id,
                           absl::string_view code, const absl::Status& error,
                           int attempts, std::string* out) const {
  JsonWriter w(out);
  w.BeginObject();
  w.Key("line").Int(raw.line);
  w.Key("id").String(IdOf(raw, id));
  w.Key("error").BeginObject();
  w.Key("code").String(code);
  w.Key("message").String(error.message());
  w.EndObject();
  w.Key("attempts").Int(attempts);
  w.EndObject();
  out->push_back('\n');
}

void CsvCodec::AppendDeadLetter(const RawRecord& raw, absl::string_view id,
                                const absl::Status& error, int attempts,
                                int64_t model_version, std::string* out) const {
  JsonWriter w(out);
  w.BeginObject();
  w.Key("line").Int(raw.line);
  w.Key("id").String(IdOf(raw, id));
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

// Columns of the header by name.
using ColumnIndex = absl::flat_hash_map<std::string, int>;

// Single input: the features are the listed columns, or all but the id.
absl::StatusOr<std::vector<int>> SingleInputColumns(
    const TensorSpec& input, int64_t width,
    const std::vector<std::string>& header, const ColumnIndex& index,
    int id_column, const CsvOptions& csv) {
  std::vector<int> features;
  if (!csv.columns.empty()) {
    std::vector<std::string> missing;
    absl::flat_hash_map<absl::string_view, int> listed;
    for (const std::string& name : csv.columns) {
      auto it = index.find(name);
      if (it == index.end()) {
        missing.push_back(name);
        continue;
      }
      if (!listed.emplace(name, 1).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("columns: '", name, "' is listed twice"));
      }
      features.push_back(it->second);
    }
    if (!missing.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("columns: ", ListNames(missing, 10),
                       missing.size() == 1 ? " is" : " are",
                       " not in the CSV header (", ListNames(header, 10), ")"));
    }
  } else {
    for (int i = 0; i < static_cast<int>(header.size()); ++i) {
      if (i != id_column) features.push_back(i);
    }
  }
  if (static_cast<int64_t>(features.size()) != width) {
    const std::string source =
        !csv.columns.empty() ? "columns lists"
        : id_column >= 0
            ? absl::StrCat("the CSV has (every column but the id column '",
                           header[id_column], "')")
            : "the CSV has (every column)";
    return absl::InvalidArgumentError(absl::StrCat(
        "input '", input.name, "' takes ", width, " values per row (dims ",
        ShapeToString(input.dims), "), but ", source, " ", features.size(),
        " feature columns"));
  }
  return features;
}

// Several inputs: each takes its columns by name, `x` for a one-value input,
// `x_0`..`x_{k-1}` for a k-value one. Returns -1 entries for an optional input
// without columns.
absl::StatusOr<std::vector<int>> NamedInputColumns(const TensorSpec& input,
                                                   int64_t width,
                                                   const ColumnIndex& index) {
  std::vector<int> features;
  std::vector<std::string> missing;
  for (int64_t j = 0; j < width; ++j) {
    const std::string name =
        width == 1 ? input.name : absl::StrCat(input.name, "_", j);
    auto it = index.find(name);
    if (it == index.end()) {
      missing.push_back(name);
    } else {
      features.push_back(it->second);
    }
  }
  if (missing.empty()) return features;
  if (input.optional && features.empty()) return std::vector<int>();
  const std::string wants =
      width == 1 ? absl::StrCat("a column named '", input.name, "'")
                 : absl::StrCat("columns '", input.name, "_0' to '", input.name,
                                "_", width - 1, "'");
  return absl::InvalidArgumentError(
      absl::StrCat("input '", input.name, "' needs ", wants,
                   " in the CSV header; missing: ", ListNames(missing, 10)));
}

// Elements per row of a tensor with fixed dims; an error names what is
// variable.
absl::StatusOr<int64_t> FixedWidth(const TensorSpec& spec,
                                   absl::string_view kind) {
  for (int64_t d : spec.dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(kind, " '", spec.name, "' has variable dims ",
                       ShapeToString(spec.dims), "; CSV jobs need fixed dims"));
    }
  }
  return NumElements(spec.dims);
}

}  // namespace

absl::StatusOr<std::unique_ptr<RecordCodec>> CreateCsvCodec(
    const ModelOptions& model, const InputScan& scan, const CsvOptions& csv) {
  if (model.max_batch_size <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", model.name,
        "' does not batch (max_batch_size 0); CSV jobs need a model with "
        "max_batch_size > 0, whose rows stack along the batch dimension"));
  }
  if (model.inputs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model '", model.name, "' declares no inputs"));
  }
  if (scan.header.empty()) {
    return absl::InvalidArgumentError("the CSV input has no header");
  }
  auto codec = std::unique_ptr<CsvCodec>(new CsvCodec());
  codec->header_ = scan.header;
  codec->keep_columns_ = csv.keep_columns;
  codec->max_records_ = std::min(model.max_batch_size, kMaxRowsPerRequest);
  ColumnIndex index;
  for (int i = 0; i < static_cast<int>(scan.header.size()); ++i) {
    index.emplace(scan.header[i], i);
  }
  if (!csv.id_column.empty()) {
    auto it = index.find(csv.id_column);
    if (it == index.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "id column '", csv.id_column, "' is not in the CSV header (",
          ListNames(scan.header, 10), ")"));
    }
    codec->id_column_ = it->second;
  }
  if (model.inputs.size() > 1 && !csv.columns.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("columns applies to a model with one input; model '",
                     model.name, "' has ", model.inputs.size(),
                     " inputs, which take their CSV columns by name"));
  }
  codec->columns_.resize(scan.header.size());
  for (const TensorSpec& input : model.inputs) {
    if (input.dtype == DataType::kBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", input.name,
          "' is BYTES, which CSV columns cannot feed; use a jsonl input"));
    }
    ASSIGN_OR_RETURN(int64_t width, FixedWidth(input, "input"));
    std::vector<int> features;
    if (model.inputs.size() == 1) {
      ASSIGN_OR_RETURN(features,
                       SingleInputColumns(input, width, scan.header, index,
                                          codec->id_column_, csv));
    } else {
      ASSIGN_OR_RETURN(features, NamedInputColumns(input, width, index));
      if (features.empty()) continue;  // optional, not in this file
    }
    const size_t element = ByteSize(input.dtype);
    InputPlan plan{input.name, input.dtype, input.dims, codec->value_bytes_,
                   features.size() * element};
    for (size_t j = 0; j < features.size(); ++j) {
      ColumnPlan& column = codec->columns_[features[j]];
      column.value_offset = static_cast<int64_t>(plan.offset + j * element);
      column.dtype = input.dtype;
    }
    codec->value_bytes_ += plan.bytes_per_row;
    codec->inputs_.push_back(std::move(plan));
  }
  if (codec->inputs_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no CSV column feeds an input of model '", model.name, "'"));
  }
  for (const TensorSpec& output : model.outputs) {
    ASSIGN_OR_RETURN(int64_t per_row, FixedWidth(output, "output"));
    codec->outputs_.push_back({output.name, per_row});
  }

  std::string& header = codec->output_preamble_;
  header = "id";
  if (csv.keep_columns) {
    for (int i = 0; i < static_cast<int>(scan.header.size()); ++i) {
      if (i == codec->id_column_) continue;
      header.push_back(',');
      AppendCsvField(&header, scan.header[i]);
    }
  }
  for (const OutputPlan& output : codec->outputs_) {
    for (int64_t j = 0; j < output.per_row; ++j) {
      header.push_back(',');
      AppendCsvField(&header, output.per_row == 1
                                  ? output.name
                                  : absl::StrCat(output.name, "_", j));
    }
  }
  header.push_back('\n');
  for (size_t i = 0; i < scan.header.size(); ++i) {
    if (i > 0) codec->input_preamble_.push_back(',');
    AppendCsvField(&codec->input_preamble_, scan.header[i]);
  }
  codec->input_preamble_.push_back('\n');
  return std::unique_ptr<RecordCodec>(std::move(codec));
}

}  // namespace ferry::internal
