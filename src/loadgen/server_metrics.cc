// SPDX-License-Identifier: Apache-2.0
#include "loadgen/server_metrics.h"

#include <cmath>
#include <cstdlib>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ferry {
namespace {

absl::Status LineError(int line, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("/metrics line ", line, ": ", what));
}

// Parses `{a="x",b="y"}` starting at text[*pos] == '{'.
absl::Status ParseLabels(absl::string_view text, size_t* pos, int line,
                         std::map<std::string, std::string>* labels) {
  size_t i = *pos + 1;
  while (true) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i < text.size() && text[i] == '}') {
      *pos = i + 1;
      return absl::OkStatus();
    }
    const size_t eq = text.find('=', i);
    if (eq == absl::string_view::npos || eq + 1 >= text.size() ||
        text[eq + 1] != '"') {
      return LineError(line, "a label without =\"value\"");
    }
    std::string key(absl::StripAsciiWhitespace(text.substr(i, eq - i)));
    std::string value;
    size_t j = eq + 2;
    for (; j < text.size() && text[j] != '"'; ++j) {
      if (text[j] == '\\' && j + 1 < text.size()) {
        ++j;
        value.push_back(text[j] == 'n' ? '\n' : text[j]);
      } else {
        value.push_back(text[j]);
      }
    }
    if (j >= text.size()) return LineError(line, "an unterminated label value");
    (*labels)[std::move(key)] = std::move(value);
    i = j + 1;
  }
}

}  // namespace

absl::StatusOr<std::vector<MetricSample>> ParsePrometheusText(
    absl::string_view text) {
  std::vector<MetricSample> samples;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    MetricSample s;
    size_t pos = 0;
    while (pos < line.size() && line[pos] != '{' && line[pos] != ' ') ++pos;
    s.name = std::string(line.substr(0, pos));
    if (s.name.empty()) return LineError(line_no, "no metric name");
    if (pos < line.size() && line[pos] == '{') {
      if (absl::Status st = ParseLabels(line, &pos, line_no, &s.labels);
          !st.ok()) {
        return st;
      }
    }
    absl::string_view rest = absl::StripAsciiWhitespace(line.substr(pos));
    // The value, then an optional timestamp.
    absl::string_view value = rest.substr(0, rest.find(' '));
    if (value == "+Inf") {
      s.value = HUGE_VAL;
    } else if (value == "-Inf") {
      s.value = -HUGE_VAL;
    } else if (!absl::SimpleAtod(value, &s.value)) {
      return LineError(line_no,
                       absl::StrCat("value '", value, "' is not a number"));
    }
    samples.push_back(std::move(s));
  }
  return samples;
}

double SumSamples(const std::vector<MetricSample>& samples,
                  absl::string_view name,
                  const std::map<std::string, std::string>& match) {
  double sum = 0;
  for (const MetricSample& s : samples) {
    if (s.name != name) continue;
    bool all = true;
    for (const auto& [k, v] : match) {
      auto it = s.labels.find(k);
      if (it == s.labels.end() || it->second != v) {
        all = false;
        break;
      }
    }
    if (all) sum += s.value;
  }
  return sum;
}

ServerSplit ComputeServerSplit(const std::vector<MetricSample>& before,
                               const std::vector<MetricSample>& after,
                               const std::string& model) {
  const std::map<std::string, std::string> m = {{"model", model}};
  auto delta = [&](absl::string_view name) {
    return SumSamples(after, name, m) - SumSamples(before, name, m);
  };
  ServerSplit split;
  const double queue_n = delta("ferry_queue_duration_seconds_count");
  const double queue_s = delta("ferry_queue_duration_seconds_sum");
  const double compute_n = delta("ferry_compute_duration_seconds_count");
  const double compute_s = delta("ferry_compute_duration_seconds_sum");
  const double batches = delta("ferry_execution_total");
  const double rows = delta("ferry_inference_rows_total");
  split.requests = static_cast<int64_t>(queue_n);
  split.batches = static_cast<int64_t>(batches);
  if (queue_n > 0) split.avg_queue_us = queue_s / queue_n * 1e6;
  if (compute_n > 0) split.avg_compute_us = compute_s / compute_n * 1e6;
  if (batches > 0) split.avg_batch_rows = rows / batches;
  const double elements = delta("ferry_batch_elements_total");
  if (elements > 0) {
    split.padding_waste = delta("ferry_padding_elements_total") / elements;
  }
  return split;
}

}  // namespace ferry
