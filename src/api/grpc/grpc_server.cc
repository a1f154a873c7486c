// SPDX-License-Identifier: Apache-2.0
#include "api/grpc/grpc_server.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/strings/str_cat.h"
#include "api/grpc/grpc_codec.h"
#include "api/grpc/grpc_service.grpc.pb.h"
#include "config/model_config.h"
#include "core/logging.h"
#include "core/mutex.h"
#include "grpcpp/grpcpp.h"

namespace ferry {
namespace internal {

// Runs blocking repository operations (load, unload) one at a time on its own
// thread, so that they never hold one of gRPC's callback threads. The
// destructor runs what is still queued (every task finishes a call that gRPC
// waits for) and joins.
class AdminWorker {
 public:
  AdminWorker() : thread_([this] { Loop(); }) {}
  ~AdminWorker() {
    {
      MutexLock lock(&mu_);
      stopping_ = true;
    }
    cv_.SignalAll();
    thread_.join();
  }

  void Post(absl::AnyInvocable<void() &&> task) {
    {
      MutexLock lock(&mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.Signal();
  }

 private:
  void Loop() {
    for (;;) {
      absl::AnyInvocable<void() &&> task;
      {
        MutexLock lock(&mu_);
        while (tasks_.empty() && !stopping_) cv_.Wait(&mu_);
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      std::move(task)();
    }
  }

  Mutex mu_;
  CondVar cv_;
  std::deque<absl::AnyInvocable<void() &&>> tasks_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: starts after the members it uses
};

namespace {

using grpc::CallbackServerContext;
using grpc::ServerUnaryReactor;

ServerUnaryReactor* FinishNow(CallbackServerContext* context,
                              const grpc::Status& status) {
  ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

ServerUnaryReactor* FinishNow(CallbackServerContext* context,
                              const absl::Status& status) {
  return FinishNow(context, ToGrpcStatus(status));
}

// Ferry serves one repository, which has no name on the wire.
absl::Status CheckRepositoryName(const std::string& name) {
  if (name.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("repository_name '", name,
                   "': Ferry serves a single repository; leave it empty"));
}

absl::Status CheckModelName(absl::string_view field, const std::string& name) {
  if (!name.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, " is empty"));
}

// The model a request names: its name must be set, its version empty (latest)
// or a positive number. `name_field` and `version_field` name the fields in
// errors.
absl::StatusOr<std::optional<int64_t>> ParseTarget(
    absl::string_view name_field, const std::string& name,
    absl::string_view version_field, const std::string& version) {
  if (absl::Status s = CheckModelName(name_field, name); !s.ok()) return s;
  return ParseModelVersion(version_field, version);
}

}  // namespace

class GrpcService final
    : public inference::GRPCInferenceService::CallbackService {
 public:
  GrpcService(ModelManager* manager, AdminWorker* admin, std::string version)
      : manager_(manager), admin_(admin), version_(std::move(version)) {}

  ServerUnaryReactor* ServerLive(
      CallbackServerContext* context, const inference::ServerLiveRequest*,
      inference::ServerLiveResponse* response) override {
    response->set_live(manager_->Live());
    return FinishNow(context, grpc::Status::OK);
  }

  ServerUnaryReactor* ServerReady(
      CallbackServerContext* context, const inference::ServerReadyRequest*,
      inference::ServerReadyResponse* response) override {
    response->set_ready(manager_->Ready());
    return FinishNow(context, grpc::Status::OK);
  }

  ServerUnaryReactor* ServerMetadata(
      CallbackServerContext* context, const inference::ServerMetadataRequest*,
      inference::ServerMetadataResponse* response) override {
    response->set_name("ferry");
    response->set_version(version_);
    for (const char* extension : {"model_repository", "model_configuration",
                                  "schedule_policy", "statistics"}) {
      response->add_extensions(extension);
    }
    return FinishNow(context, grpc::Status::OK);
  }

  // As Triton: an unknown model is "not ready", not an error.
  ServerUnaryReactor* ModelReady(
      CallbackServerContext* context,
      const inference::ModelReadyRequest* request,
      inference::ModelReadyResponse* response) override {
    absl::StatusOr<std::optional<int64_t>> version =
        ParseTarget("name", request->name(), "version", request->version());
    if (!version.ok()) return FinishNow(context, version.status());
    absl::StatusOr<bool> ready =
        manager_->ModelReady(request->name(), *version);
    if (!ready.ok() && ready.status().code() != absl::StatusCode::kNotFound) {
      return FinishNow(context, ready.status());
    }
    response->set_ready(ready.ok() && *ready);
    return FinishNow(context, grpc::Status::OK);
  }

  ServerUnaryReactor* ModelMetadata(
      CallbackServerContext* context,
      const inference::ModelMetadataRequest* request,
      inference::ModelMetadataResponse* response) override {
    absl::StatusOr<std::optional<int64_t>> version =
        ParseTarget("name", request->name(), "version", request->version());
    if (!version.ok()) return FinishNow(context, version.status());
    absl::StatusOr<ModelVersionInfo> info =
        manager_->Find(request->name(), *version);
    if (!info.ok()) return FinishNow(context, info.status());
    MetadataToProto(info->options, response);
    if (version->has_value()) {
      response->add_versions(std::to_string(info->version));
    } else {
      for (const ModelStatus& status : manager_->List()) {
        if (status.name != request->name()) continue;
        for (const ModelVersionStatus& v : status.versions) {
          if (v.state == ModelState::kReady) {
            response->add_versions(std::to_string(v.version));
          }
        }
      }
    }
    return FinishNow(context, grpc::Status::OK);
  }

  ServerUnaryReactor* ModelInfer(
      CallbackServerContext* context,
      const inference::ModelInferRequest* request,
      inference::ModelInferResponse* response) override {
    ServerUnaryReactor* reactor = context->DefaultReactor();
    absl::StatusOr<std::optional<int64_t>> version =
        ParseTarget("model_name", request->model_name(), "model_version",
                    request->model_version());
    if (!version.ok()) {
      reactor->Finish(ToGrpcStatus(version.status()));
      return reactor;
    }
    const bool raw = WantsRawOutput(*request);
    // gRPC hands the request as const, but the message is this call's own
    // (its default holder owns a non-const object that lives until the call
    // is done) and nothing reads it after decoding: moving the raw input
    // bytes out of it saves a copy of every input.
    auto* mutable_request = const_cast<inference::ModelInferRequest*>(request);
    absl::StatusOr<InferenceRequest> decoded =
        InferRequestFromProto(mutable_request);
    if (!decoded.ok()) {
      reactor->Finish(ToGrpcStatus(decoded.status()));
      return reactor;
    }
    // The client's deadline becomes the request's: the batcher dispatches in
    // time for it or refuses the request at once instead of computing a late
    // answer.
    const absl::Time deadline = absl::FromChrono(context->deadline());
    if (deadline < absl::InfiniteFuture() &&
        deadline < absl::Now() + absl::Hours(24 * 365)) {
      decoded->deadline = deadline;
    }
    // The callback runs on an engine instance or batcher thread: encoding is
    // one copy of the outputs, and Finish() only queues the reply.
    manager_->Infer(
        request->model_name(), *version, *std::move(decoded),
        [reactor, response, raw](absl::StatusOr<InferenceResponse> result) {
          if (!result.ok()) {
            reactor->Finish(ToGrpcStatus(result.status()));
            return;
          }
          InferResponseToProto(*result, raw, response);
          reactor->Finish(grpc::Status::OK);
        });
    return reactor;
  }

  ServerUnaryReactor* ModelConfig(
      CallbackServerContext* context,
      const inference::ModelConfigRequest* request,
      inference::ModelConfigResponse* response) override {
    absl::StatusOr<std::optional<int64_t>> version =
        ParseTarget("name", request->name(), "version", request->version());
    if (!version.ok()) return FinishNow(context, version.status());
    absl::StatusOr<ModelVersionInfo> info =
        manager_->Find(request->name(), *version);
    if (!info.ok()) return FinishNow(context, info.status());
    *response->mutable_config() = ToModelConfigProto(info->options);
    return FinishNow(context, grpc::Status::OK);
  }

  ServerUnaryReactor* ModelStatistics(
      CallbackServerContext* context,
      const inference::ModelStatisticsRequest* request,
      inference::ModelStatisticsResponse* response) override {
    absl::StatusOr<std::optional<int64_t>> version =
        ParseModelVersion("version", request->version());
    if (!version.ok()) return FinishNow(context, version.status());
    if (version->has_value() && request->name().empty()) {
      return FinishNow(context, absl::InvalidArgumentError(
                                    "version is set but name is empty"));
    }
    std::optional<std::string> name;
    if (!request->name().empty()) name = request->name();
    absl::StatusOr<std::vector<ModelVersionStatistics>> stats =
        manager_->Statistics(name, *version);
    if (!stats.ok()) return FinishNow(context, stats.status());
    for (const ModelVersionStatistics& s : *stats) {
      StatisticsToProto(s, response->add_model_stats());
    }
    return FinishNow(context, grpc::Status::OK);
  }

  ServerUnaryReactor* RepositoryIndex(
      CallbackServerContext* context,
      const inference::RepositoryIndexRequest* request,
      inference::RepositoryIndexResponse* response) override {
    if (absl::Status s = CheckRepositoryName(request->repository_name());
        !s.ok()) {
      return FinishNow(context, s);
    }
    absl::StatusOr<std::vector<std::string>> on_disk =
        manager_->ScanModelNames();
    if (!on_disk.ok()) return FinishNow(context, on_disk.status());
    std::vector<ModelStatus> known = manager_->List();
    std::sort(known.begin(), known.end(),
              [](const ModelStatus& a, const ModelStatus& b) {
                return a.name < b.name;
              });
    std::vector<std::string> names = *on_disk;
    for (const ModelStatus& status : known) names.push_back(status.name);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    for (const std::string& name : names) {
      auto it =
          std::lower_bound(known.begin(), known.end(), name,
                           [](const ModelStatus& s, const std::string& n) {
                             return s.name < n;
                           });
      if (it == known.end() || it->name != name) {
        // On disk but never loaded: a name without a state, as Triton lists it.
        if (!request->ready()) response->add_models()->set_name(name);
        continue;
      }
      if (it->versions.empty()) {
        if (request->ready()) continue;
        auto* entry = response->add_models();
        entry->set_name(name);
        entry->set_state(std::string(ToString(ModelState::kUnavailable)));
        entry->set_reason(it->reason);
        continue;
      }
      for (const ModelVersionStatus& v : it->versions) {
        if (request->ready() && v.state != ModelState::kReady) continue;
        auto* entry = response->add_models();
        entry->set_name(name);
        entry->set_version(std::to_string(v.version));
        entry->set_state(std::string(ToString(v.state)));
        entry->set_reason(v.reason);
      }
    }
    return FinishNow(context, grpc::Status::OK);
  }

  ServerUnaryReactor* RepositoryModelLoad(
      CallbackServerContext* context,
      const inference::RepositoryModelLoadRequest* request,
      inference::RepositoryModelLoadResponse*) override {
    absl::Status s = CheckRepositoryName(request->repository_name());
    if (s.ok()) s = CheckModelName("model_name", request->model_name());
    if (!s.ok()) return FinishNow(context, s);
    if (!request->parameters().empty()) {
      return FinishNow(
          context,
          absl::UnimplementedError(absl::StrCat(
              "parameters.", request->parameters().begin()->first,
              ": overriding a model's configuration or files on load is not "
              "supported; edit the repository and load again")));
    }
    ServerUnaryReactor* reactor = context->DefaultReactor();
    admin_->Post([this, reactor, name = request->model_name()]() {
      reactor->Finish(ToGrpcStatus(manager_->Load(name)));
    });
    return reactor;
  }

  ServerUnaryReactor* RepositoryModelUnload(
      CallbackServerContext* context,
      const inference::RepositoryModelUnloadRequest* request,
      inference::RepositoryModelUnloadResponse*) override {
    absl::Status s = CheckRepositoryName(request->repository_name());
    if (s.ok()) s = CheckModelName("model_name", request->model_name());
    if (!s.ok()) return FinishNow(context, s);
    // "unload_dependents" needs no work: Ferry has no ensembles.
    ServerUnaryReactor* reactor = context->DefaultReactor();
    admin_->Post([this, reactor, name = request->model_name()]() {
      reactor->Finish(ToGrpcStatus(manager_->Unload(name)));
    });
    return reactor;
  }

 private:
  ModelManager* const manager_;
  AdminWorker* const admin_;
  const std::string version_;
};

}  // namespace internal

namespace {

std::string HostPort(const std::string& address, int port) {
  const bool ipv6 = address.find(':') != std::string::npos &&
                    (address.empty() || address.front() != '[');
  return ipv6 ? absl::StrCat("[", address, "]:", port)
              : absl::StrCat(address, ":", port);
}

}  // namespace

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Start(
    GrpcServerOptions options, ModelManager* manager) {
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("gRPC port ", options.port, " is not in [0, 65535]"));
  }
  const int max_bytes = static_cast<int>(std::min<size_t>(
      options.max_message_bytes, static_cast<size_t>(INT32_MAX)));
  std::unique_ptr<GrpcServer> server(new GrpcServer());
  server->admin_ = std::make_unique<internal::AdminWorker>();
  server->service_ = std::make_unique<internal::GrpcService>(
      manager, server->admin_.get(), options.server_version);

