// SPDX-License-Identifier: Apache-2.0
#include "api/http/job_requests.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ferry {
namespace {

using ::testing::HasSubstr;
using ::testing::Pair;

TEST(JobRequestsTest, ParsesABatch) {
  auto r = ParseBatchRequest(
      R"({"input_file_id":"file-1","endpoint":"/v2/models/m/versions/3/infer",
          "completion_window":"90m","metadata":{"a":"b"}})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->input_file_id, "file-1");
  EXPECT_EQ(r->model, "m");
  EXPECT_EQ(r->model_version, 3);
  EXPECT_EQ(r->completion_window, absl::Minutes(90));
  EXPECT_THAT(r->metadata, ::testing::ElementsAre(Pair("a", "b")));
  r = ParseBatchRequest(
      R"({"input_file_id":"f","endpoint":"/v2/models/m/infer","metadata":null})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->model_version, 0);
  EXPECT_EQ(r->completion_window, absl::Hours(24));
  EXPECT_TRUE(r->metadata.empty());
}

TEST(JobRequestsTest, ParsesANativeJob) {
  auto r = ParseNativeJobRequest(
      R"({"model":"m","version":2,"input":"/d/in.csv","output":"/d/o.csv",
          "format":"csv","id_column":"id","columns":["a","b"],
          "keep_columns":true,"chunk_size":50,"max_attempts":4,
          "completion_window":"1h","run_window":"22:00-04:00",
          "time_zone":"UTC","webhook_url":"https://h/x","metadata":{"k":"v"}})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->model, "m");
  EXPECT_EQ(r->model_version, 2);
  EXPECT_EQ(r->input, "/d/in.csv");
  EXPECT_EQ(r->output, "/d/o.csv");
  EXPECT_EQ(r->format, "csv");
  EXPECT_EQ(r->options.csv.id_column, "id");
  EXPECT_THAT(r->options.csv.columns, ::testing::ElementsAre("a", "b"));
  EXPECT_TRUE(r->options.csv.keep_columns);
  EXPECT_EQ(r->options.chunk_records, 50);
  EXPECT_EQ(r->options.max_attempts, 4);
  EXPECT_EQ(r->options.completion_window, absl::Hours(1));
  ASSERT_TRUE(r->options.run_window.has_value());
  EXPECT_EQ(r->options.run_window->start_minute, 22 * 60);
  EXPECT_EQ(r->options.time_zone, "UTC");
  EXPECT_EQ(r->options.webhook_url, "https://h/x");
  EXPECT_THAT(r->options.metadata, ::testing::ElementsAre(Pair("k", "v")));
}

struct Bad {
  const char* body;
  const char* message;
};

TEST(JobRequestsTest, BatchErrorsNameTheField) {
  const Bad cases[] = {
      {"", "needs a JSON object body"},
      {"[1]", "must be a JSON object"},
      {"{oops", "not valid JSON"},
      {R"({"endpoint":"/v2/models/m/infer"})", "input_file_id is required"},
      {R"({"input_file_id":"f"})", "endpoint is required"},
      {R"({"input_file_id":1,"endpoint":"e"})", "input_file_id: expected"},
      {R"({"input_file_id":"f","endpoint":"/v1/chat/completions"})",
       "endpoint '/v1/chat/completions' must be"},
      {R"({"input_file_id":"f","endpoint":"/v2/models/m/versions/0/infer"})",
       "endpoint '/v2/models/m/versions/0/infer'"},
      {R"({"input_file_id":"f","endpoint":"/v2/models//infer"})", "endpoint"},
      {R"({"input_file_id":"f","endpoint":"/v2/models/m/infer",
           "completion_window":"forever"})",
       "completion_window 'forever'"},
      {R"({"input_file_id":"f","endpoint":"/v2/models/m/infer",
           "metadata":{"k":7}})",
       "metadata.k: expected a string"},
      {R"({"input_file_id":"f","endpoint":"/v2/models/m/infer",
           "metadata":"x"})",
       "metadata: expected an object"},
      {R"({"input_file_id":"f","endpoint":"/v2/models/m/infer",
           "colour":"red"})",
       "unknown field 'colour'"},
  };
  for (const Bad& c : cases) {
    auto r = ParseBatchRequest(c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.body;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.message))
        << c.body;
  }
}

TEST(JobRequestsTest, MetadataFollowsOpenAIsLimits) {
  std::string pairs;
  for (int i = 0; i < 17; ++i) {
    pairs +=
        (i ? "," : "") + std::string("\"k") + std::to_string(i) + "\":\"v\"";
  }
  const std::string base =
      R"({"input_file_id":"f","endpoint":"/v2/models/m/infer","metadata":)";
  auto r = ParseBatchRequest(base + "{" + pairs + "}}");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("metadata: at most 16 pairs"));
  r = ParseBatchRequest(base + "{\"" + std::string(65, 'k') + "\":\"v\"}}");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("keys are at most"));
  r = ParseBatchRequest(base + "{\"k\":\"" + std::string(513, 'v') + "\"}}");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("metadata.k: values are at most 512"));
  r = ParseBatchRequest(base + "{\"" + std::string(64, 'k') + "\":\"" +
                        std::string(512, 'v') + "\"}}");
  EXPECT_TRUE(r.ok()) << r.status();
}

TEST(JobRequestsTest, NativeJobErrorsNameTheField) {
  const Bad cases[] = {
      {R"({"input":"/x"})", "model is required"},
      {R"({"model":"m"})", "give either input"},
      {R"({"model":"m","input":"/x","input_file_id":"f"})", "give either"},
      {R"({"model":1,"input":"/x"})", "model: expected a string"},
      {R"({"model":"m","input":"/x","version":0})", "version: expected"},
      {R"({"model":"m","input":"/x","version":"2"})", "version: expected"},
      {R"({"model":"m","input":"/x","columns":"a,b"})", "columns: expected"},
      {R"({"model":"m","input":"/x","columns":[1]})", "columns: expected"},
      {R"({"model":"m","input":"/x","keep_columns":"yes"})", "keep_columns"},
      {R"({"model":"m","input":"/x","chunk_size":1.5})", "chunk_size"},
      {R"({"model":"m","input":"/x","max_attempts":0})", "max_attempts"},
      {R"({"model":"m","input":"/x","completion_window":"x"})",
       "completion_window"},
      {R"({"model":"m","input":"/x","run_window":"9-5"})", "run_window"},
      {R"({"model":"m","input":"/x","webhook_url":"ftp://h/"})",
       "webhook_url: "},
      {R"({"model":"m","input":"/x","speed":1})", "unknown field 'speed'"},
  };
  for (const Bad& c : cases) {
    auto r = ParseNativeJobRequest(c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.body;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.message))
        << c.body << ": " << r.status();
  }
}

TEST(JobRequestsTest, ReplayTakesAnOptionalOutput) {
  EXPECT_EQ(*ParseReplayRequest(""), "");
  EXPECT_EQ(*ParseReplayRequest("{}"), "");
  EXPECT_EQ(*ParseReplayRequest(R"({"output":"/d/r.csv"})"), "/d/r.csv");
  auto r = ParseReplayRequest(R"({"out":"x"})");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("unknown field 'out'"));
}

}  // namespace
}  // namespace ferry
