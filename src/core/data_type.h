// SPDX-License-Identifier: Apache-2.0
// DataType: the element types of the KServe v2 protocol, with their wire names
// ("FP32"), Triton config names ("TYPE_FP32") and byte sizes. Plain values;
// thread-safe.
#ifndef FERRY_CORE_DATA_TYPE_H_
#define FERRY_CORE_DATA_TYPE_H_

#include <cstddef>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ferry {

enum class DataType {
  kBool,
  kUint8,
  kUint16,
  kUint32,
  kUint64,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kFp16,
  kFp32,
  kFp64,
  // Variable-length byte strings. In a Tensor each element is stored as a
  // 4-byte little-endian length followed by the bytes, as in KServe's binary
  // tensor extension.
  kBytes,
};

inline constexpr DataType kAllDataTypes[] = {
    DataType::kBool,   DataType::kUint8, DataType::kUint16, DataType::kUint32,
    DataType::kUint64, DataType::kInt8,  DataType::kInt16,  DataType::kInt32,
    DataType::kInt64,  DataType::kFp16,  DataType::kFp32,   DataType::kFp64,
    DataType::kBytes};

// KServe v2 name: "BOOL", "UINT8", ..., "FP32", "BYTES".
absl::string_view ToString(DataType type);
// Parses a KServe v2 name. INVALID_ARGUMENT names the offending string.
absl::StatusOr<DataType> DataTypeFromString(absl::string_view name);

// Triton config.pbtxt name: "TYPE_FP32", ..., "TYPE_STRING" for kBytes.
absl::string_view ToConfigString(DataType type);
absl::StatusOr<DataType> DataTypeFromConfigString(absl::string_view name);

// Bytes per element; 0 for kBytes, whose elements have no fixed size.
size_t ByteSize(DataType type);
inline bool IsFixedSize(DataType type) { return type != DataType::kBytes; }

// Maps a C++ element type to its DataType, for typed accessors.
template <typename T>
struct DataTypeOf;
template <>
struct DataTypeOf<bool> {
  static constexpr DataType value = DataType::kBool;
};
template <>
struct DataTypeOf<uint8_t> {
  static constexpr DataType value = DataType::kUint8;
};
template <>
struct DataTypeOf<uint16_t> {
  static constexpr DataType value = DataType::kUint16;
};
template <>
struct DataTypeOf<uint32_t> {
  static constexpr DataType value = DataType::kUint32;
};
template <>
struct DataTypeOf<uint64_t> {
  static constexpr DataType value = DataType::kUint64;
};
template <>
struct DataTypeOf<int8_t> {
  static constexpr DataType value = DataType::kInt8;
};
template <>
struct DataTypeOf<int16_t> {
  static constexpr DataType value = DataType::kInt16;
};
template <>
struct DataTypeOf<int32_t> {
  static constexpr DataType value = DataType::kInt32;
};
template <>
struct DataTypeOf<int64_t> {
  static constexpr DataType value = DataType::kInt64;
};
template <>
struct DataTypeOf<float> {
  static constexpr DataType value = DataType::kFp32;
};
template <>
struct DataTypeOf<double> {
  static constexpr DataType value = DataType::kFp64;
};

}  // namespace ferry

#endif  // FERRY_CORE_DATA_TYPE_H_
