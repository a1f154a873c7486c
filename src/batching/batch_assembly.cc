// SPDX-License-Identifier: Apache-2.0
#include "batching/batch_assembly.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "batching/split_rows.h"
#include "core/half.h"
#include "core/status_macros.h"

namespace ferry {
namespace {

constexpr char kPadValueKey[] = "pad_value";
constexpr char kMaskKey[] = "attention_mask_input";

// One element of the pad value in an input's data type.
struct PadBytes {
  std::array<std::byte, 8> bytes{};
  size_t size = 0;
  bool zero = true;
};

template <typename T>
bool FitsIn(double v) {
  if (std::isnan(v) || std::trunc(v) != v) return false;
  // 2^63 and 2^64 are exact doubles; the max of 64-bit types is not.
  if constexpr (sizeof(T) == 8) {
    const double limit =
        std::is_signed_v<T> ? 9223372036854775808.0 : 18446744073709551616.0;
    return v >= static_cast<double>(std::numeric_limits<T>::min()) && v < limit;
  } else {
    return v >= static_cast<double>(std::numeric_limits<T>::min()) &&
           v <= static_cast<double>(std::numeric_limits<T>::max());
  }
}

// Whether `v` is exactly representable as an element of `dtype` (any value
// for the floating types).
bool PadValueFits(DataType dtype, double v) {
  switch (dtype) {
    case DataType::kBool:
      return v == 0 || v == 1;
    case DataType::kUint8:
      return FitsIn<uint8_t>(v);
    case DataType::kUint16:
      return FitsIn<uint16_t>(v);
    case DataType::kUint32:
      return FitsIn<uint32_t>(v);
    case DataType::kUint64:
      return FitsIn<uint64_t>(v);
    case DataType::kInt8:
      return FitsIn<int8_t>(v);
    case DataType::kInt16:
      return FitsIn<int16_t>(v);
    case DataType::kInt32:
      return FitsIn<int32_t>(v);
    case DataType::kInt64:
      return FitsIn<int64_t>(v);
    case DataType::kFp16:
    case DataType::kFp32:
    case DataType::kFp64:
    case DataType::kBytes:
      return true;
  }
  return true;
}

// Saturating conversion, so that a PaddingOptions built by hand (not checked
// by FromModelOptions) cannot hit undefined behaviour.
template <typename T>
T Saturate(double v) {
  if (std::isnan(v)) return T{0};
  if (!FitsIn<T>(std::trunc(v))) {
    return v < 0 ? std::numeric_limits<T>::min()
                 : std::numeric_limits<T>::max();
  }
  return static_cast<T>(v);
}

template <typename T>
PadBytes PadOf(T value) {
  PadBytes pad;
  pad.size = sizeof(T);
  std::memcpy(pad.bytes.data(), &value, sizeof(T));
  for (size_t i = 0; i < sizeof(T); ++i) {
    if (pad.bytes[i] != std::byte{0}) pad.zero = false;
  }
  return pad;
}

PadBytes MakePad(DataType dtype, double v) {
  switch (dtype) {
    case DataType::kBool:
      return PadOf<uint8_t>(v != 0 ? 1 : 0);
    case DataType::kUint8:
      return PadOf(Saturate<uint8_t>(v));
    case DataType::kUint16:
      return PadOf(Saturate<uint16_t>(v));
    case DataType::kUint32:
      return PadOf(Saturate<uint32_t>(v));
    case DataType::kUint64:
      return PadOf(Saturate<uint64_t>(v));
    case DataType::kInt8:
      return PadOf(Saturate<int8_t>(v));
    case DataType::kInt16:
      return PadOf(Saturate<int16_t>(v));
    case DataType::kInt32:
      return PadOf(Saturate<int32_t>(v));
    case DataType::kInt64:
      return PadOf(Saturate<int64_t>(v));
    case DataType::kFp16:
      return PadOf<uint16_t>(FloatToHalf(static_cast<float>(v)));
    case DataType::kFp32:
      return PadOf(static_cast<float>(v));
    case DataType::kFp64:
      return PadOf(v);
    case DataType::kBytes:
      break;
  }
  return PadBytes{};
}

// Writes `count` copies of the pad element at `dst`, doubling the filled
// prefix with memcpy instead of a per-element loop.
void Fill(std::byte* dst, size_t count, const PadBytes& pad) {
  const size_t total = count * pad.size;
  if (total == 0) return;
  if (pad.zero) {
    std::memset(dst, 0, total);
    return;
  }
  std::memcpy(dst, pad.bytes.data(), pad.size);
  size_t done = pad.size;
  while (done < total) {
    const size_t n = std::min(done, total - done);
    std::memcpy(dst + done, dst, n);
    done += n;
  }
}

// Copies the box min(src_shape, dst_shape) (per dim) from `src` into `dst`,
// both row-major with the same rank; with `pad`, fills the rest of `dst`.
// Runs whose trailing dims agree are copied with one memcpy each.
class BoxCopier {
 public:
  BoxCopier(absl::Span<const int64_t> src_shape,
            absl::Span<const int64_t> dst_shape, size_t elem_size,
            const PadBytes* pad)
      : src_shape_(src_shape), dst_shape_(dst_shape), pad_(pad) {
    const size_t rank = dst_shape.size();
    src_stride_.assign(rank, elem_size);
    dst_stride_.assign(rank, elem_size);
    for (size_t k = rank; k-- > 1;) {
      src_stride_[k - 1] = src_stride_[k] * static_cast<size_t>(src_shape[k]);
      dst_stride_[k - 1] = dst_stride_[k] * static_cast<size_t>(dst_shape[k]);
    }
    equal_from_ = rank;
    while (equal_from_ > 0 &&
           src_shape[equal_from_ - 1] == dst_shape[equal_from_ - 1]) {
      --equal_from_;
    }
    elem_size_ = elem_size;
  }

