// SPDX-License-Identifier: Apache-2.0
#include "metrics/text_format.h"

#include <cstdint>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace ferry {
namespace {

TEST(FormatMetricValueTest, WritesNumbersAsPrometheusGoClientDoes) {
  // Expected strings are Go's strconv.FormatFloat(v, 'g', -1, 64).
  EXPECT_EQ(FormatMetricValue(1), "1");
  EXPECT_EQ(FormatMetricValue(0), "0");
  EXPECT_EQ(FormatMetricValue(-0.0), "0");
  EXPECT_EQ(FormatMetricValue(-1), "-1");
  EXPECT_EQ(FormatMetricValue(0.5), "0.5");
  EXPECT_EQ(FormatMetricValue(60), "60");
  EXPECT_EQ(FormatMetricValue(0.0001), "0.0001");
  EXPECT_EQ(FormatMetricValue(10 / 1e6), "1e-05");
  EXPECT_EQ(FormatMetricValue(25 / 1e6), "2.5e-05");
  EXPECT_EQ(FormatMetricValue(250 / 1e6), "0.00025");
  EXPECT_EQ(FormatMetricValue(999999), "999999");
  EXPECT_EQ(FormatMetricValue(1e6), "1e+06");
  EXPECT_EQ(FormatMetricValue(2.5e6), "2.5e+06");
  EXPECT_EQ(FormatMetricValue(123456789), "1.23456789e+08");
  EXPECT_EQ(FormatMetricValue(1e100), "1e+100");
  EXPECT_EQ(FormatMetricValue(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(FormatMetricValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(FormatMetricValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatMetricValue(-std::numeric_limits<double>::infinity()),
            "-Inf");
}

TEST(EscapeTest, LabelValuesEscapeBackslashQuoteAndNewline) {
  EXPECT_EQ(EscapeLabelValue("plain-name_1.v"), "plain-name_1.v");
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(EscapeLabelValue("ünïcode"), "ünïcode");
}

TEST(EscapeTest, HelpEscapesBackslashAndNewlineButNotQuotes) {
  EXPECT_EQ(EscapeHelp("say \"hi\"\\now\nthen"), "say \"hi\"\\\\now\\nthen");
}

TEST(AppendTest, WritesHeaderAndSamplesWithAndWithoutLabels) {
  std::string out;
  AppendFamilyHeader(&out, "x_total", "counter", "Things.\nMore");
  AppendSample(&out, "x_total", {}, uint64_t{18446744073709551615u});
  AppendSample(&out, "x_total", {{"a", "1"}, {"b", "q\""}}, int64_t{-3});
  AppendSample(&out, "x_total", {{"a", "2"}}, 0.25);
  EXPECT_EQ(out,
            "# HELP x_total Things.\\nMore\n"
            "# TYPE x_total counter\n"
            "x_total 18446744073709551615\n"
            "x_total{a=\"1\",b=\"q\\\"\"} -3\n"
            "x_total{a=\"2\"} 0.25\n");
}

}  // namespace
}  // namespace ferry
