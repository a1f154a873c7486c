// SPDX-License-Identifier: Apache-2.0
#include "api/grpc/grpc_codec.h"

#include <algorithm>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/inference_statistics.h"
#include "core/status_macros.h"

namespace ferry {
namespace {

using inference::InferParameter;
using inference::InferTensorContents;
using inference::ModelInferRequest;
using inference::ModelInferResponse;

absl::Status Invalid(absl::string_view where, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

// Element count of `shape`, refusing negative dimensions and products that do
// not fit comfortably in an int64 (a hostile shape must not overflow).
absl::StatusOr<int64_t> ElementCount(absl::string_view where,
                                     absl::Span<const int64_t> shape) {
  constexpr int64_t kLimit = std::numeric_limits<int64_t>::max() / 16;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      return Invalid(where, absl::StrCat("shape ", ShapeToString(shape),
                                         " has a negative dimension"));
    }
    if (d != 0 && n > kLimit / d) {
      return Invalid(
          where, absl::StrCat("shape ", ShapeToString(shape), " is too large"));
    }
    n *= d;
  }
  return n;
}

// The non-empty fields of `c`, by name.
std::vector<absl::string_view> FilledFields(const InferTensorContents& c) {
  std::vector<absl::string_view> out;
  if (c.bool_contents_size() > 0) out.push_back("bool_contents");
  if (c.int_contents_size() > 0) out.push_back("int_contents");
  if (c.int64_contents_size() > 0) out.push_back("int64_contents");
  if (c.uint_contents_size() > 0) out.push_back("uint_contents");
  if (c.uint64_contents_size() > 0) out.push_back("uint64_contents");
  if (c.fp32_contents_size() > 0) out.push_back("fp32_contents");
  if (c.fp64_contents_size() > 0) out.push_back("fp64_contents");
  if (c.bytes_contents_size() > 0) out.push_back("bytes_contents");
  return out;
}

// The typed field that carries `dtype`; empty for FP16, which has none.
absl::string_view ContentsField(DataType dtype) {
  switch (dtype) {
    case DataType::kBool:
      return "bool_contents";
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
      return "int_contents";
    case DataType::kInt64:
      return "int64_contents";
    case DataType::kUint8:
    case DataType::kUint16:
    case DataType::kUint32:
      return "uint_contents";
    case DataType::kUint64:
      return "uint64_contents";
    case DataType::kFp32:
      return "fp32_contents";
    case DataType::kFp64:
      return "fp64_contents";
    case DataType::kBytes:
      return "bytes_contents";
    case DataType::kFp16:
      break;
  }
  return "";
}

// Copies `values` into a new tensor of element type Out, checking that each
// value fits (INT8/INT16 travel in int32 fields, UINT8/UINT16 in uint32).
template <typename Out, typename In, typename Repeated>
absl::StatusOr<Tensor> FromRepeated(absl::string_view where, std::string name,
                                    Shape shape, const Repeated& values) {
  ASSIGN_OR_RETURN(
      Tensor t, Tensor::Uninitialized(std::move(name), DataTypeOf<Out>::value,
                                      std::move(shape)));
  absl::Span<Out> out = t.mutable_values<Out>();
  for (int i = 0; i < values.size(); ++i) {
    const In v = values.Get(i);
    if constexpr (!std::is_same_v<In, Out>) {
      if (static_cast<In>(static_cast<Out>(v)) != v) {
        return Invalid(
            where, absl::StrCat(ContentsField(DataTypeOf<Out>::value), "[", i,
                                "] = ", v, " is out of range for ",
                                ToString(DataTypeOf<Out>::value)));
      }
    }
    out[i] = static_cast<Out>(v);
  }
  return t;
}

absl::StatusOr<Tensor> FromBytesContents(
    std::string name, Shape shape,
    google::protobuf::RepeatedPtrField<std::string>* values) {
  size_t total = 0;
  for (const std::string& v : *values) total += 4 + v.size();
  std::string bytes;
  bytes.reserve(total);
  for (const std::string& v : *values) {
    if (v.size() > std::numeric_limits<uint32_t>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", name, "': a BYTES element exceeds 4 GiB"));
    }
    const uint32_t len = static_cast<uint32_t>(v.size());
    const char prefix[4] = {static_cast<char>(len & 0xff),
                            static_cast<char>((len >> 8) & 0xff),
                            static_cast<char>((len >> 16) & 0xff),
                            static_cast<char>((len >> 24) & 0xff)};
    bytes.append(prefix, 4);
    bytes.append(v);
  }
  return Tensor::FromBytes(std::move(name), DataType::kBytes, std::move(shape),
                           std::move(bytes));
}

// One input from its typed contents.
absl::StatusOr<Tensor> DecodeTyped(absl::string_view where,
                                   ModelInferRequest::InferInputTensor* in,
                                   DataType dtype, Shape shape) {
  const absl::string_view field = ContentsField(dtype);
  if (field.empty()) {
    return Invalid(where,
                   absl::StrCat(ToString(dtype),
                                " has no typed contents field; send it in "
                                "raw_input_contents"));
  }
  ASSIGN_OR_RETURN(const int64_t n, ElementCount(where, shape));
  InferTensorContents* c = in->mutable_contents();
  int64_t got = 0;
  for (absl::string_view filled : FilledFields(*c)) {
    if (filled != field) {
      return Invalid(where, absl::StrCat("datatype ", ToString(dtype),
                                         " takes ", field, ", got ", filled));
    }
  }
  switch (dtype) {
    case DataType::kBool:
      got = c->bool_contents_size();
      break;
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
      got = c->int_contents_size();
      break;
    case DataType::kInt64:
      got = c->int64_contents_size();
      break;
    case DataType::kUint8:
    case DataType::kUint16:
    case DataType::kUint32:
      got = c->uint_contents_size();
      break;
    case DataType::kUint64:
      got = c->uint64_contents_size();
      break;
    case DataType::kFp32:
      got = c->fp32_contents_size();
      break;
    case DataType::kFp64:
      got = c->fp64_contents_size();
      break;
    case DataType::kBytes:
      got = c->bytes_contents_size();
      break;
    case DataType::kFp16:
      break;
  }
  if (got != n) {
    return Invalid(where, absl::StrCat(field, " has ", got, " elements, shape ",
                                       ShapeToString(shape), " needs ", n));
  }
  std::string name = in->name();
  switch (dtype) {
    case DataType::kBool:
      return FromRepeated<bool, bool>(where, name, shape, c->bool_contents());
    case DataType::kInt8:
      return FromRepeated<int8_t, int32_t>(where, name, shape,
                                           c->int_contents());
    case DataType::kInt16:
      return FromRepeated<int16_t, int32_t>(where, name, shape,
                                            c->int_contents());
    case DataType::kInt32:
      return FromRepeated<int32_t, int32_t>(where, name, shape,
                                            c->int_contents());
    case DataType::kInt64:
      return FromRepeated<int64_t, int64_t>(where, name, shape,
                                            c->int64_contents());
    case DataType::kUint8:
      return FromRepeated<uint8_t, uint32_t>(where, name, shape,
                                             c->uint_contents());
    case DataType::kUint16:
      return FromRepeated<uint16_t, uint32_t>(where, name, shape,
                                              c->uint_contents());
    case DataType::kUint32:
      return FromRepeated<uint32_t, uint32_t>(where, name, shape,
                                              c->uint_contents());
    case DataType::kUint64:
      return FromRepeated<uint64_t, uint64_t>(where, name, shape,
                                              c->uint64_contents());
    case DataType::kFp32:
      return FromRepeated<float, float>(where, name, shape, c->fp32_contents());
    case DataType::kFp64:
      return FromRepeated<double, double>(where, name, shape,
                                          c->fp64_contents());
    case DataType::kBytes:
      return FromBytesContents(std::move(name), std::move(shape),
                               c->mutable_bytes_contents());
    case DataType::kFp16:
      break;
  }
  return absl::InternalError(absl::StrCat(where, ": unhandled datatype"));
}

// A non-negative integer request parameter (Triton's priority and timeout;
// tritonclient sends them as int64 or uint64).
absl::StatusOr<uint64_t> UintParameter(absl::string_view field,
                                       const InferParameter& p) {
  switch (p.parameter_choice_case()) {
    case InferParameter::kInt64Param:
      if (p.int64_param() < 0) {
        return Invalid(
            field, absl::StrCat("must not be negative, got ", p.int64_param()));
      }
      return static_cast<uint64_t>(p.int64_param());
    case InferParameter::kUint64Param:
      return p.uint64_param();
    default:
      return Invalid(field, "must be an int64_param or uint64_param");
  }
}

// Parameters Ferry cannot honour, refused rather than silently ignored.
absl::Status CheckUnsupported(
    absl::string_view where,
    const google::protobuf::Map<std::string, InferParameter>& params) {
  for (absl::string_view key :
       {"shared_memory_region", "shared_memory_byte_size",
        "shared_memory_offset", "classification"}) {
    if (params.contains(std::string(key))) {
      return absl::UnimplementedError(absl::StrCat(
          where, ": parameters.", key, " is not supported by Ferry"));
    }
  }
  return absl::OkStatus();
}

void EncodeTyped(const Tensor& t, InferTensorContents* c) {
  switch (t.dtype()) {
    case DataType::kBool: {
      auto v = t.values<bool>();
      c->mutable_bool_contents()->Add(v.begin(), v.end());
      break;
    }
    case DataType::kInt8: {
      auto v = t.values<int8_t>();
      c->mutable_int_contents()->Add(v.begin(), v.end());
      break;
    }
    case DataType::kInt16: {
      auto v = t.values<int16_t>();
      c->mutable_int_contents()->Add(v.begin(), v.end());
      break;
    }
    case DataType::kInt32: {
      auto v = t.values<int32_t>();
      c->mutable_int_contents()->Add(v.begin(), v.end());
      break;
    }
    case DataType::kInt64: {
      auto v = t.values<int64_t>();
      c->mutable_int64_contents()->Add(v.begin(), v.end());
      break;
    }
    case DataType::kUint8: {
      auto v = t.values<uint8_t>();
      c->mutable_uint_contents()->Add(v.begin(), v.end());
      break;
    }
    case DataType::kUint16: {
      auto v = t.values<uint16_t>();
      c->mutable_uint_contents()->Add(v.begin(), v.end());
      break;
    }
    case DataType::kUint32: {
      auto v = t.values<uint32_t>();
      c->mutable_uint_contents()->Add(v.begin(), v.end());
      break;
    }
    case DataType::kUint64: {
      auto v = t.values<uint64_t>();
      c->mutable_uint64_contents()->Add(v.begin(), v.end());
      break;
    }
    case DataType::kFp32: {
      auto v = t.values<float>();
      c->mutable_fp32_contents()->Add(v.begin(), v.end());
      break;
    }
    case DataType::kFp64: {
      auto v = t.values<double>();
      c->mutable_fp64_contents()->Add(v.begin(), v.end());
      break;
    }
    case DataType::kBytes:
      for (absl::string_view s : t.strings()) {
        c->add_bytes_contents(s.data(), s.size());
      }
      break;
    case DataType::kFp16:  // never typed: the caller switches to raw
      break;
  }
}

}  // namespace