  void Copy(const std::byte* src, std::byte* dst) const {
    if (dst_shape_.empty()) {
      std::memcpy(dst, src, elem_size_);
      return;
    }
    Level(0, src, dst);
  }

 private:
  void Level(size_t k, const std::byte* src, std::byte* dst) const {
    const int64_t n = std::min(src_shape_[k], dst_shape_[k]);
    if (k + 1 >= equal_from_) {
      // The dims after k agree, so these n slabs are contiguous in both.
      if (n > 0) std::memcpy(dst, src, static_cast<size_t>(n) * dst_stride_[k]);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        Level(k + 1, src + static_cast<size_t>(i) * src_stride_[k],
              dst + static_cast<size_t>(i) * dst_stride_[k]);
      }
    }
    if (pad_ != nullptr && dst_shape_[k] > n) {
      Fill(dst + static_cast<size_t>(n) * dst_stride_[k],
           static_cast<size_t>(dst_shape_[k] - n) * dst_stride_[k] / elem_size_,
           *pad_);
    }
  }

  absl::Span<const int64_t> src_shape_;
  absl::Span<const int64_t> dst_shape_;
  const PadBytes* pad_;
  std::vector<size_t> src_stride_;
  std::vector<size_t> dst_stride_;
  size_t equal_from_ = 0;  // dims [equal_from_, rank) agree
  size_t elem_size_ = 0;
};

const TensorSpec* FindSpec(const std::vector<TensorSpec>& specs,
                           absl::string_view name) {
  for (const TensorSpec& s : specs) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool HasVariableDim(const TensorSpec& spec) {
  return std::find(spec.dims.begin(), spec.dims.end(), -1) != spec.dims.end();
}

// The size all of a request's variable input dims share; nullopt when they
// disagree or there is none. `specs[j]` is the spec of inputs[j].
std::optional<int64_t> SequenceLength(absl::Span<const TensorSpec* const> specs,
                                      const std::vector<Tensor>& inputs) {
  std::optional<int64_t> length;
  for (size_t j = 0; j < inputs.size(); ++j) {
    const std::vector<int64_t>& dims = specs[j]->dims;
    for (size_t k = 0; k < dims.size(); ++k) {
      if (dims[k] != -1) continue;
      const int64_t size = inputs[j].shape()[k + 1];
      if (length.has_value() && *length != size) return std::nullopt;
      length = size;
    }
  }
  return length;
}

// Checks that every request carries the inputs request 0 carries, with equal
// data types, ranks and fixed dims, and one row count over its inputs. Fills
// `specs` (per input) and `batch->rows` / `row_offsets`.
absl::Status CheckRequests(
    const ModelOptions& options,
    absl::Span<const std::vector<Tensor>* const> requests,
    std::vector<const TensorSpec*>* specs, AssembledBatch* batch) {
  const std::vector<Tensor>& first = *requests[0];
  if (first.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", options.name, "': request 0 has no inputs to batch"));
  }
  for (const Tensor& t : first) {
    const TensorSpec* spec = FindSpec(options.inputs, t.name());
    if (spec == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", t.name(), "' is not an input of model '",
                       options.name, "'"));
    }
    if (t.shape().size() != spec->dims.size() + 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", t.name(), "': shape ", ShapeToString(t.shape()),
          " has no batch dimension in front of the config's dims ",
          ShapeToString(spec->dims)));
    }
    specs->push_back(spec);
  }
  int64_t offset = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    const std::vector<Tensor>& inputs = *requests[i];
    if (inputs.size() != first.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request ", i, " has ", inputs.size(), " inputs, request 0 has ",
          first.size(), "; requests of one batch must carry the same inputs"));
    }
    const int64_t rows = inputs[0].shape().empty() ? 0 : inputs[0].shape()[0];
    for (size_t j = 0; j < inputs.size(); ++j) {
      const Tensor& t = inputs[j];
      const Tensor& t0 = first[j];
      if (t.name() != t0.name() || t.dtype() != t0.dtype() ||
          t.shape().size() != t0.shape().size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "request ", i, " input ", j, " is ", t.DebugString(),
            ", request 0 has ", t0.DebugString(), "; they cannot be batched"));
      }
      if (t.shape()[0] != rows) {
        return absl::InvalidArgumentError(absl::StrCat(
            "request ", i, " input '", t.name(), "': batch dimension ",
            t.shape()[0], " differs from the request's ", rows, " rows"));
      }
      const std::vector<int64_t>& dims = (*specs)[j]->dims;
      for (size_t k = 0; k < dims.size(); ++k) {
        if (dims[k] != -1 && t.shape()[k + 1] != t0.shape()[k + 1]) {
          return absl::InvalidArgumentError(absl::StrCat(
              "request ", i, " input '", t.name(), "': shape ",
              ShapeToString(t.shape()), " differs from request 0's ",
              ShapeToString(t0.shape()), " in fixed dimension ", k + 1));
        }
      }
    }
    batch->row_offsets.push_back(offset);
    batch->rows.push_back(rows);
    offset += rows;
  }
  return absl::OkStatus();
}

