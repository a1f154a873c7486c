// SPDX-License-Identifier: Apache-2.0
// Building blocks of the Prometheus text exposition format, version 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/): HELP and TYPE
// lines, samples with escaped label values, and numbers formatted the way
// Prometheus' own Go client formats them, so `le` values read "1e-05", "0.5",
// "1", "2.5e+06". RenderPrometheus uses them; so will later exporters (jobs).
// Pure functions; safe for concurrent use.
#ifndef FERRY_METRICS_TEXT_FORMAT_H_
#define FERRY_METRICS_TEXT_FORMAT_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace ferry {

struct MetricLabel {
  absl::string_view name;  // a valid label name; not checked
  absl::string_view value;
};

// A float as Go's strconv.FormatFloat(v, 'g', -1, 64) writes it (shortest
// digits that read back exactly; exponent form below 1e-4 and from 1e6 on),
// with Prometheus' spellings "NaN", "+Inf", "-Inf"; -0 is "0".
std::string FormatMetricValue(double value);

// A label value escaped for the text format: backslash, double quote and line
// feed become \\, \" and \n.
std::string EscapeLabelValue(absl::string_view value);
// HELP text escaped: backslash and line feed become \\ and \n.
std::string EscapeHelp(absl::string_view help);

// Appends "# HELP name help\n# TYPE name type\n". `type` is counter, gauge,
// histogram, summary or untyped.
void AppendFamilyHeader(std::string* out, absl::string_view name,
                        absl::string_view type, absl::string_view help);

// Appends `name{labels} value\n` ("name value" without labels). The integer
// overloads write exact decimal integers.
void AppendSample(std::string* out, absl::string_view name,
                  absl::Span<const MetricLabel> labels, double value);
void AppendSample(std::string* out, absl::string_view name,
                  absl::Span<const MetricLabel> labels, uint64_t value);
void AppendSample(std::string* out, absl::string_view name,
                  absl::Span<const MetricLabel> labels, int64_t value);

}  // namespace ferry

#endif  // FERRY_METRICS_TEXT_FORMAT_H_
