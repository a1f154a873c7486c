// SPDX-License-Identifier: Apache-2.0
// Format names, resolution from a name or a path, dead-letter lines, and the
// CSV field helpers.
#include "jobs/formats/record_format.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jobs/formats/csv_fields.h"

namespace ferry {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(RecordFormatTest, NamesAndResolution) {
  EXPECT_EQ(RecordFormatName(RecordFormat::kCsv), "csv");
  EXPECT_EQ(RecordFormatName(RecordFormat::kJsonl), "jsonl");
  EXPECT_EQ(*ResolveRecordFormat("csv", "x.jsonl"), RecordFormat::kCsv);
  EXPECT_EQ(*ResolveRecordFormat("jsonl", "x.csv"), RecordFormat::kJsonl);
  EXPECT_EQ(*ResolveRecordFormat("", "/a.b/in.CSV"), RecordFormat::kCsv);
  EXPECT_EQ(*ResolveRecordFormat("", "in.jsonl"), RecordFormat::kJsonl);
  EXPECT_EQ(*ResolveRecordFormat("", "in.ndjson"), RecordFormat::kJsonl);
  auto unknown = ResolveRecordFormat("parquet", "in.csv");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("'parquet'"));
  auto no_ext = ResolveRecordFormat("", "/data.d/input");
  EXPECT_EQ(no_ext.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(no_ext.status().message(), HasSubstr("/data.d/input"));
  EXPECT_FALSE(ResolveRecordFormat("", "in.txt").ok());
}

TEST(RecordFormatTest, DeadLetterRecordErrors) {
  EXPECT_EQ(DeadLetterRecord("{\"record\":\"a\\nb\"}\n").value(), "a\nb");
  EXPECT_EQ(DeadLetterRecord("nope").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(DeadLetterRecord("{\"line\":1}").status().message(),
              HasSubstr("'record'"));
  EXPECT_FALSE(DeadLetterRecord("{\"record\":1}").ok());
  EXPECT_FALSE(DeadLetterRecord("[]").ok());
}

std::vector<std::string> Split(const std::string& text) {
  std::string storage;
  internal::CsvFields fields;
  absl::Status s = internal::SplitCsvFields(text, &storage, &fields);
  EXPECT_TRUE(s.ok()) << s;
  return std::vector<std::string>(fields.begin(), fields.end());
}

TEST(CsvFieldsTest, SplitsLikeRfc4180) {
  EXPECT_THAT(Split(""), ElementsAre(""));
  EXPECT_THAT(Split("a,,b,"), ElementsAre("a", "", "b", ""));
  EXPECT_THAT(Split("\"a,b\",\"\"\"\",\"x\ny\""),
              ElementsAre("a,b", "\"", "x\ny"));
  EXPECT_THAT(Split("\"\",\"ab\"cd,e\"f"), ElementsAre("", "abcd", "e\"f"));
  EXPECT_THAT(Split("1,\"2\","), ElementsAre("1", "2", ""));
  std::string storage;
  internal::CsvFields fields;
  EXPECT_FALSE(internal::SplitCsvFields("a,\"b", &storage, &fields).ok());
}

TEST(CsvFieldsTest, QuotesOnlyWhenNeeded) {
  auto quoted = [](const std::string& field) {
    std::string out;
    internal::AppendCsvField(&out, field);
    return out;
  };
  EXPECT_EQ(quoted("plain"), "plain");
  EXPECT_EQ(quoted(""), "");
  EXPECT_EQ(quoted("a,b"), "\"a,b\"");
  EXPECT_EQ(quoted("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(quoted("x\r\ny"), "\"x\r\ny\"");
  EXPECT_EQ(quoted(" pad"), "\" pad\"");
  for (const std::string s : {"a,b", "\"", "x\ny", " p ", "q\"\"r,"}) {
    EXPECT_THAT(Split(quoted(s)), ElementsAre(s));
  }
}

}  // namespace
}  // namespace ferry
