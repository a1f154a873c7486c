// SPDX-License-Identifier: Apache-2.0
#include "repository/version_policy.h"

#include "gtest/gtest.h"
#include "test_util/temp_dir.h"

namespace ferry {
namespace {

using V = std::vector<int64_t>;

VersionPolicyOptions Latest(uint32_t n) {
  VersionPolicyOptions p;
  p.kind = VersionPolicyOptions::Kind::kLatest;
  p.num_versions = n;
  return p;
}

TEST(VersionPolicyTest, Table) {
  VersionPolicyOptions all;
  all.kind = VersionPolicyOptions::Kind::kAll;
  VersionPolicyOptions specific;
  specific.kind = VersionPolicyOptions::Kind::kSpecific;
  specific.versions = {3, 1, 7};
  struct Case {
    VersionPolicyOptions policy;
    V available, selected, missing;
  };
  const Case cases[] = {
      {Latest(1), {1, 3, 2}, {3}, {}}, {Latest(2), {10, 2, 9}, {9, 10}, {}},
      {Latest(5), {4, 1}, {1, 4}, {}}, {Latest(1), {}, {}, {}},
      {all, {2, 1, 2}, {1, 2}, {}},    {specific, {1, 2, 3}, {1, 3}, {7}},
      {specific, {}, {}, {1, 3, 7}},
  };
  for (const Case& c : cases) {
    VersionSelection s = SelectVersions(c.policy, c.available);
    EXPECT_EQ(s.selected, c.selected);
    EXPECT_EQ(s.missing, c.missing);
  }
}

TEST(VersionPolicyTest, OnlyPositiveIntegerDirectoriesAreVersions) {
  testing::TempDir dir;
  for (const char* name :
       {"1", "12", "0", "-3", "v2", "007x", ".ipynb_checkpoints", "warmup"}) {
    std::filesystem::create_directories(dir.path() / name);
  }
  testing::WriteFile(dir.path() / "5", "a file, not a directory");
  testing::WriteFile(dir.path() / "config.pbtxt", "");
  auto v = ListVersionDirectories(dir.path());
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, (V{1, 12}));
}

TEST(VersionPolicyTest, MissingModelDirectoryIsNotFound) {
  EXPECT_EQ(ListVersionDirectories("/nonexistent/model").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace ferry
