// SPDX-License-Identifier: Apache-2.0
#include "cli/serve_command.h"

#include <pthread.h>
#include <signal.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "api/grpc/grpc_server.h"
#include "api/http/http_server.h"
#include "api/http/jobs_handler.h"
#include "core/logging.h"
#include "core/status_macros.h"
#include "jobs/data_roots.h"
#include "jobs/file_store.h"
#include "jobs/files.h"
#include "jobs/job_notifier.h"
#include "jobs/job_runner.h"
#include "jobs/webhook/http_post.h"
#include "jobs/webhook/webhook.h"
#include "metrics/collect.h"
#include "metrics/prometheus_text.h"
#include "repository/model_manager.h"
#include "storage/sqlite_job_store.h"

namespace ferry {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<std::string> ReadSecret(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat("--webhook-secret-file '", path, "' cannot be read"));
  }
  std::ostringstream s;
  s << in.rdbuf();
  std::string secret(absl::StripAsciiWhitespace(s.str()));
  if (secret.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--webhook-secret-file '", path, "' is empty"));
  }
  return secret;
}

// The offline side of the server: the state directory (locked), the job
// store, the files, the runner, webhooks and the /v1 handler. Members are
// destroyed in reverse order, so the handler goes before the runner, and the
// runner before the notifier it reports to.
struct JobServices {
  DirectoryLock lock;
  std::unique_ptr<SqliteJobStore> store;
  std::unique_ptr<FileStore> files;
  std::unique_ptr<WebhookSender> sender;
  std::unique_ptr<JobNotifier> notifier;
  std::unique_ptr<JobRunner> runner;
  std::unique_ptr<JobsHandler> handler;

  // Stops taking chunks (running ones are given back) and stops webhooks.
  void Stop() {
    runner->Stop();
    if (notifier) notifier->Stop();
  }
};