// Concatenates input `j` of every request into an owned BYTES tensor.
absl::StatusOr<Tensor> ConcatBytesInput(
    absl::Span<const std::vector<Tensor>* const> requests, size_t j,
    Shape shape) {
  const Tensor& t0 = (*requests[0])[j];
  size_t total = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    const Tensor& t = (*requests[i])[j];
    if (!std::equal(t.shape().begin() + 1, t.shape().end(),
                    t0.shape().begin() + 1)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "BYTES input '", t.name(), "' cannot be padded: request ", i,
          " has shape ", ShapeToString(t.shape()), ", request 0 has ",
          ShapeToString(t0.shape())));
    }
    total += t.byte_size();
  }
  std::string bytes;
  bytes.reserve(total);
  for (const std::vector<Tensor>* r : requests) {
    const Tensor& t = (*r)[j];
    bytes.append(reinterpret_cast<const char*>(t.data()), t.byte_size());
  }
  return Tensor::FromBytes(t0.name(), DataType::kBytes, std::move(shape),
                           std::move(bytes));
}

}  // namespace

absl::StatusOr<PaddingOptions> PaddingOptions::FromModelOptions(
    const ModelOptions& options) {
  PaddingOptions padding;
  if (std::optional<std::string> v = options.parameter(kPadValueKey)) {
    if (!absl::SimpleAtod(*v, &padding.pad_value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("model '", options.name, "': parameters.", kPadValueKey,
                       " is \"", *v, "\", not a number"));
    }
  }
  if (std::optional<std::string> v = options.parameter(kMaskKey)) {
    const TensorSpec* spec = FindSpec(options.inputs, *v);
    if (spec == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("model '", options.name, "': parameters.", kMaskKey,
                       " is \"", *v, "\", which is not an input of the model"));
    }
    if (spec->dtype == DataType::kBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model '", options.name, "': parameters.", kMaskKey, " names input '",
          *v, "', which is BYTES; an attention mask must be numeric"));
    }
    padding.attention_mask_input = *v;
  }
  if (options.max_batch_size > 0) {
    for (const TensorSpec& spec : options.inputs) {
      if (!HasVariableDim(spec) || spec.name == padding.attention_mask_input ||
          PadValueFits(spec.dtype, padding.pad_value)) {
        continue;
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "model '", options.name, "': parameters.", kPadValueKey, " ",
          padding.pad_value, " does not fit input '", spec.name, "' of type ",
          ToString(spec.dtype), ", which is padded"));
    }
  }
  return padding;
}

double AssembledBatch::padding_waste() const {
  if (total_elements == 0) return 0;
  return static_cast<double>(padded_elements) /
         static_cast<double>(total_elements);
}

