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

absl::Status ParseShapeFlag(
    absl::string_view text,
    std::map<std::string, std::vector<DimRange>>* shapes) {
  const size_t colon = text.rfind(':');
  auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("--shape '", text,
                     "': want NAME:D1,D2,... with each D a size or a range "
                     "LO-HI (e.g. input_ids:64 or input_ids:8-128)"));
  };
  if (colon == absl::string_view::npos || colon == 0) return bad();
  std::vector<DimRange> dims;
  for (absl::string_view d : absl::StrSplit(text.substr(colon + 1), ',')) {
    DimRange r;
    const size_t dash = d.find('-');
    if (dash == absl::string_view::npos) {
      if (!absl::SimpleAtoi(d, &r.lo)) return bad();
      r.hi = r.lo;
    } else if (!absl::SimpleAtoi(d.substr(0, dash), &r.lo) ||
               !absl::SimpleAtoi(d.substr(dash + 1), &r.hi)) {
      return bad();
    }
    if (r.lo <= 0 || r.hi < r.lo) return bad();
    dims.push_back(r);
  }
  (*shapes)[std::string(text.substr(0, colon))] = std::move(dims);
  return absl::OkStatus();
}

bool HasRanges(const std::map<std::string, std::vector<DimRange>>& shapes) {
  for (const auto& [name, dims] : shapes) {
    for (const DimRange& d : dims) {
      if (d.lo != d.hi) return true;
    }
  }
  return false;
}

absl::StatusOr<std::vector<Tensor>> RandomInputs(
    const std::vector<InputSpec>& inputs, const RandomInputOptions& options) {
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int64_t> ints(
      0, std::max<int64_t>(options.int_max, 1) - 1);
  std::vector<Tensor> tensors;
  // One draw per distinct range, shared by the inputs that name it.
  std::map<std::pair<int64_t, int64_t>, int64_t> drawn;
  auto draw = [&](const DimRange& r) {
    if (r.lo == r.hi) return r.lo;
    auto [it, fresh] = drawn.try_emplace({r.lo, r.hi}, 0);
    if (fresh) {
      it->second = std::uniform_int_distribution<int64_t>(r.lo, r.hi)(rng);
    }
    return it->second;
  };
  for (const InputSpec& in : inputs) {
    Shape shape = in.shape;
    const bool batched = !shape.empty() && shape[0] == -1;
    auto given = options.shapes.find(in.name);
    if (given != options.shapes.end()) {
      shape.clear();
      if (batched) shape.push_back(-1);
      for (const DimRange& r : given->second) shape.push_back(draw(r));
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