absl::StatusOr<std::unique_ptr<JobServices>> MakeJobServices(
    const ServeCommandOptions& o, ModelManager* manager) {
  auto j = std::make_unique<JobServices>();
  std::error_code ec;
  const fs::path state = fs::absolute(o.state_dir, ec);
  fs::create_directories(state, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot create --state-dir '", o.state_dir, "': ", ec.message()));
  }
  ASSIGN_OR_RETURN(j->lock, DirectoryLock::Acquire(state));
  ASSIGN_OR_RETURN(j->store,
                   SqliteJobStore::Open((state / "jobs.db").string()));
  ASSIGN_OR_RETURN(j->files, FileStore::Open(state / "files"));
  JobsHandlerOptions handler;
  handler.state_dir = state;
  ASSIGN_OR_RETURN(handler.data_roots,
                   DataRoots::Create(o.data_roots, {state}));
  for (const std::string& prefix : o.input_url_prefixes) {
    if (absl::Status s = ParseWebhookUrl(prefix).status(); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input-url-prefix '", prefix,
                       "': expected http://host[:port][/path] or https://…"));
    }
  }
  handler.input_url_prefixes = o.input_url_prefixes;
  handler.price_per_instance_hour = o.price_per_instance_hour;
  handler.max_pending = o.job_api_max_pending;
  if (!o.webhook_secret_file.empty()) {
    ASSIGN_OR_RETURN(std::string secret, ReadSecret(o.webhook_secret_file));
    j->sender =
        std::make_unique<WebhookSender>(RealClock::Get(), std::move(secret));
    JobNotifier::Options n;
    // Jobs whose results are files of the API name them by file id.
    n.annotate = [files = j->files.get()](const JobRecord& job,
                                          WebhookEvent* e) {
      if (fs::path(job.output_path).parent_path() != files->dir()) return;
      const JobResultFiles ids = RegisterJobResults(*files, job);
      e->output_path = ids.output_file_id;
      e->error_path = ids.error_file_id;
    };
    j->notifier = std::make_unique<JobNotifier>(j->sender.get(), j->store.get(),
                                                std::move(n));
    // Jobs that ended just before the previous process stopped, with their
    // webhook not yet stored; stored ones are still pending in the outbox.
    if (absl::Status s = j->notifier->Recover(j->store.get()); !s.ok()) {
      FERRY_LOG(kWarning, "webhooks: finding jobs that ended unannounced: ",
                s.ToString());
    }
    handler.webhooks_enabled = true;
  }
  JobRunner::Options r;
  // A stable id, so that a restarted server (the lock proves the previous
  // one is dead) takes its chunks back at once instead of after the lease.
  r.worker_id = "local";
  r.reclaim_own_leases = true;
  r.work_dir = state / "parts";
  r.parallel_chunks = o.job_workers;
  // Jobs read and parse their chunks with CPU time nothing else wants.
  r.worker_sched_idle = o.job_cpu_priority == "idle";
  r.fetch_input = [](const std::string& url, const std::string& path,
                     std::function<bool()> stop) {
    HttpPostOptions http;
    http.timeout = absl::Seconds(30);  // connecting, then each silence
    http.cancelled = std::move(stop);
    return HttpDownload(url, path, http).status();
  };
  r.on_terminal = [files = j->files.get(),
                   notifier = j->notifier.get()](const JobRecord& job) {
    RegisterJobResults(*files, job);
    if (notifier != nullptr) notifier->Notify(job);
  };
  j->runner = std::make_unique<JobRunner>(j->store.get(), j->store.get(),
                                          manager, std::move(r));
  j->handler =
      std::make_unique<JobsHandler>(j->runner.get(), j->store.get(), manager,
                                    j->files.get(), std::move(handler));
  return j;
}

}  // namespace

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
  cmd->add_option("--state-dir", options->state_dir,
                  "Job store, part files and uploaded files (one server per "
                  "directory)")
      ->capture_default_str();
  cmd->add_option("--data-root", options->data_roots,
                  "Directory native jobs may read inputs from and write "
                  "outputs to (repeatable; default: none)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--input-url-prefix", options->input_url_prefixes,
                  "A native job's input may be an http(s) URL that starts "
                  "with this prefix; the server downloads it before "
                  "validating (repeatable; default: none)");
  cmd->add_option("--webhook-secret-file", options->webhook_secret_file,
                  "File holding the HMAC secret that signs job webhooks "
                  "(default: webhooks refused)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--job-api-max-pending", options->job_api_max_pending,
                  "/v1 requests queued or running at most; more get 503 with "
                  "Retry-After")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--job-workers", options->job_workers,
                  "Job chunks processed at once")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--job-cpu-priority", options->job_cpu_priority,
                  "idle: jobs read and parse under SCHED_IDLE, and their "
                  "batches compute under it while online requests are about, "
                  "using only CPU time nothing else wants (they may stall "
                  "while the machine is saturated); normal: compete with "
                  "online serving")
      ->check(CLI::IsMember({"idle", "normal"}))
      ->capture_default_str();
  cmd->add_option("--price-per-instance-hour", options->price_per_instance_hour,
                  "For the cost shown in job objects")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-upload-bytes", options->max_upload_bytes,
                  "Largest file upload (POST /v1/files); larger ones get 413")
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
  manager_options.offline_background = options.job_cpu_priority == "idle";
  ModelManager manager(options.model_repository, &engines, manager_options);
  absl::StatusOr<std::unique_ptr<JobServices>> jobs =
      MakeJobServices(options, &manager);
  if (!jobs.ok()) {
    err << "ferry serve: " << jobs.status().message() << "\n";
    return 1;
  }

  HttpServerOptions http;
  http.address = options.http_address;
  http.port = options.http_port;
  http.io_threads = options.http_threads;
  http.max_body_bytes = options.max_body_bytes;
  http.max_upload_bytes = options.max_upload_bytes;
  // Uploads stream to the files directory, where they end up.
  http.upload_dir = (*jobs)->files->dir();
  http.jobs = (*jobs)->handler.get();
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
  // Jobs left running by a previous server continue now.
  (*jobs)->runner->Start();
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
  // Running chunks are given back before the models go: they run again, whole,
  // on the next start.
  (*jobs)->Stop();
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
