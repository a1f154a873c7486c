// SPDX-License-Identifier: Apache-2.0
#include "core/status_macros.h"

#include <memory>

#include "gtest/gtest.h"

namespace ferry {
namespace {

absl::Status FailIf(bool fail) {
  return fail ? absl::InvalidArgumentError("boom") : absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<int>> MakeInt(bool fail) {
  if (fail) return absl::NotFoundError("none");
  return std::make_unique<int>(7);
}

absl::Status Chain(bool fail_first, bool fail_second, int* out) {
  RETURN_IF_ERROR(FailIf(fail_first));
  ASSIGN_OR_RETURN(std::unique_ptr<int> v, MakeInt(fail_second));
  *out = *v;
  return absl::OkStatus();
}

TEST(StatusMacrosTest, PropagateTheFirstError) {
  int out = 0;
  EXPECT_EQ(Chain(true, false, &out).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Chain(false, true, &out).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(out, 0);
  EXPECT_TRUE(Chain(false, false, &out).ok());
  EXPECT_EQ(out, 7);
}

TEST(StatusMacrosTest,
     AssignOrReturnWorksTwiceInOneScopeAndWithExistingVariables) {
  auto f = []() -> absl::Status {
    int a = 0;
    ASSIGN_OR_RETURN(std::unique_ptr<int> x, MakeInt(false));
    ASSIGN_OR_RETURN(std::unique_ptr<int> y, MakeInt(false));
    std::unique_ptr<int> z;
    ASSIGN_OR_RETURN(z, MakeInt(false));
    a = *x + *y + *z;
    return a == 21 ? absl::OkStatus() : absl::InternalError("wrong");
  };
  EXPECT_TRUE(f().ok());
}

}  // namespace
}  // namespace ferry