int64_t VariableLength(const ModelOptions& options,
                       absl::Span<const Tensor> inputs) {
  const size_t batch_dims = options.max_batch_size > 0 ? 1 : 0;
  int64_t length = 0;
  for (const Tensor& t : inputs) {
    const TensorSpec* spec = FindSpec(options.inputs, t.name());
    if (spec == nullptr || !HasVariableDim(*spec) ||
        t.shape().size() != spec->dims.size() + batch_dims) {
      continue;
    }
    int64_t product = 1;
    for (size_t k = 0; k < spec->dims.size(); ++k) {
      if (spec->dims[k] == -1) product *= t.shape()[k + batch_dims];
    }
    length = std::max(length, product);
  }
  return length;
}

uint64_t BatchKey(const ModelOptions& options,
                  absl::Span<const Tensor> inputs) {
  // Most models have neither optional nor variable BYTES inputs: one key, and
  // no per-request look-ups.
  const bool keyed = std::any_of(
      options.inputs.begin(), options.inputs.end(), [](const TensorSpec& s) {
        return s.optional || (!IsFixedSize(s.dtype) && HasVariableDim(s));
      });
  if (!keyed) return 0;
  const bool all_present = inputs.size() == options.inputs.size();
  uint64_t key = 0;
  auto mix = [&key](uint64_t v) {
    key = (key ^ v) * 0x100000001b3ULL;  // FNV-1a step
  };
  const size_t batch_dims = options.max_batch_size > 0 ? 1 : 0;
  for (const Tensor& t : inputs) {
    const TensorSpec* spec = FindSpec(options.inputs, t.name());
    if (spec == nullptr) continue;
    if (!all_present) {
      mix(static_cast<uint64_t>(spec - options.inputs.data()) + 1);
    }
    if (IsFixedSize(t.dtype()) || !HasVariableDim(*spec)) continue;
    for (size_t k = batch_dims; k < t.shape().size(); ++k)
      mix(static_cast<uint64_t>(t.shape()[k]) + 0x9e3779b97f4a7c15ULL);
  }
  return key;
}

absl::StatusOr<AssembledBatch> AssembleBatch(
    const ModelOptions& options, const PaddingOptions& padding,
    absl::Span<const std::vector<Tensor>* const> requests) {
  if (requests.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model '", options.name, "': no requests to batch"));
  }
  AssembledBatch batch;
  if (options.max_batch_size <= 0) {
    if (requests.size() > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("model '", options.name,
                       "' has max_batch_size 0 and does not batch; ", "got ",
                       requests.size(), " requests"));
    }
    for (const Tensor& t : *requests[0]) {
      ASSIGN_OR_RETURN(Tensor view,
                       Tensor::Borrow(t.name(), t.dtype(), t.shape(), t.data(),
                                      t.byte_size()));
      batch.total_elements += view.num_elements();
      batch.inputs.push_back(std::move(view));
    }
    batch.row_offsets = {0};
    batch.rows = {1};
    return batch;
  }

  std::vector<const TensorSpec*> specs;
  RETURN_IF_ERROR(CheckRequests(options, requests, &specs, &batch));
  const std::vector<Tensor>& first = *requests[0];
  const int64_t total_rows = batch.total_rows();
  batch.inputs.reserve(first.size());

  for (size_t j = 0; j < first.size(); ++j) {
    const Tensor& t0 = first[j];
    Shape shape = t0.shape();
    shape[0] = total_rows;
    for (const std::vector<Tensor>* r : requests) {
      const Shape& s = (*r)[j].shape();
      for (size_t k = 1; k < s.size(); ++k) shape[k] = std::max(shape[k], s[k]);
    }
    const int64_t elements = NumElements(shape);
    batch.total_elements += elements;

    Tensor out;
    if (requests.size() == 1) {
      ASSIGN_OR_RETURN(out, Tensor::Borrow(t0.name(), t0.dtype(), shape,
                                           t0.data(), t0.byte_size()));
    } else if (!IsFixedSize(t0.dtype())) {
      ASSIGN_OR_RETURN(out, ConcatBytesInput(requests, j, shape));
    } else {
      ASSIGN_OR_RETURN(out,
                       Tensor::Uninitialized(t0.name(), t0.dtype(), shape));
      const PadBytes pad = MakePad(
          t0.dtype(),
          t0.name() == padding.attention_mask_input ? 0.0 : padding.pad_value);
      const size_t row_bytes =
          total_rows == 0 ? 0
                          : out.byte_size() / static_cast<size_t>(total_rows);
      Shape slice = shape;
      for (size_t i = 0; i < requests.size(); ++i) {
        const Tensor& t = (*requests[i])[j];
        std::byte* dst = out.mutable_data() +
                         static_cast<size_t>(batch.row_offsets[i]) * row_bytes;
        slice[0] = batch.rows[i];
        if (t.shape() == slice) {
          if (t.byte_size() > 0) std::memcpy(dst, t.data(), t.byte_size());
          continue;
        }
        BoxCopier(t.shape(), slice, ByteSize(t0.dtype()), &pad)
            .Copy(t.data(), dst);
        batch.padded_elements += NumElements(slice) - t.num_elements();
      }
    }
    batch.inputs.push_back(std::move(out));
  }

  std::vector<int64_t> lengths;
  lengths.reserve(requests.size());
  for (const std::vector<Tensor>* r : requests) {
    std::optional<int64_t> length = SequenceLength(specs, *r);
    if (!length.has_value()) return batch;
    lengths.push_back(*length);
  }
  batch.padded_length = *std::max_element(lengths.begin(), lengths.end());
  batch.lengths = std::move(lengths);
  return batch;
}

