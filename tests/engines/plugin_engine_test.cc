// SPDX-License-Identifier: Apache-2.0
#include "engines/plugin_engine.h"

#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ferry {
namespace {

using ::testing::HasSubstr;

TEST(PluginEngineTest, LoadsThePluginOnFirstUseAndCallsIt) {
  EngineRegistry registry;
  ASSERT_TRUE(RegisterPluginEngine(&registry, "test_platform",
                                   FERRY_TEST_PLUGIN_PATH,
                                   "FerryTestEngineFactory")
                  .ok());
  absl::StatusOr<const EngineFactory*> factory = registry.Find("test_platform");
  ASSERT_TRUE(factory.ok());
  ModelOptions options;
  ASSERT_TRUE((*factory)->AutoComplete("/nowhere", &options).ok());
  EXPECT_EQ(options.max_batch_size, 7);
  EngineLoadContext context;
  auto engine = (*factory)->Create(context);
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(engine.status().message()),
              HasSubstr("the test plugin was asked"));
}

TEST(PluginEngineTest, AMissingPluginFailsItsPlatformWithTheReason) {
  EngineRegistry registry;
  ASSERT_TRUE(RegisterPluginEngine(&registry, "pytorch_libtorch",
                                   "/nonexistent/libferry_torch.so",
                                   "FerryTorchEngineFactory")
                  .ok());
  const EngineFactory* factory = *registry.Find("pytorch_libtorch");
  for (int i = 0; i < 2; ++i) {  // the failure is remembered, not retried
    auto engine = factory->Create(EngineLoadContext());
    EXPECT_EQ(engine.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(std::string(engine.status().message()),
                HasSubstr("'/nonexistent/libferry_torch.so' cannot be loaded"));
  }
  ModelOptions options;
  EXPECT_EQ(factory->AutoComplete("/nowhere", &options).code(),
            absl::StatusCode::kUnavailable);
}

TEST(PluginEngineTest, AWrongEntryPointIsNamed) {
  EngineRegistry registry;
  ASSERT_TRUE(RegisterPluginEngine(&registry, "p", FERRY_TEST_PLUGIN_PATH,
                                   "NoSuchEntry")
                  .ok());
  auto engine = (*registry.Find("p"))->Create(EngineLoadContext());
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(engine.status().message()),
              HasSubstr("no entry point NoSuchEntry"));
}

TEST(PluginEngineTest, ExecutableDirectoryHoldsThisTest) {
  EXPECT_TRUE(std::filesystem::exists(
      std::filesystem::path(ExecutableDirectory()) / "ferry_engine_test"));
}

}  // namespace
}  // namespace ferry
