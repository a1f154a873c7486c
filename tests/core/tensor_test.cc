// SPDX-License-Identifier: Apache-2.0
#include "core/tensor.h"

#include <vector>

#include "gtest/gtest.h"

namespace ferry {
namespace {

TEST(TensorTest, ZerosOwnsZeroFilledStorage) {
  Tensor t = *Tensor::Zeros("x", DataType::kFp32, {2, 3});
  EXPECT_TRUE(t.owns_data());
  EXPECT_EQ(t.num_elements(), 6);
  EXPECT_EQ(t.byte_size(), 24u);
  for (float v : t.values<float>()) EXPECT_EQ(v, 0.0f);
  t.mutable_values<float>()[4] = 2.5f;
  EXPECT_EQ(t.values<float>()[4], 2.5f);
}

TEST(TensorTest, FromValuesChecksElementCount) {
  std::vector<int64_t> v = {1, 2, 3};
  auto bad = Tensor::FromValues<int64_t>("ids", {1, 4}, v);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("'ids'"), absl::string_view::npos);
  EXPECT_NE(bad.status().message().find("[1,4]"), absl::string_view::npos);
  Tensor ok = *Tensor::FromValues<int64_t>("ids", {1, 3}, v);
  EXPECT_EQ(ok.values<int64_t>()[2], 3);
}

TEST(TensorTest, BorrowDoesNotCopy) {
  std::vector<float> buffer = {1, 2, 3, 4};
  Tensor t = *Tensor::Borrow("x", DataType::kFp32, {4}, buffer.data(), 16);
  EXPECT_FALSE(t.owns_data());
  EXPECT_EQ(reinterpret_cast<const float*>(t.data()), buffer.data());
  EXPECT_EQ(t.mutable_data(), nullptr);
  buffer[0] = 9;
  EXPECT_EQ(t.values<float>()[0], 9);
}

TEST(TensorTest, BorrowKeepsTheOwnerAlive) {
  auto owner = std::make_shared<std::vector<float>>(std::vector<float>{1, 2});
  std::weak_ptr<std::vector<float>> watch = owner;
  Tensor t =
      *Tensor::Borrow("x", DataType::kFp32, {2}, owner->data(), 8, owner);
  owner.reset();
  EXPECT_FALSE(watch.expired());
  EXPECT_EQ(t.values<float>()[1], 2);
  Tensor moved = std::move(t);
  EXPECT_FALSE(watch.expired());
  moved = Tensor();
  EXPECT_TRUE(watch.expired());
}

TEST(TensorTest, CloneIsADeepOwnedCopy) {
  std::vector<int32_t> buffer = {5, 6};
  Tensor t = *Tensor::Borrow("x", DataType::kInt32, {1, 2}, buffer.data(), 8);
  Tensor c = t.Clone();
  buffer[0] = 0;
  EXPECT_TRUE(c.owns_data());
  EXPECT_EQ(c.values<int32_t>()[0], 5);
  EXPECT_EQ(c.shape(), (Shape{1, 2}));
  EXPECT_EQ(c.name(), "x");
}

TEST(TensorTest, NegativeDimensionIsRejected) {
  auto t = Tensor::Zeros("x", DataType::kFp32, {2, -1});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("negative"), absl::string_view::npos);
}

TEST(TensorTest, BytesElementsAreLengthPrefixed) {
  std::vector<std::string> words = {"ferry", "", "boat"};
  Tensor t = *Tensor::FromStrings("s", {3}, words);
  EXPECT_EQ(t.byte_size(), 4u * 3 + 5 + 0 + 4);
  auto views = t.strings();
  ASSERT_EQ(views.size(), 3u);
  EXPECT_EQ(views[0], "ferry");
  EXPECT_EQ(views[1], "");
  EXPECT_EQ(views[2], "boat");
}

TEST(TensorTest, TruncatedBytesAreRejectedWithTheElementIndex) {
  std::string bytes(
      "\x05\x00\x00\x00"
      "abc",
      7);
  auto t = Tensor::FromBytes("s", DataType::kBytes, {1}, bytes);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("element 0"), absl::string_view::npos);
  std::string extra(
      "\x01\x00\x00\x00"
      "ab",
      6);
  EXPECT_FALSE(Tensor::FromBytes("s", DataType::kBytes, {1}, extra).ok());
}

TEST(TensorTest, UninitializedRefusesBytes) {
  EXPECT_FALSE(Tensor::Uninitialized("s", DataType::kBytes, {1}).ok());
}

TEST(TensorTest, ShapeHelpers) {
  EXPECT_EQ(NumElements(Shape{}), 1);
  EXPECT_EQ(NumElements(Shape{2, 0, 3}), 0);
  EXPECT_EQ(ShapeToString(Shape{2, 3}), "[2,3]");
  EXPECT_EQ(ShapeToString(Shape{}), "[]");
}

TEST(TensorDeathTest, WrongTypedAccessIsAProgrammerError) {
  Tensor t = *Tensor::Zeros("x", DataType::kFp32, {1});
  EXPECT_DEATH(t.values<int64_t>(), "accessed as INT64");
}

}  // namespace
}  // namespace ferry
