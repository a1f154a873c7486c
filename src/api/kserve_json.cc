// SPDX-License-Identifier: Apache-2.0
#include "api/kserve_json.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "api/json_writer.h"
#include "core/half.h"
#include "core/status_macros.h"
#include "simdjson.h"

namespace ferry {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

absl::Status Invalid(absl::string_view where, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

template <typename T>
void AppendRaw(std::string* bytes, T value) {
  char buf[sizeof(T)];
  std::memcpy(buf, &value, sizeof(T));
  bytes->append(buf, sizeof(T));
}

template <typename T>
absl::Status AppendInteger(element e, std::string* bytes,
                           absl::string_view where, int64_t index) {
  if constexpr (std::is_unsigned_v<T>) {
    uint64_t v = 0;
    if (e.get_uint64().get(v) != simdjson::SUCCESS ||
        v > std::numeric_limits<T>::max()) {
      return Invalid(
          where, absl::StrCat("element ", index, " is not an integer in [0, ",
                              std::numeric_limits<T>::max(), "]"));
    }
    AppendRaw<T>(bytes, static_cast<T>(v));
  } else {
    int64_t v = 0;
    if (e.get_int64().get(v) != simdjson::SUCCESS ||
        v < std::numeric_limits<T>::min() ||
        v > std::numeric_limits<T>::max()) {
      return Invalid(where,
                     absl::StrCat("element ", index, " is not an integer in [",
                                  std::numeric_limits<T>::min(), ", ",
                                  std::numeric_limits<T>::max(), "]"));
    }
    AppendRaw<T>(bytes, static_cast<T>(v));
  }
  return absl::OkStatus();
}

absl::Status AppendScalar(element e, DataType dtype, std::string* bytes,
                          absl::string_view where, int64_t index) {
  switch (dtype) {
    case DataType::kBool: {
      bool v = false;
      if (e.get_bool().get(v) != simdjson::SUCCESS) {
        return Invalid(
            where, absl::StrCat("element ", index, " is not true or false"));
      }
      bytes->push_back(v ? 1 : 0);
      return absl::OkStatus();
    }
    case DataType::kUint8:
      return AppendInteger<uint8_t>(e, bytes, where, index);
    case DataType::kUint16:
      return AppendInteger<uint16_t>(e, bytes, where, index);
    case DataType::kUint32:
      return AppendInteger<uint32_t>(e, bytes, where, index);
    case DataType::kUint64:
      return AppendInteger<uint64_t>(e, bytes, where, index);
    case DataType::kInt8:
      return AppendInteger<int8_t>(e, bytes, where, index);
    case DataType::kInt16:
      return AppendInteger<int16_t>(e, bytes, where, index);
    case DataType::kInt32:
      return AppendInteger<int32_t>(e, bytes, where, index);
    case DataType::kInt64:
      return AppendInteger<int64_t>(e, bytes, where, index);
    case DataType::kFp16:
    case DataType::kFp32:
    case DataType::kFp64: {
      double v = 0;
      if (e.get_double().get(v) != simdjson::SUCCESS) {
        return Invalid(where,
                       absl::StrCat("element ", index, " is not a number"));
      }
      if (dtype == DataType::kFp64) {
        AppendRaw<double>(bytes, v);
      } else if (dtype == DataType::kFp32) {
        AppendRaw<float>(bytes, static_cast<float>(v));
      } else {
        AppendRaw<uint16_t>(bytes, FloatToHalf(static_cast<float>(v)));
      }
      return absl::OkStatus();
    }
    case DataType::kBytes: {
      std::string_view v;
      if (e.get_string().get(v) != simdjson::SUCCESS) {
        return Invalid(where,
                       absl::StrCat("element ", index, " is not a string"));
      }
      AppendRaw<uint32_t>(bytes, static_cast<uint32_t>(v.size()));
      bytes->append(v.data(), v.size());
      return absl::OkStatus();
    }
  }
  return Invalid(where, "unsupported datatype");
}

// Appends the scalars of a (possibly nested) JSON array in row-major order.
absl::Status AppendData(element e, DataType dtype, std::string* bytes,
                        absl::string_view where, int64_t* count, int depth) {
  if (depth > 32)
    return Invalid(where, "data is nested more than 32 levels deep");
  array arr;
  if (e.get_array().get(arr) == simdjson::SUCCESS) {
    for (element child : arr) {
      RETURN_IF_ERROR(AppendData(child, dtype, bytes, where, count, depth + 1));
    }
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(AppendScalar(e, dtype, bytes, where, *count));
  ++*count;
  return absl::OkStatus();
}

absl::StatusOr<Shape> ParseShape(element e, absl::string_view where) {
  array arr;
  if (e.get_array().get(arr) != simdjson::SUCCESS) {
    return Invalid(where, "shape must be an array of non-negative integers");
  }
  Shape shape;
  for (element d : arr) {
    int64_t v = 0;
    if (d.get_int64().get(v) != simdjson::SUCCESS || v < 0) {
      return Invalid(where, "shape must be an array of non-negative integers");
    }
    shape.push_back(v);
  }
  return shape;
}

absl::StatusOr<uint64_t> ParseUint(element e, absl::string_view where) {
  uint64_t v = 0;
  if (e.get_uint64().get(v) != simdjson::SUCCESS) {
    return Invalid(where, "must be a non-negative integer");
  }
  return v;
}

absl::StatusOr<bool> ParseBool(element e, absl::string_view where) {
  bool v = false;
  if (e.get_bool().get(v) != simdjson::SUCCESS)
    return Invalid(where, "must be true or false");
  return v;
}

struct BinaryCursor {
  absl::string_view data;
  size_t offset = 0;
  std::shared_ptr<const void> keepalive;
};

absl::StatusOr<Tensor> ParseInput(element e, size_t index,
                                  BinaryCursor* binary) {
  const std::string at = absl::StrCat("inputs[", index, "]");
  object obj;
  if (e.get_object().get(obj) != simdjson::SUCCESS)
    return Invalid(at, "must be an object");
  std::string_view name_sv;
  if (obj["name"].get_string().get(name_sv) != simdjson::SUCCESS) {
    return Invalid(at, "'name' is missing or not a string");
  }
  const std::string name(name_sv);
  const std::string where = absl::StrCat(at, " '", name, "'");
  std::string_view dtype_sv;
  if (obj["datatype"].get_string().get(dtype_sv) != simdjson::SUCCESS) {
    return Invalid(where, "'datatype' is missing or not a string");
  }
  absl::StatusOr<DataType> dtype =
      DataTypeFromString(absl::string_view(dtype_sv.data(), dtype_sv.size()));
  if (!dtype.ok()) return Invalid(where, dtype.status().message());
  element shape_el;
  if (obj["shape"].get(shape_el) != simdjson::SUCCESS)
    return Invalid(where, "'shape' is missing");
  ASSIGN_OR_RETURN(Shape shape, ParseShape(shape_el, where));

  std::optional<uint64_t> binary_size;
  element params;
  if (obj["parameters"].get(params) == simdjson::SUCCESS) {
    element size_el;
    if (params["binary_data_size"].get(size_el) == simdjson::SUCCESS) {
      ASSIGN_OR_RETURN(
          binary_size,
          ParseUint(size_el,
                    absl::StrCat(where, " parameters.binary_data_size")));
    }
  }
  element data;
  const bool has_data = obj["data"].get(data) == simdjson::SUCCESS;
  if (binary_size.has_value()) {
    if (has_data)
      return Invalid(where, "has both 'data' and parameters.binary_data_size");
    if (binary->data.size() - binary->offset < *binary_size) {
      return Invalid(where, absl::StrCat("binary_data_size is ", *binary_size,
                                         " but only ",
                                         binary->data.size() - binary->offset,
                                         " bytes of binary data remain"));
    }
    const char* p = binary->data.data() + binary->offset;
    binary->offset += *binary_size;
    absl::StatusOr<Tensor> t = Tensor::Borrow(name, *dtype, std::move(shape), p,
                                              *binary_size, binary->keepalive);
    if (!t.ok()) return Invalid(where, t.status().message());
    return t;
  }
  if (!has_data) return Invalid(where, "'data' is missing");
  std::string bytes;
  if (IsFixedSize(*dtype)) {
    bytes.reserve(
        static_cast<size_t>(std::max<int64_t>(0, NumElements(shape))) *
        ByteSize(*dtype));
  }
  int64_t count = 0;
  RETURN_IF_ERROR(AppendData(data, *dtype, &bytes, where, &count, 0));
  if (count != NumElements(shape)) {
    return Invalid(
        where,
        absl::StrCat("data has ", count, " elements but shape ",
                     ShapeToString(shape), " needs ", NumElements(shape)));
  }
  absl::StatusOr<Tensor> t =
      Tensor::FromBytes(name, *dtype, std::move(shape), std::move(bytes));
  if (!t.ok()) return Invalid(where, t.status().message());
  return t;
}

template <typename T>
void WriteValues(JsonWriter& w, const Tensor& t) {
  const size_t n = t.byte_size() / sizeof(T);
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, t.data() + i * sizeof(T), sizeof(T));
    if constexpr (std::is_same_v<T, float>) {
      w.Float(v);
    } else if constexpr (std::is_same_v<T, double>) {
      w.Double(v);
    } else if constexpr (std::is_signed_v<T>) {
      w.Int(v);
    } else {
      w.Uint(v);
    }
  }
}

void WriteData(JsonWriter& w, const Tensor& t) {
  w.BeginArray();
  switch (t.dtype()) {
    case DataType::kBool:
      for (size_t i = 0; i < t.byte_size(); ++i)
        w.Bool(t.data()[i] != std::byte{0});
      break;
    case DataType::kUint8:
      WriteValues<uint8_t>(w, t);
      break;
    case DataType::kUint16:
      WriteValues<uint16_t>(w, t);
      break;
    case DataType::kUint32:
      WriteValues<uint32_t>(w, t);
      break;
    case DataType::kUint64:
      WriteValues<uint64_t>(w, t);
      break;
    case DataType::kInt8:
      WriteValues<int8_t>(w, t);
      break;
    case DataType::kInt16:
      WriteValues<int16_t>(w, t);
      break;
    case DataType::kInt32:
      WriteValues<int32_t>(w, t);
      break;
    case DataType::kInt64:
      WriteValues<int64_t>(w, t);
      break;
    case DataType::kFp16:
      for (size_t i = 0; i + 2 <= t.byte_size(); i += 2) {
        uint16_t bits;
        std::memcpy(&bits, t.data() + i, 2);
        w.Float(HalfToFloat(bits));
      }
      break;
    case DataType::kFp32:
      WriteValues<float>(w, t);
      break;
    case DataType::kFp64:
      WriteValues<double>(w, t);
      break;
    case DataType::kBytes:
      for (absl::string_view s : t.strings()) w.String(s);
      break;
  }
  w.EndArray();
}

}  // namespace