absl::StatusOr<std::vector<std::vector<Tensor>>> SplitOutputs(
    const ModelOptions& options, const AssembledBatch& batch,
    std::vector<Tensor> outputs) {
  if (outputs.size() != options.outputs.size()) {
    return absl::InternalError(absl::StrCat(
        "model '", options.name, "': engine returned ", outputs.size(),
        " outputs, the config declares ", options.outputs.size()));
  }
  const int64_t total_rows = batch.total_rows();
  const bool batched = options.max_batch_size > 0;
  for (size_t o = 0; o < outputs.size(); ++o) {
    const Tensor& t = outputs[o];
    if (t.name() != options.outputs[o].name) {
      return absl::InternalError(
          absl::StrCat("model '", options.name, "': engine output ", o,
                       " is named '", t.name(), "', the config's output ", o,
                       " is '", options.outputs[o].name, "'"));
    }
    if (batched && (t.shape().empty() || t.shape()[0] != total_rows)) {
      return absl::InternalError(absl::StrCat(
          "output '", t.name(), "': engine returned shape ",
          ShapeToString(t.shape()),
          ", whose dimension 0 should be the batch's ", total_rows, " rows"));
    }
  }
  std::vector<std::vector<Tensor>> result;
  if (!batched || batch.rows.size() == 1) {
    result.push_back(std::move(outputs));
    return result;
  }

  // Per output: the dims cut back to each request's sequence length.
  std::vector<std::vector<size_t>> cut(outputs.size());
  if (batch.padded_length >= 0) {
    for (size_t o = 0; o < outputs.size(); ++o) {
      const Tensor& t = outputs[o];
      const std::vector<int64_t>& dims = options.outputs[o].dims;
      if (!IsFixedSize(t.dtype())) continue;
      for (size_t k = 1; k < t.shape().size() && k - 1 < dims.size(); ++k) {
        if (dims[k - 1] == -1 && t.shape()[k] == batch.padded_length) {
          cut[o].push_back(k);
        }
      }
    }
  }

  std::vector<int64_t> boundaries = batch.row_offsets;
  boundaries.push_back(total_rows);
  std::vector<std::vector<size_t>> offsets;
  offsets.reserve(outputs.size());
  for (const Tensor& t : outputs)
    offsets.push_back(RowByteOffsets(t, total_rows, boundaries));
  auto keepalive = std::make_shared<std::vector<Tensor>>(std::move(outputs));

  result.resize(batch.rows.size());
  for (size_t i = 0; i < batch.rows.size(); ++i) {
    result[i].reserve(keepalive->size());
    for (size_t o = 0; o < keepalive->size(); ++o) {
      const Tensor& t = (*keepalive)[o];
      const std::byte* data = t.data() + offsets[o][i];
      Shape shape = t.shape();
      shape[0] = batch.rows[i];
      if (cut[o].empty() || batch.lengths[i] == batch.padded_length) {
        ASSIGN_OR_RETURN(
            Tensor slice,
            Tensor::Borrow(t.name(), t.dtype(), std::move(shape), data,
                           offsets[o][i + 1] - offsets[o][i], keepalive));
        result[i].push_back(std::move(slice));
        continue;
      }
      Shape cut_shape = shape;
      for (size_t k : cut[o]) cut_shape[k] = batch.lengths[i];
      ASSIGN_OR_RETURN(Tensor copy,
                       Tensor::Uninitialized(t.name(), t.dtype(), cut_shape));
      BoxCopier(shape, cut_shape, ByteSize(t.dtype()), nullptr)
          .Copy(data, copy.mutable_data());
      result[i].push_back(std::move(copy));
    }
  }
  return result;
}

}  // namespace ferry
