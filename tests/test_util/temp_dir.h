// SPDX-License-Identifier: Apache-2.0
// TempDir: a fresh directory under $TMPDIR (or /tmp) for one test, removed with
// its contents when the object dies; WriteFile writes a file, creating parent
// directories.
#ifndef FERRY_TESTS_TEST_UTIL_TEMP_DIR_H_
#define FERRY_TESTS_TEST_UTIL_TEMP_DIR_H_

#include <filesystem>
#include <string>

namespace ferry::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

void WriteFile(const std::filesystem::path& path, const std::string& contents);
std::string ReadFile(const std::filesystem::path& path);

}  // namespace ferry::testing

#endif  // FERRY_TESTS_TEST_UTIL_TEMP_DIR_H_
