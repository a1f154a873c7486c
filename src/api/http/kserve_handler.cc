// SPDX-License-Identifier: Apache-2.0
#include "api/http/kserve_handler.h"

#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/http/jobs_handler.h"
#include "api/inference_statistics.h"
#include "api/json_writer.h"
#include "api/kserve_json.h"
#include "boost/asio/post.hpp"
#include "config/model_config.h"
#include "google/protobuf/util/json_util.h"
#include "simdjson.h"

namespace ferry {
namespace http = boost::beast::http;
namespace {

constexpr char kServerName[] = "ferry";
constexpr char kServerVersion[] = "0.1.0";
constexpr const char* kExtensions[] = {"binary_tensor_data", "model_repository",
                                       "model_configuration", "schedule_policy",
                                       "statistics"};

HttpResponse MakeResponse(http::status code, std::string body,
                          absl::string_view content_type = "application/json") {
  HttpResponse res{code, 11};
  if (!body.empty() || code == http::status::ok) {
    res.set(
        http::field::content_type,
        boost::beast::string_view(content_type.data(), content_type.size()));
  }
  res.body() = std::move(body);
  return res;
}

HttpResponse Empty(http::status code) { return HttpResponse{code, 11}; }

HttpResponse Json(std::string body) {
  return MakeResponse(http::status::ok, std::move(body));
}

// Decodes %XX escapes of one path segment.
absl::StatusOr<std::string> PercentDecode(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    int value = 0;
    if (i + 2 >= s.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("path segment '", s, "' has a truncated % escape"));
    }
    for (int k = 1; k <= 2; ++k) {
      const char c = s[i + k];
      int digit = 0;
      if (c >= '0' && c <= '9') {
        digit = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        digit = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        digit = c - 'A' + 10;
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("path segment '", s, "' has a bad % escape"));
      }
      value = value * 16 + digit;
    }
    out.push_back(static_cast<char>(value));
    i += 2;
  }
  return out;
}

void WriteTensorSpecs(JsonWriter& w, const std::vector<TensorSpec>& specs,
                      bool batched) {
  w.BeginArray();
  for (const TensorSpec& t : specs) {
    w.BeginObject();
    w.Key("name").String(t.name);
    w.Key("datatype").String(ToString(t.dtype));
    w.Key("shape").BeginArray();
    if (batched) w.Int(-1);
    for (int64_t d : t.dims) w.Int(d);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

void WriteDuration(JsonWriter& w, absl::string_view key,
                   const DurationStatistic& d) {
  w.Key(key).BeginObject();
  w.Key("count").Uint(d.count);
  w.Key("ns").Uint(d.ns);
  w.EndObject();
}

// Parses an optional JSON object body; an empty body is an empty object.
absl::Status ParseOptionalObject(const std::string& body,
                                 simdjson::dom::parser& parser,
                                 simdjson::dom::object* out) {
  const std::string text = body.empty() ? std::string("{}") : body;
  simdjson::dom::element doc;
  if (auto err = parser.parse(text).get(doc); err != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request body is not valid JSON: ", simdjson::error_message(err)));
  }
  if (doc.get_object().get(*out) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError("request body must be a JSON object");
  }
  return absl::OkStatus();
}

HttpResponse EncodeInferResult(absl::StatusOr<InferenceResponse> result,
                               const std::vector<RequestedOutput>& requested,
                               bool binary_data_output) {
  if (!result.ok()) return ErrorResponse(result.status());
  EncodedInferenceResponse encoded =
      EncodeInferenceResponse(*result, requested, binary_data_output);
  if (!encoded.has_binary) return Json(std::move(encoded.body));
  HttpResponse res = MakeResponse(http::status::ok, std::move(encoded.body),
                                  "application/octet-stream");
  res.set("Inference-Header-Content-Length", std::to_string(encoded.json_size));
  return res;
}

}  // namespace

http::status HttpStatusFromCode(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return http::status::ok;
    case absl::StatusCode::kInvalidArgument:
      return http::status::bad_request;
    case absl::StatusCode::kNotFound:
      return http::status::not_found;
    case absl::StatusCode::kResourceExhausted:
      return http::status::too_many_requests;
    case absl::StatusCode::kUnimplemented:
      return http::status::not_implemented;
    case absl::StatusCode::kUnavailable:
      return http::status::service_unavailable;
    case absl::StatusCode::kDeadlineExceeded:
      return http::status::gateway_timeout;
    default:
      return http::status::internal_server_error;
  }
}

