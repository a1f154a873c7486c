// SPDX-License-Identifier: Apache-2.0
#include "core/data_type.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace ferry {
namespace {

struct TypeInfo {
  DataType type;
  absl::string_view name;
  absl::string_view config_name;
  size_t size;
};

constexpr TypeInfo kTypeInfo[] = {
    {DataType::kBool, "BOOL", "TYPE_BOOL", 1},
    {DataType::kUint8, "UINT8", "TYPE_UINT8", 1},
    {DataType::kUint16, "UINT16", "TYPE_UINT16", 2},
    {DataType::kUint32, "UINT32", "TYPE_UINT32", 4},
    {DataType::kUint64, "UINT64", "TYPE_UINT64", 8},
    {DataType::kInt8, "INT8", "TYPE_INT8", 1},
    {DataType::kInt16, "INT16", "TYPE_INT16", 2},
    {DataType::kInt32, "INT32", "TYPE_INT32", 4},
    {DataType::kInt64, "INT64", "TYPE_INT64", 8},
    {DataType::kFp16, "FP16", "TYPE_FP16", 2},
    {DataType::kFp32, "FP32", "TYPE_FP32", 4},
    {DataType::kFp64, "FP64", "TYPE_FP64", 8},
    {DataType::kBytes, "BYTES", "TYPE_STRING", 0},
};

const TypeInfo& Info(DataType type) {
  return kTypeInfo[static_cast<int>(type)];
}

std::string KnownNames(bool config) {
  std::string out;
  for (const TypeInfo& info : kTypeInfo) {
    absl::StrAppend(&out, out.empty() ? "" : ", ",
                    config ? info.config_name : info.name);
  }
  return out;
}

}  // namespace

absl::string_view ToString(DataType type) { return Info(type).name; }
absl::string_view ToConfigString(DataType type) {
  return Info(type).config_name;
}
size_t ByteSize(DataType type) { return Info(type).size; }

absl::StatusOr<DataType> DataTypeFromString(absl::string_view name) {
  for (const TypeInfo& info : kTypeInfo) {
    if (info.name == name) return info.type;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown datatype \"", name, "\"; expected one of ", KnownNames(false)));
}

absl::StatusOr<DataType> DataTypeFromConfigString(absl::string_view name) {
  for (const TypeInfo& info : kTypeInfo) {
    if (info.config_name == name) return info.type;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown data_type \"", name, "\"; expected one of ", KnownNames(true)));
}

}  // namespace ferry
