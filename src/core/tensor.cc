// SPDX-License-Identifier: Apache-2.0
#include "core/tensor.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/logging.h"
#include "core/status_macros.h"

namespace ferry {
namespace {

absl::Status ValidateShape(absl::string_view name,
                           absl::Span<const int64_t> shape) {
  for (int64_t d : shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", name, "': shape ", ShapeToString(shape),
                       " has a negative dimension"));
    }
  }
  return absl::OkStatus();
}

uint32_t ReadLength(const std::byte* p) {
  // Little-endian regardless of the host.
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

}  // namespace

int64_t NumElements(absl::Span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeToString(absl::Span<const int64_t> shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

absl::Status ValidateTensorBytes(absl::string_view name, DataType dtype,
                                 absl::Span<const int64_t> shape,
                                 const void* data, size_t byte_size) {
  RETURN_IF_ERROR(ValidateShape(name, shape));
  const int64_t n = NumElements(shape);
  if (IsFixedSize(dtype)) {
    const size_t want = static_cast<size_t>(n) * ByteSize(dtype);
    if (want != byte_size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", name, "': shape ", ShapeToString(shape), " of ",
          ToString(dtype), " needs ", want, " bytes, got ", byte_size));
    }
    return absl::OkStatus();
  }
  const auto* p = static_cast<const std::byte*>(data);
  size_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (byte_size - offset < 4) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", name, "': BYTES data ends inside the length of element ",
          i, " of ", n));
    }
    const uint32_t len = ReadLength(p + offset);
    offset += 4;
    if (byte_size - offset < len) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", name, "': BYTES element ", i, " claims ",
                       len, " bytes but only ", byte_size - offset, " remain"));
    }
    offset += len;
  }
  if (offset != byte_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", name, "': ", byte_size - offset,
                     " bytes left over after the ", n,
                     " BYTES elements of shape ", ShapeToString(shape)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> Tensor::Uninitialized(std::string name, DataType dtype,
                                             Shape shape) {
  if (!IsFixedSize(dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", name, "': cannot preallocate BYTES storage"));
  }
  RETURN_IF_ERROR(ValidateShape(name, shape));
  const size_t size = static_cast<size_t>(NumElements(shape)) * ByteSize(dtype);
  std::shared_ptr<std::byte[]> storage =
      std::make_shared_for_overwrite<std::byte[]>(size == 0 ? 1 : size);
  const std::byte* data = storage.get();
  return Tensor(std::move(name), dtype, std::move(shape), std::move(storage),
                data, size, /*owned=*/true);
}

absl::StatusOr<Tensor> Tensor::Zeros(std::string name, DataType dtype,
                                     Shape shape) {
  ASSIGN_OR_RETURN(Tensor t,
                   Uninitialized(std::move(name), dtype, std::move(shape)));
  if (t.byte_size_ > 0) std::memset(t.mutable_data(), 0, t.byte_size_);
  return t;
}

absl::StatusOr<Tensor> Tensor::FromBytes(std::string name, DataType dtype,
                                         Shape shape, std::string bytes) {
  RETURN_IF_ERROR(
      ValidateTensorBytes(name, dtype, shape, bytes.data(), bytes.size()));
  return OwnBytes(std::move(name), dtype, std::move(shape), std::move(bytes));
}

absl::StatusOr<Tensor> Tensor::Borrow(std::string name, DataType dtype,
                                      Shape shape, const void* data,
                                      size_t byte_size,
                                      std::shared_ptr<const void> keepalive) {
  RETURN_IF_ERROR(ValidateTensorBytes(name, dtype, shape, data, byte_size));
  return Tensor(std::move(name), dtype, std::move(shape), std::move(keepalive),
                static_cast<const std::byte*>(data), byte_size,
                /*owned=*/false);
}

absl::StatusOr<Tensor> Tensor::FromStrings(
    std::string name, Shape shape, absl::Span<const std::string> values) {
  std::string bytes;
  for (const std::string& v : values) {
    const uint32_t len = static_cast<uint32_t>(v.size());
    const char prefix[4] = {static_cast<char>(len & 0xff),
                            static_cast<char>(len >> 8 & 0xff),
                            static_cast<char>(len >> 16 & 0xff),
                            static_cast<char>(len >> 24 & 0xff)};
    bytes.append(prefix, 4);
    bytes.append(v);
  }
  return FromBytes(std::move(name), DataType::kBytes, std::move(shape),
                   std::move(bytes));
}

Tensor Tensor::Clone() const {
  return OwnBytes(
      name_, dtype_, shape_,
      std::string(reinterpret_cast<const char*>(data_), byte_size_));
}

Tensor Tensor::OwnBytes(std::string name, DataType dtype, Shape shape,
                        std::string bytes) {
  auto storage = std::make_shared<std::string>(std::move(bytes));
  const auto* data = reinterpret_cast<const std::byte*>(storage->data());
  const size_t size = storage->size();
  return Tensor(std::move(name), dtype, std::move(shape), std::move(storage),
                data, size, /*owned=*/true);
}

Tensor::Tensor(std::string name, DataType dtype, Shape shape,
               std::shared_ptr<const void> storage, const std::byte* data,
               size_t byte_size, bool owned)
    : name_(std::move(name)),
      dtype_(dtype),
      shape_(std::move(shape)),
      storage_(std::move(storage)),
      data_(data),
      byte_size_(byte_size),
      owned_(owned) {}

std::vector<absl::string_view> Tensor::strings() const {
  CheckType(DataType::kBytes);
  std::vector<absl::string_view> out;
  size_t offset = 0;
  const auto* base = reinterpret_cast<const char*>(data_);
  while (offset + 4 <= byte_size_) {
    const uint32_t len = ReadLength(data_ + offset);
    out.emplace_back(base + offset + 4, len);
    offset += 4 + len;
  }
  return out;
}

std::string Tensor::DebugString() const {
  return absl::StrCat(name_, ": ", ToString(dtype_), " ",
                      ShapeToString(shape_));
}

void Tensor::CheckType(DataType expected) const {
  FERRY_CHECK(dtype_ == expected, "tensor '", name_, "' is ", ToString(dtype_),
              ", accessed as ", ToString(expected));
}

}  // namespace ferry