absl::StatusOr<InferenceRequest> ParseInferenceRequest(
    absl::string_view json, absl::string_view binary,
    std::shared_ptr<const void> keepalive) {
  simdjson::dom::parser parser;
  element doc;
  if (auto err = parser.parse(json.data(), json.size()).get(doc);
      err != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request body is not valid JSON: ", simdjson::error_message(err)));
  }
  object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError("request body must be a JSON object");
  }
  InferenceRequest request;
  element el;
  if (root["id"].get(el) == simdjson::SUCCESS) {
    std::string_view id;
    if (el.get_string().get(id) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError("'id' must be a string");
    }
    request.id = std::string(id);
  }
  if (root["parameters"].get(el) == simdjson::SUCCESS) {
    object params;
    if (el.get_object().get(params) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError("'parameters' must be an object");
    }
    element p;
    if (params["priority"].get(p) == simdjson::SUCCESS) {
      ASSIGN_OR_RETURN(request.priority, ParseUint(p, "parameters.priority"));
    }
    if (params["timeout"].get(p) == simdjson::SUCCESS) {
      ASSIGN_OR_RETURN(request.timeout_us, ParseUint(p, "parameters.timeout"));
    }
    if (params["binary_data_output"].get(p) == simdjson::SUCCESS) {
      ASSIGN_OR_RETURN(request.binary_data_output,
                       ParseBool(p, "parameters.binary_data_output"));
    }
  }
  array inputs;
  if (root["inputs"].get(el) != simdjson::SUCCESS ||
      el.get_array().get(inputs) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError("'inputs' is missing or not an array");
  }
  BinaryCursor cursor{binary, 0, std::move(keepalive)};
  size_t index = 0;
  for (element input : inputs) {
    ASSIGN_OR_RETURN(Tensor t, ParseInput(input, index++, &cursor));
    request.inputs.push_back(std::move(t));
  }
  if (cursor.offset != binary.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "binary section has ", binary.size() - cursor.offset,
        " bytes beyond the inputs' binary_data_size total of ", cursor.offset));
  }
  if (root["outputs"].get(el) == simdjson::SUCCESS) {
    array outputs;
    if (el.get_array().get(outputs) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError("'outputs' must be an array");
    }
    size_t i = 0;
    for (element out : outputs) {
      const std::string at = absl::StrCat("outputs[", i++, "]");
      RequestedOutput requested;
      std::string_view name;
      if (out["name"].get_string().get(name) != simdjson::SUCCESS) {
        return Invalid(at, "'name' is missing or not a string");
      }
      requested.name = std::string(name);
      element p;
      if (out["parameters"]["binary_data"].get(p) == simdjson::SUCCESS) {
        ASSIGN_OR_RETURN(
            requested.binary_data,
            ParseBool(p, absl::StrCat(at, " parameters.binary_data")));
      }
      request.outputs.push_back(std::move(requested));
    }
  }
  return request;
}

