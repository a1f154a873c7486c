// SPDX-License-Identifier: Apache-2.0
#include "jobs/webhook/event.h"

#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace ferry {
namespace {

WebhookEvent CompletedEvent() {
  WebhookEvent e;
  e.job_id = "job-42";
  e.state = "completed";
  e.total = 10;
  e.completed = 9;
  e.failed = 1;
  e.output_path = "/data/out/job-42.jsonl";
  e.error_path = "/data/out/job-42.errors.jsonl";
  e.at = absl::FromUnixSeconds(1'700'000'123);
  return e;
}

TEST(WebhookEventJsonTest, HasTheBatchObjectShape) {
  const std::string json = WebhookEventJson(CompletedEvent());
  EXPECT_EQ(json, R"({"type":"batch.completed","id":")" +
                      WebhookEventId(CompletedEvent()) +
                      R"(","created_at":1700000123,"data":{"id":"job-42",)"
                      R"("status":"completed","request_counts":{"total":10,)"
                      R"("completed":9,"failed":1},)"
                      R"("output_file":"/data/out/job-42.jsonl",)"
                      R"("error_file":"/data/out/job-42.errors.jsonl",)"
                      R"("dead_letter_file":null}})");
}

TEST(WebhookEventJsonTest, EscapesStringsIntoValidJson) {
  WebhookEvent e = CompletedEvent();
  e.job_id = "job \"quoted\"\n\\ \x01";
  e.output_path = "C:\\out\\a \"b\".jsonl";
  const std::string json = WebhookEventJson(e);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(json).get(root), simdjson::SUCCESS) << json;
  std::string_view id, output;
  ASSERT_EQ(root["data"]["id"].get(id), simdjson::SUCCESS);
  EXPECT_EQ(id, e.job_id);
  ASSERT_EQ(root["data"]["output_file"].get(output), simdjson::SUCCESS);
  EXPECT_EQ(output, e.output_path);
  EXPECT_TRUE(root["data"]["dead_letter_file"].is_null());
}

TEST(WebhookEventIdTest, StableAcrossRetriesAndDistinctPerJobAndState) {
  WebhookEvent a = CompletedEvent();
  WebhookEvent later = a;
  later.at += absl::Hours(3);  // a re-send after a restart
  later.completed = 0;
  EXPECT_EQ(WebhookEventId(a), WebhookEventId(later));
  EXPECT_EQ(WebhookEventId(a).size(), 4u + 32u);
  EXPECT_EQ(WebhookEventId(a).rfind("evt_", 0), 0u);

  WebhookEvent failed = a;
  failed.state = "failed";
  WebhookEvent other = a;
  other.job_id = "job-43";
  EXPECT_NE(WebhookEventId(a), WebhookEventId(failed));
  EXPECT_NE(WebhookEventId(a), WebhookEventId(other));
}

}  // namespace
}  // namespace ferry