HttpResponse ErrorResponse(http::status code, absl::string_view message) {
  HttpResponse res = MakeResponse(code, ErrorToJson(message));
  if (code == http::status::service_unavailable ||
      code == http::status::too_many_requests) {
    res.set(http::field::retry_after, "1");
  }
  return res;
}

RequestBodyFile::~RequestBodyFile() {
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

HttpResponse ErrorResponse(const absl::Status& status) {
  return ErrorResponse(HttpStatusFromCode(status.code()), status.message());
}

// Where a /v2/models/... or /v2/repository/... path points.
struct KserveHandler::Route {
  std::string model;
  std::optional<int64_t> version;
};

KserveHandler::KserveHandler(ModelManager* manager,
                             std::function<std::string()> metrics_text,
                             boost::asio::any_io_executor blocking,
                             JobsHandler* jobs)
    : manager_(manager),
      metrics_text_(std::move(metrics_text)),
      blocking_(std::move(blocking)),
      jobs_(jobs) {}

void KserveHandler::Handle(HttpRequest request,
                           boost::asio::any_io_executor executor,
                           Respond respond) {
  // Nothing below throws on bad input; this guards against allocation
  // failures so that no exception reaches the I/O loop.
  try {
    absl::string_view target(request.target().data(), request.target().size());
    target = target.substr(0, target.find('?'));
    if (target == "/v1" || absl::StartsWith(target, "/v1/")) {
      if (jobs_ == nullptr) {
        return respond(ErrorResponse(http::status::not_found,
                                     "the job API (/v1) is not enabled"));
      }
      return jobs_->Handle(std::move(request), std::move(executor),
                           std::move(respond));
    }
    std::vector<absl::string_view> raw =
        absl::StrSplit(target, '/', absl::SkipEmpty());
    std::vector<std::string> segs;
    for (absl::string_view s : raw) {
      absl::StatusOr<std::string> decoded = PercentDecode(s);
      if (!decoded.ok()) return respond(ErrorResponse(decoded.status()));
      segs.push_back(*std::move(decoded));
    }
    const http::verb method = request.method();
    auto expect = [&](http::verb wanted) {
      if (method == wanted) return true;
      HttpResponse res = ErrorResponse(
          http::status::method_not_allowed,
          absl::StrCat("method ", std::string(request.method_string()),
                       " is not allowed on ", target, "; use ",
                       std::string(http::to_string(wanted))));
      res.set(http::field::allow, http::to_string(wanted));
      respond(std::move(res));
      return false;
    };
    auto not_found = [&] {
      respond(ErrorResponse(http::status::not_found,
                            absl::StrCat("unknown path ", target)));
    };

    if (segs.size() == 1 && segs[0] == "metrics") {
      if (!expect(http::verb::get)) return;
      std::string text = metrics_text_ ? metrics_text_() : std::string();
      if (text.empty()) {
        return respond(
            ErrorResponse(http::status::not_found, "metrics are not enabled"));
      }
      return respond(MakeResponse(http::status::ok, std::move(text),
                                  "text/plain; version=0.0.4; charset=utf-8"));
    }
    if (segs.empty() || segs[0] != "v2") return not_found();
    if (segs.size() == 1) {
      if (!expect(http::verb::get)) return;
      std::string out;
      JsonWriter w(&out);
      w.BeginObject().Key("name").String(kServerName);
      w.Key("version").String(kServerVersion);
      w.Key("extensions").BeginArray();
      for (const char* e : kExtensions) w.String(e);
      w.EndArray().EndObject();
      return respond(Json(std::move(out)));
    }
    if (segs[1] == "health" && segs.size() == 3 &&
        (segs[2] == "live" || segs[2] == "ready")) {
      if (!expect(http::verb::get)) return;
      const bool ok = segs[2] == "live" ? manager_->Live() : manager_->Ready();
      return respond(
          Empty(ok ? http::status::ok : http::status::service_unavailable));
    }
    if (segs[1] == "repository") {
      if (segs.size() == 3 && segs[2] == "index") {
        if (!expect(http::verb::post)) return;
        return respond(RepositoryIndex(request));
      }
      if (segs.size() == 5 && segs[2] == "models" &&
          (segs[4] == "load" || segs[4] == "unload")) {
        if (!expect(http::verb::post)) return;
        return LoadOrUnload(request, Route{segs[3], std::nullopt},
                            segs[4] == "load", std::move(executor),
                            std::move(respond));
      }
      return not_found();
    }
    if (segs[1] != "models" || segs.size() < 3) return not_found();
    if (segs.size() == 3 && segs[2] == "stats") {
      if (!expect(http::verb::get)) return;
      return respond(Statistics(Route{}));
    }
    Route route{segs[2], std::nullopt};
    size_t i = 3;
    if (segs.size() >= i + 2 && segs[i] == "versions") {
      int64_t v = 0;
      if (!absl::SimpleAtoi(segs[i + 1], &v) || v <= 0) {
        return respond(ErrorResponse(
            http::status::bad_request,
            absl::StrCat("version '", segs[i + 1],
                         "' in the path is not a positive integer")));
      }
      route.version = v;
      i += 2;
    }
    if (segs.size() == i) {
      if (!expect(http::verb::get)) return;
      return respond(ModelMetadata(route));
    }
    if (segs.size() != i + 1) return not_found();
    const std::string& action = segs[i];
    if (action == "infer") {
      if (!expect(http::verb::post)) return;
      return Infer(request, route, std::move(executor), std::move(respond));
    }
    if (action == "ready") {
      if (!expect(http::verb::get)) return;
      return respond(ModelReady(route));
    }
    if (action == "config") {
      if (!expect(http::verb::get)) return;
      return respond(ModelConfig(route));
    }
    if (action == "stats") {
      if (!expect(http::verb::get)) return;
      return respond(Statistics(route));
    }
    return not_found();
  } catch (const std::exception& e) {
    if (respond) {
      respond(ErrorResponse(http::status::internal_server_error,
                            absl::StrCat("internal error: ", e.what())));
    }
  }
}

void KserveHandler::Infer(HttpRequest& request, const Route& route,
                          boost::asio::any_io_executor executor,
                          Respond respond) {
  auto body = std::make_shared<std::string>(std::move(request.body()));
  absl::string_view json = *body;
  absl::string_view binary;
  if (auto it = request.find("Inference-Header-Content-Length");
      it != request.end()) {
    const absl::string_view value(it->value().data(), it->value().size());
    uint64_t header_size = 0;
    if (!absl::SimpleAtoi(value, &header_size)) {
      return respond(
          ErrorResponse(http::status::bad_request,
                        absl::StrCat("Inference-Header-Content-Length '", value,
                                     "' is not a non-negative integer")));
    }
    if (header_size == 0) {
      return respond(ErrorResponse(
          http::status::not_implemented,
          "raw binary requests (Inference-Header-Content-Length: 0) are not "
          "supported; send a JSON header with binary_data_size per input"));
    }
    if (header_size > body->size()) {
      return respond(ErrorResponse(
          http::status::bad_request,
          absl::StrCat("Inference-Header-Content-Length ", header_size,
                       " is larger than the body (", body->size(), " bytes)")));
    }
    json = json.substr(0, header_size);
    binary = absl::string_view(*body).substr(header_size);
  }
  absl::StatusOr<InferenceRequest> parsed =
      ParseInferenceRequest(json, binary, body);
  if (!parsed.ok()) return respond(ErrorResponse(parsed.status()));
  std::vector<RequestedOutput> requested = parsed->outputs;
  const bool binary_data_output = parsed->binary_data_output;
  manager_->Infer(
      route.model, route.version, *std::move(parsed),
      [executor = std::move(executor), respond = std::move(respond),
       requested = std::move(requested),
       binary_data_output](absl::StatusOr<InferenceResponse> result) mutable {
        // Runs on an engine or batcher thread: hand the encoding back to the
        // connection.
        boost::asio::post(
            executor,
            [respond = std::move(respond), requested = std::move(requested),
             binary_data_output, result = std::move(result)]() mutable {
              respond(EncodeInferResult(std::move(result), requested,
                                        binary_data_output));
            });
      });
}

HttpResponse KserveHandler::ModelMetadata(const Route& route) const {
  absl::StatusOr<ModelVersionInfo> info =
      manager_->Find(route.model, route.version);
  if (!info.ok()) return ErrorResponse(info.status());
  const ModelOptions& options = info->options;
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("name").String(route.model);
  w.Key("versions").BeginArray();
  for (const ModelStatus& m : manager_->List()) {
    if (m.name != route.model) continue;
    for (const ModelVersionStatus& v : m.versions) {
      if (v.state == ModelState::kReady) w.String(std::to_string(v.version));
    }
  }
  w.EndArray();
  w.Key("platform").String(options.platform);
  const bool batched = options.max_batch_size > 0;
  w.Key("inputs");
  WriteTensorSpecs(w, options.inputs, batched);
  w.Key("outputs");
  WriteTensorSpecs(w, options.outputs, batched);
  w.EndObject();
  return Json(std::move(out));
}

HttpResponse KserveHandler::ModelReady(const Route& route) const {
  absl::StatusOr<bool> ready = manager_->ModelReady(route.model, route.version);
  if (!ready.ok()) return ErrorResponse(ready.status());
  return Empty(*ready ? http::status::ok : http::status::service_unavailable);
}

HttpResponse KserveHandler::ModelConfig(const Route& route) const {
  absl::StatusOr<ModelVersionInfo> info =
      manager_->Find(route.model, route.version);
  if (!info.ok()) return ErrorResponse(info.status());
  google::protobuf::util::JsonPrintOptions print;
  print.preserve_proto_field_names = true;  // Triton's spelling
  std::string out;
  auto status = google::protobuf::util::MessageToJsonString(
      ToModelConfigProto(info->options), &out, print);
  if (!status.ok()) {
    return ErrorResponse(
        http::status::internal_server_error,
        absl::StrCat("cannot write the config of model '", route.model,
                     "' as JSON: ", status.ToString()));
  }
  return Json(std::move(out));
}

HttpResponse KserveHandler::Statistics(const Route& route) const {
  std::optional<std::string> name;
  if (!route.model.empty()) name = route.model;
  absl::StatusOr<std::vector<ModelVersionStatistics>> stats =
      manager_->Statistics(name, route.version);
  if (!stats.ok()) return ErrorResponse(stats.status());
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("model_stats").BeginArray();
  for (const ModelVersionStatistics& s : *stats) {
    const InferenceStatistics summary = SummarizeStatistics(s);
    w.BeginObject();
    w.Key("name").String(summary.name);
    w.Key("version").String(std::to_string(summary.version));
    w.Key("last_inference").Uint(summary.last_inference_ms);
    w.Key("inference_count").Uint(summary.inference_count);
    w.Key("execution_count").Uint(summary.execution_count);
    w.Key("inference_stats").BeginObject();
    WriteDuration(w, "success", summary.success);
    WriteDuration(w, "fail", summary.fail);
    WriteDuration(w, "queue", summary.queue);
    WriteDuration(w, "compute_infer", summary.compute_infer);
    w.EndObject();
    // Triton lists batch_stats per exact batch size; Ferry keeps a histogram,
    // so it reports the buckets: every batch of up to max_rows rows that was
    // not counted in a smaller bucket.
    w.Key("batch_size_histogram").BeginArray();
    const HistogramSnapshot& h = s.stats.batch_size_rows;
    for (size_t b = 0; b < h.counts.size(); ++b) {
      if (h.counts[b] == 0) continue;
      w.BeginObject();
      if (b < h.bounds.size()) {
        w.Key("max_rows").Double(h.bounds[b]);
      } else {
        w.Key("max_rows").Null();
      }
      w.Key("count").Uint(h.counts[b]);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray().EndObject();
  return Json(std::move(out));
}

HttpResponse KserveHandler::RepositoryIndex(const HttpRequest& request) const {
  simdjson::dom::parser parser;
  simdjson::dom::object body;
  if (absl::Status s = ParseOptionalObject(request.body(), parser, &body);
      !s.ok()) {
    return ErrorResponse(s);
  }
  bool ready_only = false;
  simdjson::dom::element ready;
  if (body["ready"].get(ready) == simdjson::SUCCESS &&
      ready.get_bool().get(ready_only) != simdjson::SUCCESS) {
    return ErrorResponse(http::status::bad_request,
                         "'ready' must be true or false");
  }
  std::map<std::string, const ModelStatus*> known;
  const std::vector<ModelStatus> statuses = manager_->List();
  for (const ModelStatus& m : statuses) known[m.name] = &m;
  absl::StatusOr<std::vector<std::string>> on_disk = manager_->ScanModelNames();
  if (!on_disk.ok()) return ErrorResponse(on_disk.status());
  std::map<std::string, const ModelStatus*> all = known;
  for (const std::string& name : *on_disk) all.emplace(name, nullptr);

  std::string out;
  JsonWriter w(&out);
  w.BeginArray();
  auto entry = [&](const std::string& name, const int64_t* version,
                   ModelState state, const std::string& reason) {
    if (ready_only && state != ModelState::kReady) return;
    w.BeginObject().Key("name").String(name);
    if (version != nullptr) w.Key("version").String(std::to_string(*version));
    w.Key("state").String(ToString(state));
    w.Key("reason").String(reason);
    w.EndObject();
  };
  for (const auto& [name, status] : all) {
    if (status == nullptr) {
      entry(name, nullptr, ModelState::kUnloaded, "not loaded");
    } else if (status->versions.empty()) {
      entry(name, nullptr, ModelState::kUnavailable, status->reason);
    } else {
      for (const ModelVersionStatus& v : status->versions) {
        entry(name, &v.version, v.state,
              v.reason.empty() ? status->reason : v.reason);
      }
    }
  }
  w.EndArray();
  return Json(std::move(out));
}

void KserveHandler::LoadOrUnload(const HttpRequest& request, const Route& route,
                                 bool load,
                                 boost::asio::any_io_executor executor,
                                 Respond respond) {
  simdjson::dom::parser parser;
  simdjson::dom::object body;
  if (absl::Status s = ParseOptionalObject(request.body(), parser, &body);
      !s.ok()) {
    return respond(ErrorResponse(s));
  }
  simdjson::dom::object params;
  if (body["parameters"].get_object().get(params) == simdjson::SUCCESS &&
      params.size() > 0) {
    for (auto [key, value] : params) {
      if (key != "unload_dependents") {
        return respond(ErrorResponse(
            http::status::not_implemented,
            absl::StrCat("parameters.", std::string(key),
                         " (config or file overrides) is not supported")));
      }
    }
  }
  // Loading runs the engine's load and warm-up: seconds. Keep it off the I/O
  // threads.
  boost::asio::post(blocking_, [manager = manager_, load, name = route.model,
                                executor = std::move(executor),
                                respond = std::move(respond)]() mutable {
    absl::Status status = load ? manager->Load(name) : manager->Unload(name);
    boost::asio::post(executor, [status = std::move(status),
                                 respond = std::move(respond)]() mutable {
      respond(status.ok() ? Empty(http::status::ok) : ErrorResponse(status));
    });
  });
}

}  // namespace ferry