namespace {

// Writes one tensor entry of "inputs" or "outputs"; a binary one is appended
// to `binary` for the section after the JSON.
void WriteTensorEntry(JsonWriter& w, const Tensor& t, bool as_binary,
                      std::vector<const Tensor*>* binary) {
  w.BeginObject();
  w.Key("name").String(t.name());
  w.Key("datatype").String(ToString(t.dtype()));
  w.Key("shape").BeginArray();
  for (int64_t d : t.shape()) w.Int(d);
  w.EndArray();
  if (as_binary) {
    w.Key("parameters").BeginObject();
    w.Key("binary_data_size").Uint(t.byte_size());
    w.EndObject();
    binary->push_back(&t);
  } else {
    w.Key("data");
    WriteData(w, t);
  }
  w.EndObject();
}

// Closes the JSON and appends the binary section.
void FinishBody(EncodedBody* encoded,
                const std::vector<const Tensor*>& binary) {
  std::string& out = encoded->body;
  encoded->json_size = out.size();
  encoded->has_binary = !binary.empty();
  size_t total = out.size();
  for (const Tensor* t : binary) total += t->byte_size();
  out.reserve(total);
  for (const Tensor* t : binary) {
    out.append(reinterpret_cast<const char*>(t->data()), t->byte_size());
  }
}

}  // namespace

