// SPDX-License-Identifier: Apache-2.0
#include "loadgen/report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "api/json_writer.h"

namespace ferry {
namespace {

std::string LoadLabel(const LoadResult& r) {
  return r.concurrency > 0 ? absl::StrCat("c=", r.concurrency)
                           : absl::StrFormat("%.0f/s", r.target_rate);
}

std::string Errors(const LoadResult& r) {
  if (r.errors.empty()) return "0";
  std::vector<std::string> parts;
  for (const auto& [code, n] : r.errors)
    parts.push_back(absl::StrCat(n, " ", code));
  return absl::StrJoin(parts, ", ");
}

}  // namespace

std::string GeneratorWarning(const BenchContext& context,
                             const BenchPoint& point) {
  const double limit = 0.8 * context.generator_threads;
  if (point.load.client_cpu_cores < limit) return "";
  return absl::StrFormat(
      "warning: at %s the generator itself used %.2f cores (it drives the "
      "load with %d thread(s)); it may be the bottleneck: add --threads or run "
      "it on another machine",
      LoadLabel(point.load), point.load.client_cpu_cores,
      context.generator_threads);
}

std::string FormatTable(const BenchContext& context,
                        const std::vector<BenchPoint>& points) {
  std::string out = absl::StrFormat(
      "ferry bench: %s %s, model %s, %d row(s) per request\n", context.protocol,
      context.url, context.model, context.rows_per_request);
  absl::StrAppendFormat(
      &out, "%-9s %10s %10s %9s %9s %9s %9s %9s  %9s %9s %7s %6s %6s  %s\n",
      "load", "req/s", "rows/s", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms",
      "max ms", "queue µs", "compute µs", "batch", "cpu", "stable", "errors");
  for (const BenchPoint& p : points) {
    const LoadResult& r = p.load;
    std::string queue = "-", compute = "-", batch = "-";
    if (p.server.has_value()) {
      queue = absl::StrFormat("%.0f", p.server->avg_queue_us);
      compute = absl::StrFormat("%.0f", p.server->avg_compute_us);
      batch = absl::StrFormat("%.1f", p.server->avg_batch_rows);
    }
    absl::StrAppendFormat(
        &out,
        "%-9s %10.1f %10.1f %9.3f %9.3f %9.3f %9.3f %9.3f  %9s %10s %7s %6.2f "
        "%6s  %s\n",
        LoadLabel(r), r.requests_per_s, r.rows_per_s, r.latency.p50_us / 1e3,
        r.latency.p90_us / 1e3, r.latency.p99_us / 1e3, r.latency.p999_us / 1e3,
        r.latency.max_us / 1e3, queue, compute, batch, r.client_cpu_cores,
        r.stable ? "yes" : "no", Errors(r));
  }
  for (const BenchPoint& p : points) {
    const std::string w = GeneratorWarning(context, p);
    if (!w.empty()) absl::StrAppend(&out, w, "\n");
  }
  return out;
}

std::string FormatJson(const BenchContext& context,
                       const std::vector<BenchPoint>& points) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("protocol").String(context.protocol);
  w.Key("url").String(context.url);
  w.Key("model").String(context.model);
  w.Key("rows_per_request").Int(context.rows_per_request);
  w.Key("results").BeginArray();
  for (const BenchPoint& p : points) {
    const LoadResult& r = p.load;
    w.BeginObject();
    if (r.concurrency > 0) {
      w.Key("concurrency").Int(r.concurrency);
    } else {
      w.Key("request_rate").Double(r.target_rate);
    }
    w.Key("seconds").Double(r.seconds);
    w.Key("windows").Int(r.windows);
    w.Key("windows_run").Int(r.windows_run);
    w.Key("stable").Bool(r.stable);
    w.Key("requests").Int(r.requests);
    w.Key("rows").Int(r.rows);
    w.Key("requests_per_s").Double(r.requests_per_s);
    w.Key("rows_per_s").Double(r.rows_per_s);
    w.Key("latency_us").BeginObject();
    w.Key("mean").Double(r.latency.mean_us);
    w.Key("p50").Double(r.latency.p50_us);
    w.Key("p90").Double(r.latency.p90_us);
    w.Key("p99").Double(r.latency.p99_us);
    w.Key("p99.9").Double(r.latency.p999_us);
    w.Key("max").Double(r.latency.max_us);
    w.EndObject();
    w.Key("failed").Int(r.failed);
    w.Key("errors").BeginObject();
    for (const auto& [code, n] : r.errors) w.Key(code).Int(n);
    w.EndObject();
    w.Key("abandoned").Int(r.abandoned);
    w.Key("client_cpu_cores").Double(r.client_cpu_cores);
    if (p.server.has_value()) {
      w.Key("server").BeginObject();
      w.Key("requests").Int(p.server->requests);
      w.Key("batches").Int(p.server->batches);
      w.Key("avg_queue_us").Double(p.server->avg_queue_us);
      w.Key("avg_compute_us").Double(p.server->avg_compute_us);
      w.Key("avg_batch_rows").Double(p.server->avg_batch_rows);
      w.Key("padding_waste").Double(p.server->padding_waste);
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  out.push_back('\n');
  return out;
}

std::string FormatCsv(const std::vector<BenchPoint>& points) {
  std::string out =
      "concurrency,request_rate,requests_per_s,rows_per_s,p50_us,p90_us,"
      "p99_us,p999_us,max_us,failed,server_avg_queue_us,"
      "server_avg_compute_us,server_avg_batch_rows,client_cpu_cores,stable\n";
  for (const BenchPoint& p : points) {
    const LoadResult& r = p.load;
    absl::StrAppendFormat(&out, "%d,%g,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%d,",
                          r.concurrency, r.target_rate, r.requests_per_s,
                          r.rows_per_s, r.latency.p50_us, r.latency.p90_us,
                          r.latency.p99_us, r.latency.p999_us, r.latency.max_us,
                          r.failed);
    if (p.server.has_value()) {
      absl::StrAppendFormat(&out, "%.1f,%.1f,%.2f,", p.server->avg_queue_us,
                            p.server->avg_compute_us, p.server->avg_batch_rows);
    } else {
      out += ",,,";
    }
    absl::StrAppendFormat(&out, "%.2f,%d\n", r.client_cpu_cores,
                          r.stable ? 1 : 0);
  }
  return out;
}

}  // namespace ferry
