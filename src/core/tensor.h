// SPDX-License-Identifier: Apache-2.0
// Tensor: a named, typed, shaped block of contiguous bytes in row-major order.
//
// A Tensor either owns its bytes (allocated by Ferry, or moved in) or borrows
// them from somewhere else without copying: a request body, an engine's output
// buffer. A borrowed tensor may carry a keep-alive handle that holds the real
// owner (e.g. a libtorch tensor) alive for as long as any Tensor refers to it;
// without one the caller guarantees the lifetime. Tensors are move-only so that
// a copy of the data is always explicit (Clone()).
//
// BYTES tensors store each element as a 4-byte little-endian length and the
// bytes, the layout of KServe v2's binary tensor extension.
//
// Thread-safety: a const Tensor may be read from many threads; mutation needs
// one owner.
#ifndef FERRY_CORE_TENSOR_H_
#define FERRY_CORE_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/data_type.h"

namespace ferry {

using Shape = std::vector<int64_t>;

// Product of the dimensions (1 for a scalar). Dimensions must be non-negative.
int64_t NumElements(absl::Span<const int64_t> shape);
// "[2,3,224]".
std::string ShapeToString(absl::Span<const int64_t> shape);

class Tensor {
 public:
  Tensor() = default;
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  // Owned, zero-filled storage for a fixed-size type. INVALID_ARGUMENT for
  // BYTES or a negative dimension.
  static absl::StatusOr<Tensor> Zeros(std::string name, DataType dtype,
                                      Shape shape);

  // Owned storage whose contents the caller is about to overwrite completely.
  static absl::StatusOr<Tensor> Uninitialized(std::string name, DataType dtype,
                                              Shape shape);

  // Takes ownership of `bytes` (no copy), after checking that they hold exactly
  // the elements `shape` asks for.
  static absl::StatusOr<Tensor> FromBytes(std::string name, DataType dtype,
                                          Shape shape, std::string bytes);

  // Borrows `byte_size` bytes at `data` without copying. `keepalive`, if set,
  // is held for as long as the tensor (or a move of it) lives. The size is
  // validated as in FromBytes.
  static absl::StatusOr<Tensor> Borrow(
      std::string name, DataType dtype, Shape shape, const void* data,
      size_t byte_size, std::shared_ptr<const void> keepalive = nullptr);

  // Owned tensor from typed values; the element count must match the shape.
  template <typename T>
  static absl::StatusOr<Tensor> FromValues(std::string name, Shape shape,
                                           absl::Span<const T> values) {
    std::string bytes(values.size() * sizeof(T), '\0');
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return FromBytes(std::move(name), DataTypeOf<T>::value, std::move(shape),
                     std::move(bytes));
  }

  // BYTES tensor from strings.
  static absl::StatusOr<Tensor> FromStrings(
      std::string name, Shape shape, absl::Span<const std::string> values);

  // A deep copy into owned storage.
  Tensor Clone() const;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t num_elements() const { return NumElements(shape_); }
  size_t byte_size() const { return byte_size_; }
  const std::byte* data() const { return data_; }
  // Writable bytes; nullptr when the tensor borrows its data.
  std::byte* mutable_data() {
    return owned_ ? const_cast<std::byte*>(data_) : nullptr;
  }
  bool owns_data() const { return owned_; }

  // Typed views. The element type must match dtype() (programmer error
  // otherwise).
  template <typename T>
  absl::Span<const T> values() const {
    CheckType(DataTypeOf<T>::value);
    return absl::MakeConstSpan(reinterpret_cast<const T*>(data_),
                               byte_size_ / sizeof(T));
  }
  template <typename T>
  absl::Span<T> mutable_values() {
    CheckType(DataTypeOf<T>::value);
    return absl::MakeSpan(reinterpret_cast<T*>(mutable_data()),
                          owned_ ? byte_size_ / sizeof(T) : 0);
  }

  // Elements of a BYTES tensor as views into its storage.
  std::vector<absl::string_view> strings() const;

  // "name: FP32 [2,3]".
  std::string DebugString() const;

 private:
  Tensor(std::string name, DataType dtype, Shape shape,
         std::shared_ptr<const void> storage, const std::byte* data,
         size_t byte_size, bool owned);
  // Owned tensor over `bytes` (already validated).
  static Tensor OwnBytes(std::string name, DataType dtype, Shape shape,
                         std::string bytes);
  void CheckType(DataType expected) const;

  std::string name_;
  DataType dtype_ = DataType::kFp32;
  Shape shape_;
  std::shared_ptr<const void> storage_;  // owner of data_, if any
  const std::byte* data_ = nullptr;
  size_t byte_size_ = 0;
  bool owned_ = false;
};

// Checks that `byte_size` bytes at `data` hold exactly the elements of `shape`
// in `dtype`; the message names the tensor.
absl::Status ValidateTensorBytes(absl::string_view name, DataType dtype,
                                 absl::Span<const int64_t> shape,
                                 const void* data, size_t byte_size);

}  // namespace ferry

#endif  // FERRY_CORE_TENSOR_H_
