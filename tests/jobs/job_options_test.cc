// SPDX-License-Identifier: Apache-2.0
#include "jobs/job_options.h"

#include "absl/time/civil_time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ferry {
namespace {

using ::testing::HasSubstr;

absl::Time Utc(int h, int m) {
  return absl::FromCivil(absl::CivilMinute(2026, 11, 29, h, m),
                         absl::UTCTimeZone());
}

TEST(JobOptionsTest, JsonRoundTrip) {
  JobOptions o;
  o.format = RecordFormat::kJsonl;
  o.csv.id_column = "id";
  o.csv.columns = {"b", "a"};
  o.csv.keep_columns = true;
  o.chunk_records = 77;
  o.max_attempts = 5;
  o.completion_window = absl::Hours(2);
  o.run_window = RunWindow{120, 360};
  o.time_zone = "UTC";
  o.webhook_url = "http://127.0.0.1:9/hook";
  o.metadata = {{"team", "risk"}, {"q\"uote", "v"}};
  o.endpoint = "/v2/models/m/infer";
  o.replay_of = "batch_1";
  o.header = {"id", "a", "b"};
  absl::StatusOr<JobOptions> back = JobOptionsFromJson(JobOptionsToJson(o));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->format, o.format);
  EXPECT_EQ(back->csv.id_column, "id");
  EXPECT_EQ(back->csv.columns, o.csv.columns);
  EXPECT_TRUE(back->csv.keep_columns);
  EXPECT_EQ(back->chunk_records, 77);
  EXPECT_EQ(back->max_attempts, 5);
  EXPECT_EQ(back->completion_window, absl::Hours(2));
  EXPECT_EQ(back->run_window, o.run_window);
  EXPECT_EQ(back->time_zone, "UTC");
  EXPECT_EQ(back->webhook_url, o.webhook_url);
  EXPECT_EQ(back->metadata, o.metadata);
  EXPECT_EQ(back->endpoint, o.endpoint);
  EXPECT_EQ(back->replay_of, "batch_1");
  EXPECT_EQ(back->header, o.header);
}

TEST(JobOptionsTest, BadFieldsAreNamed) {
  EXPECT_THAT(JobOptionsFromJson(R"({"chunk_size": "x"})").status().message(),
              HasSubstr("'chunk_size'"));
  EXPECT_THAT(JobOptionsFromJson(R"({"chunk_size": 0})").status().message(),
              HasSubstr("chunk_size 0"));
  EXPECT_THAT(JobOptionsFromJson(R"({"max_attempts": 0})").status().message(),
              HasSubstr("max_attempts"));
  EXPECT_THAT(
      JobOptionsFromJson(R"({"time_zone": "Mars/Base"})").status().message(),
      HasSubstr("time_zone 'Mars/Base'"));
  EXPECT_THAT(JobOptionsFromJson("[1]").status().message(),
              HasSubstr("JSON object"));
  EXPECT_THAT(JobOptionsFromJson("{").status().message(),
              HasSubstr("not valid JSON"));
}

TEST(RunWindowTest, ParsesAndRejects) {
  absl::StatusOr<RunWindow> w = ParseRunWindow("02:00-06:30");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->start_minute, 120);
  EXPECT_EQ(w->end_minute, 390);
  EXPECT_EQ(FormatRunWindow(*w), "02:00-06:30");
  EXPECT_THAT(ParseRunWindow("2-6").status().message(),
              HasSubstr("not a time of day"));
  EXPECT_THAT(ParseRunWindow("25:00-06:00").status().message(),
              HasSubstr("'25:00'"));
  EXPECT_THAT(ParseRunWindow("02:00").status().message(),
              HasSubstr("HH:MM-HH:MM"));
}

TEST(RunWindowTest, InsideOutsideAndWrappingPastMidnight) {
  const absl::TimeZone utc = absl::UTCTimeZone();
  const RunWindow night{2 * 60, 6 * 60};
  EXPECT_FALSE(InRunWindow(night, Utc(1, 59), utc));
  EXPECT_TRUE(InRunWindow(night, Utc(2, 0), utc));
  EXPECT_TRUE(InRunWindow(night, Utc(5, 59), utc));
  EXPECT_FALSE(InRunWindow(night, Utc(6, 0), utc));
  const RunWindow wrap{22 * 60, 4 * 60};
  EXPECT_TRUE(InRunWindow(wrap, Utc(23, 0), utc));
  EXPECT_TRUE(InRunWindow(wrap, Utc(3, 0), utc));
  EXPECT_FALSE(InRunWindow(wrap, Utc(12, 0), utc));
  EXPECT_TRUE(InRunWindow(RunWindow{0, 0}, Utc(12, 0), utc));
}

TEST(RunWindowTest, NextOpening) {
  const absl::TimeZone utc = absl::UTCTimeZone();
  const RunWindow night{2 * 60, 6 * 60};
  EXPECT_EQ(NextRunWindowOpen(night, Utc(1, 0), utc), Utc(2, 0));
  EXPECT_EQ(NextRunWindowOpen(night, Utc(3, 0), utc), Utc(3, 0));
  EXPECT_EQ(NextRunWindowOpen(night, Utc(7, 0), utc),
            Utc(2, 0) + absl::Hours(24));
}

TEST(CompletionWindowTest, GoDurations) {
  EXPECT_EQ(*ParseCompletionWindow("24h"), absl::Hours(24));
  EXPECT_EQ(*ParseCompletionWindow("90m"), absl::Minutes(90));
  EXPECT_FALSE(ParseCompletionWindow("tomorrow").ok());
  EXPECT_FALSE(ParseCompletionWindow("-1h").ok());
}

}  // namespace
}  // namespace ferry
