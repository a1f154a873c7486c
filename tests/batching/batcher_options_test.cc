// SPDX-License-Identifier: Apache-2.0
#include "batching/batcher_options.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ferry {
namespace {

using ::testing::HasSubstr;

ModelOptions Model() {
  ModelOptions m;
  m.name = "m";
  m.platform = "identity";
  m.max_batch_size = 64;
  m.inputs = {{"x", DataType::kFp32, {1}}};
  m.outputs = {{"y", DataType::kFp32, {1}}};
  m.instance_groups = {{}};
  m.dynamic_batching.enabled = true;
  return m;
}

TEST(BatcherOptionsTest, OfflineKnobsHaveDefaults) {
  const absl::StatusOr<BatcherOptions> o = BatcherOptionsFromModel(Model());
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->offline_level, 1);             // below the one online level
  EXPECT_EQ(o->policy.max_offline_rows, 64);  // min(max_batch_size, 256)
  EXPECT_EQ(o->policy.offline_batch_budget, absl::Microseconds(200));
  EXPECT_EQ(o->online_reserved_instances, 1);
}

TEST(BatcherOptionsTest, OfflineKnobsAreRead) {
  ModelOptions m = Model();
  m.parameters["max_offline_batch_rows"] = "16";
  m.parameters["offline_batch_budget_us"] = "0";
  m.parameters["online_reserved_instances"] = "0";
  const absl::StatusOr<BatcherOptions> o = BatcherOptionsFromModel(m);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->policy.max_offline_rows, 16);
  EXPECT_EQ(o->policy.offline_batch_budget, absl::ZeroDuration());
  EXPECT_EQ(o->online_reserved_instances, 0);
}

TEST(BatcherOptionsTest, BadOfflineKnobsNameTheParameter) {
  for (const char* name : {"max_offline_batch_rows", "offline_batch_budget_us",
                           "online_reserved_instances"}) {
    for (const char* value : {"-1", "many"}) {
      SCOPED_TRACE(std::string(name) + "=" + value);
      ModelOptions m = Model();
      m.parameters[name] = value;
      const absl::Status s = BatcherOptionsFromModel(m).status();
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
      EXPECT_THAT(s.message(), HasSubstr(name));
    }
  }
}

TEST(BatcherOptionsTest, ByteCapBelowOneRowIsAConfigError) {
  ModelOptions m = Model();
  m.inputs = {{"x", DataType::kFp32, {32}},
              {"ids", DataType::kInt64, {-1}},  // may be empty: counts 0
              {"s", DataType::kBytes, {2}},     // 2 length prefixes: 8
              {"opt", DataType::kFp64, {100}, /*optional=*/true}};
  m.parameters["max_batch_bytes"] = "135";  // one row needs 128 + 8
  absl::Status s = BatcherOptionsFromModel(m).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(),
              HasSubstr("parameters.max_batch_bytes is 135, less than one row "
                        "of input (136 bytes)"));
  m.parameters["max_batch_bytes"] = "136";
  const absl::StatusOr<BatcherOptions> o = BatcherOptionsFromModel(m);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->policy.max_batch_bytes, 136u);
  // Without batching (max_batch_size 0) each request runs alone: no check.
  m.max_batch_size = 0;
  m.parameters["max_batch_bytes"] = "1";
  EXPECT_TRUE(BatcherOptionsFromModel(m).ok());
}

}  // namespace
}  // namespace ferry
