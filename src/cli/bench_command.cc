// SPDX-License-Identifier: Apache-2.0
#include "cli/bench_command.h"

#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/grpc/grpc_service.pb.h"
#include "api/kserve_json.h"
#include "core/status_macros.h"
#include "jobs/webhook/http_post.h"
#include "loadgen/grpc_transport.h"
#include "loadgen/http_transport.h"
#include "loadgen/load_driver.h"
#include "loadgen/report.h"
#include "loadgen/request_data.h"
#include "loadgen/server_metrics.h"

namespace ferry {
namespace {

absl::StatusOr<std::vector<double>> ParseList(const std::string& flag,
                                              const std::string& text) {
  std::vector<double> values;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    double v;
    if (!absl::SimpleAtod(part, &v) || !(v > 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, " '", text, "': want positive numbers separated by commas"));
    }
    values.push_back(v);
  }
  return values;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read '", path, "'"));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

HttpPostOptions ShortCall() {
  HttpPostOptions o;
  o.timeout = absl::Seconds(10);
  return o;
}

// The model's inputs, from the protocol's own metadata call.
absl::StatusOr<std::vector<InputSpec>> FetchInputs(const BenchCommandOptions& o,
                                                   const std::string& url) {
  if (o.protocol == "grpc") return GrpcModelInputs(url, o.model, o.version);
  std::string target = absl::StrCat(url, "/v2/models/", o.model);
  if (!o.version.empty()) absl::StrAppend(&target, "/versions/", o.version);
  ASSIGN_OR_RETURN(HttpReply reply,
                   HttpCall("GET", target, "", "", {}, ShortCall()));
  if (reply.status != 200) {
    return absl::NotFoundError(
        absl::StrCat("GET ", target, ": HTTP ", reply.status, " ", reply.body));
  }
  return ParseModelMetadataInputs(reply.body);
}

absl::StatusOr<std::vector<MetricSample>> Scrape(const std::string& url) {
  ASSIGN_OR_RETURN(HttpReply reply,
                   HttpCall("GET", url, "", "", {}, ShortCall()));
  if (reply.status != 200) {
    return absl::UnavailableError(
        absl::StrCat("GET ", url, ": HTTP ", reply.status));
  }
  return ParsePrometheusText(reply.body);
}

absl::Status WriteTo(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out)
    return absl::InternalError(absl::StrCat("cannot write '", path, "'"));
  return absl::OkStatus();
}

// Everything that can fail before the first request: flags, the server, the
// model, the request.
struct Plan {
  std::string url;
  std::string metrics_url;
  BenchContext context;
  std::vector<LoadOptions> points;
  std::unique_ptr<Transport> transport;
};

