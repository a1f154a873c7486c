// SPDX-License-Identifier: Apache-2.0
#include "cli/serve_command.h"

#include <pthread.h>
#include <signal.h>

#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "api/grpc/grpc_server.h"
#include "api/http/http_server.h"
#include "core/logging.h"
#include "metrics/collect.h"
#include "metrics/prometheus_text.h"
#include "repository/model_manager.h"

namespace ferry {

CLI::App* AddServeCommand(CLI::App& app, ServeCommandOptions* options) {
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Serve a model repository over HTTP (KServe v2 REST) until SIGTERM");
  cmd->add_option(
         "--model-repository", options->model_repository,
         "Directory laid out as <model>/config.pbtxt and <model>/<version>/")
      ->required();
  cmd->add_option("--http-address", options->http_address,
                  "Address the HTTP server binds")
      ->capture_default_str();
  cmd->add_option("--http-port", options->http_port,
                  "HTTP port; 0 picks a free one (printed on startup)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--grpc-port", options->grpc_port,
                  "gRPC port; 0 picks a free one (printed on startup)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--http-threads", options->http_threads,
                  "HTTP I/O threads (requests waiting in a batcher hold none)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--grace-seconds", options->grace_seconds,
                  "On SIGTERM, how long queued requests may still run")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--max-body-bytes", options->max_body_bytes,
                  "Largest request body; larger ones get 413")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->footer(
      "Example:\n"
      "  ferry serve --model-repository example-models --http-port 8000\n"
      "  curl -s localhost:8000/v2/models/fraud_xgb/infer \\\n"
      "      -d @tools/examples/fraud_xgb.json\n"
      "SIGTERM or SIGINT drains: new inferences get 503, accepted ones finish "
      "(up to --grace-seconds), then the process exits 0.");
  return cmd;
}

int RunServeCommand(const ServeCommandOptions& options,
                    const EngineRegistry& engines, std::ostream& out,
                    std::ostream& err) {
  // Every thread started from here on (batchers, engines, HTTP) inherits the
  // mask, so the signals reach only the sigwait below.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  if (int rc = pthread_sigmask(SIG_BLOCK, &signals, nullptr); rc != 0) {
    err << "ferry serve: pthread_sigmask: " << std::strerror(rc) << "\n";
    return 1;
  }

  const absl::Duration grace = absl::Seconds(options.grace_seconds);
  ModelManager::Options manager_options;
  manager_options.unload_grace = grace;
  ModelManager manager(options.model_repository, &engines, manager_options);

  HttpServerOptions http;
  http.address = options.http_address;
  http.port = options.http_port;
  http.io_threads = options.http_threads;
  http.max_body_bytes = options.max_body_bytes;
  http.metrics_text = [&manager] {
    return RenderPrometheus(CollectMetrics(manager));
  };
  // Health and metadata answer while the models load; /v2/health/ready says
  // false until LoadAll has finished.
  absl::StatusOr<std::unique_ptr<HttpServer>> server =
      HttpServer::Start(std::move(http), &manager);
  if (!server.ok()) {
    err << "ferry serve: HTTP server: " << server.status().message() << "\n";
    return 1;
  }
  GrpcServerOptions grpc;
  grpc.address = options.http_address;
  grpc.port = options.grpc_port;
  grpc.max_message_bytes = options.max_body_bytes;
  absl::StatusOr<std::unique_ptr<GrpcServer>> grpc_server =
      GrpcServer::Start(std::move(grpc), &manager);
  if (!grpc_server.ok()) {
    err << "ferry serve: gRPC server: " << grpc_server.status().message()
        << "\n";
    (*server)->Stop();
    return 1;
  }
  if (absl::Status s = manager.LoadAll(); !s.ok()) {
    err << "ferry serve: " << s.message() << "\n";
    manager.Shutdown(absl::ZeroDuration());
    (*grpc_server)->Stop(absl::ZeroDuration());
    (*server)->Stop();
    return 1;
  }
  std::string example_model;
  int ready = 0;
  int total = 0;
  for (const ModelStatus& m : manager.List()) {
    ++total;
    if (!m.ready()) {
      err << "ferry serve: model '" << m.name << "' is not ready: "
          << (m.reason.empty() && !m.versions.empty() ? m.versions[0].reason
                                                      : m.reason)
          << "\n";
      continue;
    }
    ++ready;
    if (example_model.empty()) example_model = m.name;
  }
  const int port = (*server)->port();
  out << "ferry serve: " << ready << "/" << total << " models ready; HTTP on "
      << options.http_address << ":" << port << " (http_port=" << port
      << "); gRPC on " << options.http_address << ":" << (*grpc_server)->port()
      << " (grpc_port=" << (*grpc_server)->port()
      << "); try: curl -s localhost:" << port << "/v2/models/"
      << (example_model.empty() ? "MODEL" : example_model) << std::endl;

  int signal_number = 0;
  if (int rc = sigwait(&signals, &signal_number); rc != 0) {
    err << "ferry serve: sigwait: " << std::strerror(rc) << "\n";
  }
  FERRY_LOG(kInfo, "ferry serve: ", strsignal(signal_number),
            ": draining (grace ", absl::FormatDuration(grace), ")");
  // New inferences now get 503; accepted ones run or are answered 503 when
  // the grace runs out. Then the HTTP server writes what it owes and stops.
  manager.Shutdown(grace);
  // Every accepted call has its answer now; the servers write what they owe.
  (*grpc_server)->Stop(absl::Seconds(1));
  (*server)->Stop();
  FERRY_LOG(kInfo, "ferry serve: stopped");
  return 0;
}

}  // namespace ferry