absl::StatusOr<InferenceRequest> InferRequestFromProto(
    ModelInferRequest* proto) {
  InferenceRequest request;
  request.id = proto->id();

  for (const auto& [key, value] : proto->parameters()) {
    if (key == "priority") {
      ASSIGN_OR_RETURN(request.priority,
                       UintParameter("parameters.priority", value));
    } else if (key == "timeout") {
      ASSIGN_OR_RETURN(request.timeout_us,
                       UintParameter("parameters.timeout", value));
    }
  }

  const int num_inputs = proto->inputs_size();
  const int num_raw = proto->raw_input_contents_size();
  const bool raw = num_raw > 0;
  if (raw && num_raw != num_inputs) {
    return absl::InvalidArgumentError(absl::StrCat(
        "raw_input_contents has ", num_raw, " entries but the request has ",
        num_inputs, " inputs; send one per input, in order"));
  }
  request.inputs.reserve(num_inputs);
  for (int i = 0; i < num_inputs; ++i) {
    ModelInferRequest::InferInputTensor* in = proto->mutable_inputs(i);
    const std::string where =
        absl::StrCat("inputs[", i, "] '", in->name(), "'");
    if (in->name().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("inputs[", i, "]: name is empty"));
    }
    RETURN_IF_ERROR(CheckUnsupported(where, in->parameters()));
    absl::StatusOr<DataType> dtype = DataTypeFromString(in->datatype());
    if (!dtype.ok()) return Invalid(where, dtype.status().message());
    Shape shape(in->shape().begin(), in->shape().end());
    RETURN_IF_ERROR(ElementCount(where, shape).status());

    if (raw) {
      if (in->has_contents() && !FilledFields(in->contents()).empty()) {
        return Invalid(where,
                       "has contents while the request has raw_input_contents; "
                       "use one or the other for all inputs");
      }
      std::string bytes = std::move(*proto->mutable_raw_input_contents(i));
      absl::StatusOr<Tensor> t = Tensor::FromBytes(
          in->name(), *dtype, std::move(shape), std::move(bytes));
      if (!t.ok()) {
        return Invalid(absl::StrCat("raw_input_contents[", i, "] (input '",
                                    in->name(), "')"),
                       t.status().message());
      }
      request.inputs.push_back(*std::move(t));
    } else {
      ASSIGN_OR_RETURN(Tensor t,
                       DecodeTyped(where, in, *dtype, std::move(shape)));
      request.inputs.push_back(std::move(t));
    }
  }

  request.outputs.reserve(proto->outputs_size());
  for (int i = 0; i < proto->outputs_size(); ++i) {
    const auto& out = proto->outputs(i);
    const std::string where =
        absl::StrCat("outputs[", i, "] '", out.name(), "'");
    if (out.name().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("outputs[", i, "]: name is empty"));
    }
    RETURN_IF_ERROR(CheckUnsupported(where, out.parameters()));
    RequestedOutput requested{out.name(), std::nullopt};
    if (auto it = out.parameters().find("binary_data");
        it != out.parameters().end() &&
        it->second.parameter_choice_case() == InferParameter::kBoolParam) {
      requested.binary_data = it->second.bool_param();
    }
    request.outputs.push_back(std::move(requested));
  }
  return request;
}