absl::StatusOr<Plan> Prepare(const BenchCommandOptions& o) {
  Plan plan;
  if (o.protocol != "http" && o.protocol != "grpc") {
    return absl::InvalidArgumentError(
        absl::StrCat("--protocol '", o.protocol, "': want http or grpc"));
  }
  if (o.binary && o.protocol != "http") {
    return absl::InvalidArgumentError(
        "--binary is for --protocol http (gRPC always sends raw tensors)");
  }
  if (o.batch_size < 1) {
    return absl::InvalidArgumentError("--batch-size must be at least 1");
  }
  plan.url = !o.url.empty()         ? o.url
             : o.protocol == "http" ? "http://127.0.0.1:8000"
                                    : "127.0.0.1:8001";
  while (!plan.url.empty() && plan.url.back() == '/') plan.url.pop_back();
  if (!o.no_metrics) {
    plan.metrics_url = !o.metrics_url.empty() ? o.metrics_url
                       : o.protocol == "http" ? plan.url + "/metrics"
                                              : "";
  }

  // The load points.
  LoadOptions base;
  base.rows_per_request = o.batch_size;
  base.warmup = absl::Seconds(o.warmup_seconds);
  base.window = absl::Seconds(o.window_seconds);
  base.max_windows = std::max(1, o.max_windows);
  base.stability = o.stability_percent / 100.0;
  base.drain_timeout = absl::Seconds(o.timeout_seconds + 5);
  if (!o.request_rate.empty()) {
    ArrivalOptions arrivals;
    arrivals.seed = o.seed;
    RETURN_IF_ERROR(ParseArrivalPattern(o.arrivals, &arrivals));
    ASSIGN_OR_RETURN(std::vector<double> rates,
                     ParseList("--request-rate", o.request_rate));
    for (double rate : rates) {
      LoadOptions p = base;
      arrivals.rate = rate;
      p.arrivals = arrivals;
      plan.points.push_back(p);
    }
  } else {
    ASSIGN_OR_RETURN(std::vector<double> levels,
                     ParseList("--concurrency", o.concurrency));
    for (double c : levels) {
      LoadOptions p = base;
      p.concurrency = static_cast<int>(c);
      if (p.concurrency != c) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--concurrency '", o.concurrency, "': want whole numbers"));
      }
      plan.points.push_back(p);
    }
  }

  // The requests: one from --input-data, or random ones (several when some
  // dimension is a range, so requests differ in shape).
  std::vector<InferenceRequest> requests;
  if (!o.input_data.empty()) {
    ASSIGN_OR_RETURN(std::string json, ReadFile(o.input_data));
    auto keep = std::make_shared<std::string>(std::move(json));
    absl::StatusOr<InferenceRequest> parsed =
        ParseInferenceRequest(*keep, {}, keep);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--input-data '", o.input_data, "': ", parsed.status().message()));
    }
    // Rows per request: the first input's leading dimension.
    if (!parsed->inputs.empty() && !parsed->inputs[0].shape().empty()) {
      plan.context.rows_per_request = parsed->inputs[0].shape()[0];
    }
    requests.push_back(*std::move(parsed));
  } else {
    RandomInputOptions random;
    random.batch_rows = o.batch_size;
    random.int_max = o.int_max;
    for (const std::string& s : o.shapes) {
      RETURN_IF_ERROR(ParseShapeFlag(s, &random.shapes));
    }
    ASSIGN_OR_RETURN(std::vector<InputSpec> specs, FetchInputs(o, plan.url));
    int distinct = o.distinct_requests;
    if (distinct <= 0) distinct = HasRanges(random.shapes) ? 64 : 1;
    for (int i = 0; i < distinct; ++i) {
      random.seed = o.seed + static_cast<uint64_t>(i);
      InferenceRequest& r = requests.emplace_back();
      ASSIGN_OR_RETURN(r.inputs, RandomInputs(specs, random));
    }
    plan.context.rows_per_request = o.batch_size;
  }
  for (LoadOptions& p : plan.points) {
    p.rows_per_request = plan.context.rows_per_request;
  }

  plan.context.model = o.model;
  plan.context.url = plan.url;
  plan.context.generator_threads = o.protocol == "grpc" ? 1 : o.threads;
  const absl::Duration timeout = absl::Seconds(o.timeout_seconds);
  if (o.protocol == "grpc") {
    plan.context.protocol = "grpc";
    int max_c = 1;
    for (const LoadOptions& p : plan.points)
      max_c = std::max(max_c, p.concurrency);
    GrpcTransportOptions g;
    g.target = plan.url;
    g.channels = std::max(1, (max_c + 99) / 100);
    g.timeout = timeout;
    std::vector<inference::ModelInferRequest> messages;
    for (const InferenceRequest& r : requests) {
      messages.push_back(MakeModelInferRequest(o.model, o.version, r.inputs));
    }
    plan.transport = MakeGrpcTransport(g, std::move(messages));
    return plan;
  }
  plan.context.protocol = o.binary ? "http-binary" : "http";
  ASSIGN_OR_RETURN(WebhookUrl url, ParseWebhookUrl(plan.url));
  if (url.https) {
    return absl::InvalidArgumentError(
        absl::StrCat("--url '", plan.url, "': https is not supported"));
  }
  HttpTransportOptions h;
  h.host = url.host;
  h.port = url.port;
  h.target =
      absl::StrCat(url.target == "/" ? "" : url.target, "/v2/models/", o.model);
  if (!o.version.empty()) absl::StrAppend(&h.target, "/versions/", o.version);
  absl::StrAppend(&h.target, "/infer");
  for (InferenceRequest& r : requests) {
    r.binary_data_output = o.binary;
    EncodedBody body = EncodeInferenceRequest(r, o.binary);
    h.bodies.push_back(
        {std::move(body.body), o.binary ? body.json_size : size_t{0}});
  }
  h.threads = std::max(1, o.threads);
  h.max_connections = std::max(1, o.max_connections);
  h.timeout = timeout;
  ASSIGN_OR_RETURN(plan.transport, MakeHttpTransport(std::move(h)));
  return plan;
}

}  // namespace

