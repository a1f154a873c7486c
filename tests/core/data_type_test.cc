// SPDX-License-Identifier: Apache-2.0
#include "core/data_type.h"

#include "gtest/gtest.h"

namespace ferry {
namespace {

TEST(DataTypeTest, EveryTypeRoundTripsThroughBothNames) {
  for (DataType t : kAllDataTypes) {
    EXPECT_EQ(*DataTypeFromString(ToString(t)), t) << ToString(t);
    EXPECT_EQ(*DataTypeFromConfigString(ToConfigString(t)), t)
        << ToConfigString(t);
  }
}

TEST(DataTypeTest, SizesFollowTheProtocol) {
  EXPECT_EQ(ByteSize(DataType::kBool), 1u);
  EXPECT_EQ(ByteSize(DataType::kUint16), 2u);
  EXPECT_EQ(ByteSize(DataType::kInt32), 4u);
  EXPECT_EQ(ByteSize(DataType::kInt64), 8u);
  EXPECT_EQ(ByteSize(DataType::kFp16), 2u);
  EXPECT_EQ(ByteSize(DataType::kFp32), 4u);
  EXPECT_EQ(ByteSize(DataType::kFp64), 8u);
  EXPECT_EQ(ByteSize(DataType::kBytes), 0u);
  EXPECT_FALSE(IsFixedSize(DataType::kBytes));
}

TEST(DataTypeTest, BytesIsTypeStringInConfigs) {
  EXPECT_EQ(ToString(DataType::kBytes), "BYTES");
  EXPECT_EQ(ToConfigString(DataType::kBytes), "TYPE_STRING");
}

TEST(DataTypeTest, UnknownNameIsInvalidArgumentNamingIt) {
  auto t = DataTypeFromString("FLOAT32");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("\"FLOAT32\""), absl::string_view::npos);
  EXPECT_NE(t.status().message().find("FP32"), absl::string_view::npos);
  auto c = DataTypeFromConfigString("TYPE_FOO");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("TYPE_FOO"), absl::string_view::npos);
}

}  // namespace
}  // namespace ferry
