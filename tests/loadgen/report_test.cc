// SPDX-License-Identifier: Apache-2.0
#include "loadgen/report.h"

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace ferry {
namespace {

using ::testing::HasSubstr;

std::vector<BenchPoint> TwoPoints() {
  BenchPoint a;
  a.load.concurrency = 8;
  a.load.requests = 1000;
  a.load.requests_per_s = 500;
  a.load.rows_per_s = 500;
  a.load.latency.p50_us = 1500;
  a.load.latency.p99_us = 4000;
  a.load.stable = true;
  a.load.client_cpu_cores = 0.2;
  a.server = ServerSplit{1000, 100, 300, 900, 10, 0.125};
  BenchPoint b;
  b.load.target_rate = 250;
  b.load.errors = {{"http 503", 3}, {"timeout", 1}};
  b.load.failed = 4;
  b.load.client_cpu_cores = 0.95;
  return {a, b};
}

TEST(ReportTest, JsonCarriesEveryPointAndParses) {
  BenchContext c{"http", "http://127.0.0.1:8000", "m", 1, 1};
  const std::string json = FormatJson(c, TwoPoints());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  simdjson::dom::array results = doc["results"];
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(int64_t(results.at(0)["concurrency"]), 8);
  EXPECT_EQ(double(results.at(0)["latency_us"]["p99"]), 4000);
  EXPECT_EQ(double(results.at(0)["server"]["avg_batch_rows"]), 10);
  EXPECT_EQ(double(results.at(0)["server"]["padding_waste"]), 0.125);
  EXPECT_EQ(double(results.at(1)["request_rate"]), 250);
  EXPECT_EQ(int64_t(results.at(1)["errors"]["http 503"]), 3);
  EXPECT_EQ(results.at(1)["server"].error(), simdjson::NO_SUCH_FIELD);
}

TEST(ReportTest, CsvHasOneRowPerPointUnderItsHeader) {
  const std::string csv = FormatCsv(TwoPoints());
  std::vector<std::string> lines = absl::StrSplit(csv, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u);
  const size_t columns = std::count(lines[0].begin(), lines[0].end(), ',');
  for (const std::string& l : lines) {
    EXPECT_EQ(std::count(l.begin(), l.end(), ','), columns) << l;
  }
  EXPECT_THAT(lines[1], ::testing::StartsWith("8,0,500.0,"));
}

TEST(ReportTest, TableShowsErrorsAndWarnsWhenTheGeneratorIsBusy) {
  BenchContext c{"grpc", "127.0.0.1:8001", "m", 1, 1};
  const std::string table = FormatTable(c, TwoPoints());
  EXPECT_THAT(table, HasSubstr("c=8"));
  EXPECT_THAT(table, HasSubstr("250/s"));
  EXPECT_THAT(table, HasSubstr("3 http 503, 1 timeout"));
  EXPECT_THAT(table, HasSubstr("warning: at 250/s the generator itself used"));
  EXPECT_THAT(table, ::testing::Not(HasSubstr("warning: at c=8")));
}

}  // namespace
}  // namespace ferry