CLI::App* AddBenchCommand(CLI::App& app, BenchCommandOptions* o) {
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Load-test a running server: throughput, latency percentiles, errors, "
      "and the server's queue/compute split and batch size from /metrics.");
  cmd->add_option("-m,--model", o->model, "Model to load")->required();
  cmd->add_option("--model-version", o->version,
                  "Version (default: the server's choice)");
  cmd->add_option("--protocol", o->protocol, "http or grpc")
      ->capture_default_str();
  cmd->add_option("-u,--url", o->url,
                  "Server: http://HOST:PORT for http (default "
                  "http://127.0.0.1:8000), HOST:PORT for grpc (default "
                  "127.0.0.1:8001)");
  cmd->add_flag("--binary", o->binary,
                "HTTP: send inputs and ask for outputs as binary tensors");
  cmd->add_option("--concurrency", o->concurrency,
                  "Closed loop: calls in flight, a comma-separated sweep "
                  "(e.g. 1,8,64,256)")
      ->capture_default_str();
  cmd->add_option("--request-rate", o->request_rate,
                  "Open loop: requests per second, a comma-separated sweep "
                  "(replaces --concurrency)");
  cmd->add_option(
         "--arrivals", o->arrivals,
         "Open-loop arrivals: poisson, constant or bursty:ON_MS/OFF_MS")
      ->capture_default_str();
  cmd->add_option("-b,--batch-size", o->batch_size,
                  "Rows per request (random inputs)")
      ->capture_default_str();
  cmd->add_option("--shape", o->shapes,
                  "Shape of an input with variable dimensions, without the "
                  "batch dimension: NAME:D1,D2 (repeatable); a dimension may "
                  "be a range LO-HI drawn per request, e.g. input_ids:8-128");
  cmd->add_option("--distinct-requests", o->distinct_requests,
                  "Random requests made up front and sent in turn (default: "
                  "64 when a --shape has a range, else 1)");
  cmd->add_option("--int-max", o->int_max,
                  "Random integer inputs are drawn from [0, int-max)")
      ->capture_default_str();
  cmd->add_option("--input-data", o->input_data,
                  "A KServe v2 JSON request to send instead of random inputs");
  cmd->add_option("--warmup-seconds", o->warmup_seconds)->capture_default_str();
  cmd->add_option("--window-seconds", o->window_seconds,
                  "Length of one measurement window")
      ->capture_default_str();
  cmd->add_option("--max-windows", o->max_windows,
                  "Windows to try before reporting an unstable measurement")
      ->capture_default_str();
  cmd->add_option("--stability-percent", o->stability_percent,
                  "The last 3 windows' throughput and mean latency must agree "
                  "within this")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "HTTP event-loop threads")
      ->capture_default_str();
  cmd->add_option("--max-connections", o->max_connections,
                  "HTTP connections at most (open loop)")
      ->capture_default_str();
  cmd->add_option("--timeout-seconds", o->timeout_seconds, "Per request")
      ->capture_default_str();
  cmd->add_option("--metrics-url", o->metrics_url,
                  "Ferry's /metrics (default: the HTTP server's)");
  cmd->add_flag("--no-metrics", o->no_metrics, "Do not scrape /metrics");
  cmd->add_option("--json", o->json_file, "Also write the results as JSON");
  cmd->add_option("--csv", o->csv_file, "Also write the results as CSV");
  cmd->add_option("--seed", o->seed, "Random inputs and arrivals")
      ->capture_default_str();
  cmd->footer(
      "Examples:\n"
      "  ferry bench -m fraud_xgb --concurrency 1,8,64,256\n"
      "  ferry bench -m fraud_xgb --protocol grpc --request-rate 500,2000\n"
      "  ferry bench -m text_classifier --shape input_ids:64 --binary");
  return cmd;
}

int RunBenchCommand(const BenchCommandOptions& options, std::ostream& out,
                    std::ostream& err) {
  absl::StatusOr<Plan> plan = Prepare(options);
  if (!plan.ok()) {
    err << "ferry bench: " << plan.status().message() << "\n";
    return 2;
  }
  std::vector<BenchPoint> points;
  bool errors = false;
  for (const LoadOptions& load : plan->points) {
    std::optional<std::vector<MetricSample>> before;
    if (!plan->metrics_url.empty()) {
      absl::StatusOr<std::vector<MetricSample>> s = Scrape(plan->metrics_url);
      if (s.ok()) {
        before = std::move(*s);
      } else {
        err << "ferry bench: no server-side split: " << s.status().message()
            << "\n";
      }
    }
    BenchPoint point;
    point.load = RunLoad(plan->transport.get(), load);
    if (before.has_value()) {
      absl::StatusOr<std::vector<MetricSample>> after =
          Scrape(plan->metrics_url);
      if (after.ok()) {
        point.server = ComputeServerSplit(*before, *after, options.model);
      }
    }
    errors = errors || point.load.failed > 0 || point.load.abandoned > 0;
    err << "ferry bench: "
        << (load.concurrency > 0
                ? absl::StrCat("concurrency ", load.concurrency)
                : absl::StrCat("rate ", load.arrivals->rate, "/s"))
        << ": " << static_cast<int64_t>(point.load.requests_per_s)
        << " req/s, p99 " << point.load.latency.p99_us / 1e3 << " ms"
        << (point.load.stable ? "" : " (not stable)") << "\n";
    points.push_back(std::move(point));
  }
  out << FormatTable(plan->context, points);
  absl::Status written = absl::OkStatus();
  if (!options.json_file.empty()) {
    written.Update(
        WriteTo(options.json_file, FormatJson(plan->context, points)));
  }
  if (!options.csv_file.empty()) {
    written.Update(WriteTo(options.csv_file, FormatCsv(points)));
  }
  if (!written.ok()) {
    err << "ferry bench: " << written.message() << "\n";
    return 2;
  }
  return errors ? 1 : 0;
}

}  // namespace ferry
