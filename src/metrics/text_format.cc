// SPDX-License-Identifier: Apache-2.0
#include "metrics/text_format.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace ferry {
namespace {

void AppendEscaped(std::string* out, absl::string_view text, bool quote) {
  for (char c : text) {
    switch (c) {
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '"':
        if (quote) {
          out->append("\\\"");
        } else {
          out->push_back(c);
        }
        break;
      default:
        out->push_back(c);
    }
  }
}

void AppendNameAndLabels(std::string* out, absl::string_view name,
                         absl::Span<const MetricLabel> labels) {
  out->append(name.data(), name.size());
  if (labels.empty()) return;
  out->push_back('{');
  bool first = true;
  for (const MetricLabel& label : labels) {
    if (!first) out->push_back(',');
    first = false;
    out->append(label.name.data(), label.name.size());
    out->append("=\"");
    AppendEscaped(out, label.value, /*quote=*/true);
    out->push_back('"');
  }
  out->push_back('}');
}

}  // namespace

std::string FormatMetricValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == 0) return "0";
  // Shortest round-trip digits in exponent form first; Go's 'g' with the
  // shortest precision keeps that form when the exponent is < -4 or >= 6 and
  // otherwise writes the same digits in plain decimal.
  char buf[64];
  const std::to_chars_result sci = std::to_chars(buf, buf + sizeof(buf), value,
                                                 std::chars_format::scientific);
  if (sci.ec != std::errc()) return "NaN";  // cannot happen: buf is large
  const std::string scientific(buf, sci.ptr);
  const size_t e = scientific.find('e');
  const int exponent = std::atoi(scientific.c_str() + e + 1);
  if (exponent < -4 || exponent >= 6) return scientific;
  const std::to_chars_result fixed =
      std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::fixed);
  if (fixed.ec != std::errc()) return scientific;
  return std::string(buf, fixed.ptr);
}

std::string EscapeLabelValue(absl::string_view value) {
  std::string out;
  out.reserve(value.size());
  AppendEscaped(&out, value, /*quote=*/true);
  return out;
}

std::string EscapeHelp(absl::string_view help) {
  std::string out;
  out.reserve(help.size());
  AppendEscaped(&out, help, /*quote=*/false);
  return out;
}

void AppendFamilyHeader(std::string* out, absl::string_view name,
                        absl::string_view type, absl::string_view help) {
  absl::StrAppend(out, "# HELP ", name, " ", EscapeHelp(help), "\n# TYPE ",
                  name, " ", type, "\n");
}

void AppendSample(std::string* out, absl::string_view name,
                  absl::Span<const MetricLabel> labels, double value) {
  AppendNameAndLabels(out, name, labels);
  absl::StrAppend(out, " ", FormatMetricValue(value), "\n");
}

void AppendSample(std::string* out, absl::string_view name,
                  absl::Span<const MetricLabel> labels, uint64_t value) {
  AppendNameAndLabels(out, name, labels);
  absl::StrAppend(out, " ", value, "\n");
}

void AppendSample(std::string* out, absl::string_view name,
                  absl::Span<const MetricLabel> labels, int64_t value) {
  AppendNameAndLabels(out, name, labels);
  absl::StrAppend(out, " ", value, "\n");
}

}  // namespace ferry
