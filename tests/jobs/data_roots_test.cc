// SPDX-License-Identifier: Apache-2.0
#include "jobs/data_roots.h"

#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util/temp_dir.h"

namespace ferry {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::WriteFile;

class DataRootsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::canonical(tmp_.path()) / "data";
    outside_ = fs::canonical(tmp_.path()) / "outside";
    state_ = root_ / "state";
    WriteFile(root_ / "in.csv", "id,a\n");
    WriteFile(outside_ / "secret.csv", "id,a\n");
    fs::create_directories(state_);
    auto roots = DataRoots::Create({root_.string()}, {state_});
    ASSERT_TRUE(roots.ok()) << roots.status();
    roots_ = *roots;
  }

  absl::StatusCode Code(const std::string& location) {
    return roots_.Resolve("input", location).status().code();
  }

  testing::TempDir tmp_;
  fs::path root_, outside_, state_;
  DataRoots roots_;
};

TEST_F(DataRootsTest, PathsInsideARootResolveToTheirCanonicalForm) {
  auto p = roots_.Resolve("input", (root_ / "in.csv").string());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, root_ / "in.csv");
  p = roots_.Resolve("input", (root_ / "sub" / ".." / "in.csv").string());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, root_ / "in.csv");
  // Outputs need not exist yet, nor their directories.
  p = roots_.Resolve("output", (root_ / "new" / "out.csv").string());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, root_ / "new" / "out.csv");
}

TEST_F(DataRootsTest, FileUrlsAreDecoded) {
  WriteFile(root_ / "a b.csv", "id\n");
  auto p = roots_.Resolve("input", "file://" + (root_ / "a%20b.csv").string());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, root_ / "a b.csv");
  p = roots_.Resolve("input", "file://localhost" + (root_ / "in.csv").string());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, root_ / "in.csv");
}

TEST_F(DataRootsTest, DotDotEscapesAreRefusedNamingTheField) {
  const std::string escape = (root_ / ".." / "outside" / "secret.csv").string();
  auto p = roots_.Resolve("input", escape);
  ASSERT_EQ(p.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("input '" + escape + "'"));
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("outside the data roots"));
  // Through a directory that does not exist: still normalised first.
  EXPECT_EQ(Code((root_ / "nope" / ".." / ".." / "outside" / "x").string()),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Code("file://" + (root_ / "%2E%2E/outside/secret.csv").string()),
            absl::StatusCode::kPermissionDenied);
}

TEST_F(DataRootsTest, SymlinkEscapesAreRefused) {
  fs::create_directory_symlink(outside_, root_ / "link");
  fs::create_symlink(outside_ / "secret.csv", root_ / "file-link.csv");
  EXPECT_EQ(Code((root_ / "link" / "secret.csv").string()),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Code((root_ / "file-link.csv").string()),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(roots_.Resolve("output", (root_ / "link" / "new.csv").string())
                .status()
                .code(),
            absl::StatusCode::kPermissionDenied);
  // A link that stays inside the root is fine.
  fs::create_symlink(root_ / "in.csv", root_ / "alias.csv");
  auto p = roots_.Resolve("input", (root_ / "alias.csv").string());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, root_ / "in.csv");
}

TEST_F(DataRootsTest, TheRootItselfAndTheStateDirectoryAreRefused) {
  EXPECT_EQ(Code(root_.string()), absl::StatusCode::kPermissionDenied);
  auto p = roots_.Resolve("output", (state_ / "jobs.db").string());
  ASSERT_EQ(p.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("state directory"));
  // A sibling whose name starts like the root is outside it.
  fs::create_directories(root_.string() + "2");
  EXPECT_EQ(Code(root_.string() + "2/x.csv"),
            absl::StatusCode::kPermissionDenied);
}

TEST_F(DataRootsTest, OtherSchemesAndRelativePathsAreInvalid) {
  for (const char* location :
       {"http://example.com/x.csv", "https://example.com/x.csv",
        "s3://bucket/x.csv", "relative/x.csv", "", "file:relative",
        "file://host/x.csv", "file:///x.csv?q=1", "file:///bad%zz"}) {
    EXPECT_EQ(Code(location), absl::StatusCode::kInvalidArgument) << location;
  }
  auto p = roots_.Resolve("input", "https://example.com/x.csv");
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("only local paths and file:// URLs are supported"));
  EXPECT_EQ(Code(std::string("/x\0y", 4)), absl::StatusCode::kInvalidArgument);
}

TEST(DataRootsNoneTest, WithoutRootsEveryPathIsRefused) {
  DataRoots none;
  auto p = none.Resolve("input", "/tmp/x.csv");
  ASSERT_EQ(p.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("--data-root"));
}

TEST(DataRootsCreateTest, ARootMustBeADirectory) {
  testing::TempDir tmp;
  WriteFile(tmp.path() / "f", "x");
  EXPECT_EQ(DataRoots::Create({(tmp.path() / "f").string()}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      DataRoots::Create({(tmp.path() / "missing").string()}).status().code(),
      absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ferry