  const std::string target = HostPort(options.address, options.port);
  grpc::ServerBuilder builder;
  int selected_port = 0;
  builder.AddListeningPort(target, grpc::InsecureServerCredentials(),
                           &selected_port);
  builder.RegisterService(server->service_.get());
  builder.SetMaxReceiveMessageSize(max_bytes);
  builder.SetMaxSendMessageSize(max_bytes);
  // gRPC sets SO_REUSEPORT by default, which would let a second server share
  // the port silently; a port in use must be an error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || selected_port == 0) {
    if (server->server_ != nullptr) server->server_->Shutdown();
    server->stopped_ = true;
    return absl::UnavailableError(
        absl::StrCat("gRPC server cannot listen on ", target));
  }
  server->port_ = selected_port;
  FERRY_LOG(kInfo, absl::StrCat("gRPC server listening on ",
                                HostPort(options.address, selected_port)));
  return server;
}

void GrpcServer::Stop(absl::Duration deadline) {
  if (stopped_) return;
  stopped_ = true;
  // Shutdown returns once every call is finished; loads and unloads still
  // queued on the admin worker finish those calls, so the worker goes after.
  server_->Shutdown(absl::ToChronoTime(absl::Now() + deadline));
  admin_.reset();
}

GrpcServer::~GrpcServer() {
  Stop(absl::ZeroDuration());
  server_.reset();
  service_.reset();
}

}  // namespace ferry
