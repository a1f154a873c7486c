// SPDX-License-Identifier: Apache-2.0
// Shared by the job tests: a model repository of identity models (a real
// engine; rows whose first value is -7777 make it fail with INTERNAL, a
// transient error) and CSV inputs whose expected outputs are known exactly.
#ifndef FERRY_TESTS_JOBS_JOB_TEST_UTIL_H_
#define FERRY_TESTS_JOBS_JOB_TEST_UTIL_H_

#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "engines/engine_registry.h"
#include "engines/identity/identity_engine.h"
#include "gtest/gtest.h"
#include "repository/model_manager.h"
#include "test_util/temp_dir.h"

namespace ferry::testing {

// An identity model: x FP32 [3] → y FP32 [3].
inline std::string IdentityConfig(int max_batch_size, int delay_us) {
  return absl::StrCat(R"(
  platform: "identity"
  max_batch_size: )",
                      max_batch_size, R"(
  input [ { name: "x" data_type: TYPE_FP32 dims: [ 3 ] } ]
  output [ { name: "y" data_type: TYPE_FP32 dims: [ 3 ] } ]
  dynamic_batching { max_queue_delay_microseconds: 200 }
  parameters { key: "fail_on_first_value" value: { string_value: "-7777" } }
  parameters { key: "execute_delay_us" value: { string_value: ")",
                      delay_us, R"(" } }
)");
}

inline void WriteIdentityRepository(const std::filesystem::path& root) {
  const struct {
    const char* name;
    int batch;
    int delay;
  } models[] = {{"m", 8, 0}, {"one", 1, 0}, {"slow", 4, 20000}};
  for (const auto& m : models) {
    WriteFile(root / m.name / "config.pbtxt", IdentityConfig(m.batch, m.delay));
    std::filesystem::create_directories(root / m.name / "1");
  }
}

// A test fixture base: the identity models above, loaded into a real
// ModelManager in a fresh directory.
class IdentityModelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterIdentityEngine(&engines_).ok());
    WriteIdentityRepository(dir_.path() / "models");
    manager_ = std::make_unique<ModelManager>(dir_.path() / "models", &engines_,
                                              ModelManager::Options{});
    ASSERT_TRUE(manager_->LoadAll().ok());
  }

  TempDir dir_;
  EngineRegistry engines_;
  std::unique_ptr<ModelManager> manager_;
};

// Row i: id r<i>, x = (i, i + 0.5, -i); ids in `bad` get a malformed value,
// ids in `poison` start with -7777 (the engine fails on them).
inline std::string MakeCsv(int rows, const std::set<int>& bad = {},
                           const std::set<int>& poison = {}) {
  std::string csv = "id,a,b,c\n";
  for (int i = 0; i < rows; ++i) {
    if (bad.count(i)) {
      absl::StrAppend(&csv, "r", i, ",", i, ",oops,", -i, "\n");
    } else if (poison.count(i)) {
      absl::StrAppend(&csv, "r", i, ",-7777,", i, ".5,", -i, "\n");
    } else {
      absl::StrAppend(&csv, "r", i, ",", i, ",", i, ".5,", -i, "\n");
    }
  }
  return csv;
}

// The output line of row i (identity: y = x).
inline std::string ExpectedLine(int i) {
  return absl::StrCat("r", i, ",", i, ",", i, ".5,", -i, "\n");
}

}  // namespace ferry::testing

#endif  // FERRY_TESTS_JOBS_JOB_TEST_UTIL_H_
