// SPDX-License-Identifier: Apache-2.0
#include "loadgen/request_data.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/half.h"
#include "core/status_macros.h"
#include "simdjson.h"

namespace ferry {
namespace {

std::string ShapeText(const Shape& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

template <typename T, typename Gen>
void Fill(Tensor* t, Gen&& gen) {
  for (T& v : t->mutable_values<T>()) v = static_cast<T>(gen());
}

}  // namespace

absl::StatusOr<std::vector<InputSpec>> ParseModelMetadataInputs(
    absl::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError("model metadata is not JSON");
  }
  simdjson::dom::array inputs;
  if (doc["inputs"].get_array().get(inputs) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError("model metadata has no 'inputs' array");
  }
  std::vector<InputSpec> specs;
  size_t i = 0;
  for (simdjson::dom::element e : inputs) {
    const std::string where = absl::StrCat("model metadata inputs[", i++, "]");
    std::string_view name;
    std::string_view dtype;
    simdjson::dom::array shape;
    if (e["name"].get_string().get(name) != simdjson::SUCCESS ||
        e["datatype"].get_string().get(dtype) != simdjson::SUCCESS ||
        e["shape"].get_array().get(shape) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": needs name, datatype and shape"));
    }
    InputSpec spec;
    spec.name = std::string(name);
    absl::StatusOr<DataType> type =
        DataTypeFromString(absl::string_view(dtype.data(), dtype.size()));
    if (!type.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " '", spec.name, "': ", type.status().message()));
    }
    spec.dtype = *type;
    for (simdjson::dom::element d : shape) {
      int64_t dim;
      if (d.get_int64().get(dim) != simdjson::SUCCESS) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, " '", spec.name, "': shape is not integers"));
      }
      spec.shape.push_back(dim);
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

absl::Status ParseShapeFlag(absl::string_view text,
                            std::map<std::string, Shape>* shapes) {
  const size_t colon = text.rfind(':');
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "--shape '", text, "': want NAME:D1,D2,... (e.g. input_ids:64)"));
  };
  if (colon == absl::string_view::npos || colon == 0) return bad();
  Shape shape;
  for (absl::string_view d : absl::StrSplit(text.substr(colon + 1), ',')) {
    int64_t v;
    if (!absl::SimpleAtoi(d, &v) || v <= 0) return bad();
    shape.push_back(v);
  }
  (*shapes)[std::string(text.substr(0, colon))] = std::move(shape);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> RandomInputs(
    const std::vector<InputSpec>& inputs, const RandomInputOptions& options) {
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int64_t> ints(
      0, std::max<int64_t>(options.int_max, 1) - 1);
  std::vector<Tensor> tensors;
  for (const InputSpec& in : inputs) {
    Shape shape = in.shape;
    const bool batched = !shape.empty() && shape[0] == -1;
    auto given = options.shapes.find(in.name);
    if (given != options.shapes.end()) {
      shape = given->second;
      if (batched) shape.insert(shape.begin(), -1);
    }
    for (size_t d = 0; d < shape.size(); ++d) {
      if (d == 0 && batched) {
        shape[0] = options.batch_rows;
      } else if (shape[d] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("input '", in.name, "' has a variable dimension (",
                         ShapeText(in.shape), "); give its shape",
                         batched ? " without the batch dimension" : "",
                         ", e.g. --shape ", in.name, ":64"));
      }
    }
    if (in.dtype == DataType::kBytes) {
      std::vector<std::string> values(NumElements(shape), "ferry");
      ASSIGN_OR_RETURN(Tensor t, Tensor::FromStrings(in.name, shape, values));
      tensors.push_back(std::move(t));
      continue;
    }
    ASSIGN_OR_RETURN(Tensor t, Tensor::Uninitialized(in.name, in.dtype, shape));
    auto real = [&] { return unit(rng); };
    auto integer = [&] { return ints(rng); };
    switch (in.dtype) {
      case DataType::kBool:
        Fill<bool>(&t, [&] { return unit(rng) < 0.5; });
        break;
      case DataType::kUint8:
        Fill<uint8_t>(&t, integer);
        break;
      case DataType::kUint16:
        Fill<uint16_t>(&t, integer);
        break;
      case DataType::kUint32:
        Fill<uint32_t>(&t, integer);
        break;
      case DataType::kUint64:
        Fill<uint64_t>(&t, integer);
        break;
      case DataType::kInt8:
        Fill<int8_t>(&t, integer);
        break;
      case DataType::kInt16:
        Fill<int16_t>(&t, integer);
        break;
      case DataType::kInt32:
        Fill<int32_t>(&t, integer);
        break;
      case DataType::kInt64:
        Fill<int64_t>(&t, integer);
        break;
      case DataType::kFp16:
        for (std::byte* p = t.mutable_data();
             p < t.mutable_data() + t.byte_size(); p += 2) {
          const uint16_t h = FloatToHalf(static_cast<float>(unit(rng)));
          std::memcpy(p, &h, 2);
        }
        break;
      case DataType::kFp32:
        Fill<float>(&t, real);
        break;
      case DataType::kFp64:
        Fill<double>(&t, real);
        break;
      case DataType::kBytes:
        break;
    }
    tensors.push_back(std::move(t));
  }
  return tensors;
}

}  // namespace ferry