EncodedInferenceResponse EncodeInferenceResponse(
    const InferenceResponse& response,
    const std::vector<RequestedOutput>& requested, bool binary_data_output) {
  auto wants_binary = [&](const std::string& name) {
    for (const RequestedOutput& r : requested) {
      if (r.name == name && r.binary_data.has_value()) return *r.binary_data;
    }
    return binary_data_output;
  };
  EncodedInferenceResponse encoded;
  std::vector<const Tensor*> binary;
  JsonWriter w(&encoded.body);
  w.BeginObject();
  w.Key("model_name").String(response.model_name);
  w.Key("model_version").String(response.model_version);
  if (!response.id.empty()) w.Key("id").String(response.id);
  w.Key("outputs").BeginArray();
  for (const Tensor& t : response.outputs) {
    WriteTensorEntry(w, t, wants_binary(t.name()), &binary);
  }
  w.EndArray();
  w.EndObject();
  FinishBody(&encoded, binary);
  return encoded;
}

EncodedBody EncodeInferenceRequest(const InferenceRequest& request,
                                   bool binary_inputs) {
  EncodedBody encoded;
  std::vector<const Tensor*> binary;
  JsonWriter w(&encoded.body);
  w.BeginObject();
  if (!request.id.empty()) w.Key("id").String(request.id);
  if (request.priority || request.timeout_us || request.binary_data_output) {
    w.Key("parameters").BeginObject();
    if (request.priority) w.Key("priority").Uint(*request.priority);
    if (request.timeout_us) w.Key("timeout").Uint(*request.timeout_us);
    if (request.binary_data_output) w.Key("binary_data_output").Bool(true);
    w.EndObject();
  }
  w.Key("inputs").BeginArray();
  for (const Tensor& t : request.inputs) {
    WriteTensorEntry(w, t, binary_inputs, &binary);
  }
  w.EndArray();
  if (!request.outputs.empty()) {
    w.Key("outputs").BeginArray();
    for (const RequestedOutput& o : request.outputs) {
      w.BeginObject();
      w.Key("name").String(o.name);
      if (o.binary_data.has_value()) {
        w.Key("parameters").BeginObject();
        w.Key("binary_data").Bool(*o.binary_data);
        w.EndObject();
      }
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  FinishBody(&encoded, binary);
  return encoded;
}

std::string InferenceResponseToJson(const InferenceResponse& response) {
  return EncodeInferenceResponse(response, {}, /*binary_data_output=*/false)
      .body;
}

std::string ErrorToJson(absl::string_view message) {
  std::string out;
  JsonWriter(&out).BeginObject().Key("error").String(message).EndObject();
  return out;
}

}  // namespace ferry