void InferResponseToProto(const InferenceResponse& response, bool raw,
                          ModelInferResponse* proto) {
  proto->set_model_name(response.model_name);
  proto->set_model_version(response.model_version);
  proto->set_id(response.id);
  for (const Tensor& t : response.outputs) {
    if (ContentsField(t.dtype()).empty()) raw = true;
  }
  for (const Tensor& t : response.outputs) {
    ModelInferResponse::InferOutputTensor* out = proto->add_outputs();
    out->set_name(t.name());
    out->set_datatype(std::string(ToString(t.dtype())));
    out->mutable_shape()->Add(t.shape().begin(), t.shape().end());
    if (raw) {
      proto->add_raw_output_contents(reinterpret_cast<const char*>(t.data()),
                                     t.byte_size());
    } else {
      EncodeTyped(t, out->mutable_contents());
    }
  }
}

absl::StatusOr<std::optional<int64_t>> ParseModelVersion(
    absl::string_view field, const std::string& version) {
  if (version.empty()) return std::nullopt;
  int64_t v = 0;
  if (!absl::SimpleAtoi(version, &v) || v <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, " '", version, "' is not a version number (1, 2, ...)"));
  }
  return v;
}

void StatisticsToProto(const ModelVersionStatistics& stats,
                       inference::ModelStatistics* proto) {
  const InferenceStatistics summary = SummarizeStatistics(stats);
  proto->set_name(summary.name);
  proto->set_version(std::to_string(summary.version));
  proto->set_last_inference(summary.last_inference_ms);
  proto->set_inference_count(summary.inference_count);
  proto->set_execution_count(summary.execution_count);
  inference::InferStatistics* infer = proto->mutable_inference_stats();
  auto set = [](const DurationStatistic& d, inference::StatisticDuration* out) {
    out->set_count(d.count);
    out->set_ns(d.ns);
  };
  set(summary.success, infer->mutable_success());
  set(summary.fail, infer->mutable_fail());
  set(summary.queue, infer->mutable_queue());
  set(summary.compute_infer, infer->mutable_compute_infer());
}

void MetadataToProto(const ModelOptions& options,
                     inference::ModelMetadataResponse* proto) {
  proto->set_name(options.name);
  proto->set_platform(options.platform);
  auto add = [&](const TensorSpec& spec,
                 inference::ModelMetadataResponse::TensorMetadata* out) {
    out->set_name(spec.name);
    out->set_datatype(std::string(ToString(spec.dtype)));
    if (options.max_batch_size > 0) out->add_shape(-1);
    out->mutable_shape()->Add(spec.dims.begin(), spec.dims.end());
  };
  for (const TensorSpec& in : options.inputs) add(in, proto->add_inputs());
  for (const TensorSpec& out : options.outputs) add(out, proto->add_outputs());
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.raw_code()),
                      std::string(status.message()));
}

}  // namespace ferry
