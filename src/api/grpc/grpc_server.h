// SPDX-License-Identifier: Apache-2.0
// GrpcServer: the KServe v2 gRPC front-end (inference.GRPCInferenceService,
// with Triton's model-configuration, statistics and model-repository
// extensions) over a ModelManager.
//
// Built on gRPC's callback API: no thread is held per call. ModelInfer decodes
// the request on a gRPC thread, hands it to ModelManager::Infer and returns;
// the manager's completion callback encodes the response and finishes the
// call. Repository loads and unloads, which block for as long as a model takes
// to load or drain, run on one worker thread of the server's own.
//
// `ferry serve` calls Start() and, on shutdown, Stop() before shutting the
// ModelManager down. Thread-safety: port() is safe from any thread; Stop() and
// the destructor from one owner thread. The ModelManager must outlive the
// server.
#ifndef FERRY_API_GRPC_GRPC_SERVER_H_
#define FERRY_API_GRPC_GRPC_SERVER_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "repository/model_manager.h"

namespace grpc {
class Server;
}  // namespace grpc

namespace ferry {

struct GrpcServerOptions {
  std::string address = "0.0.0.0";  // IPv6 addresses without brackets
  int port = 8001;                  // 0: pick a free port
  // Largest request and response message, as Triton's default.
  size_t max_message_bytes = 64 << 20;
  // What ServerMetadata reports as the server's version.
  std::string server_version = "0.1.0";
};

namespace internal {
class GrpcService;
class AdminWorker;
}  // namespace internal

class GrpcServer {
 public:
  // Listens on options.address:options.port and starts serving. UNAVAILABLE
  // when the address cannot be bound; INVALID_ARGUMENT for a bad port.
  static absl::StatusOr<std::unique_ptr<GrpcServer>> Start(
      GrpcServerOptions options, ModelManager* manager);

  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;
  ~GrpcServer();  // Stop(absl::ZeroDuration()) if not done

  // The port the server listens on (the chosen one when options.port was 0).
  int port() const { return port_; }

  // Stops accepting calls, lets calls in flight finish until `deadline` from
  // now, then cancels the rest. Returns once every call has been answered, so
  // an inference still queued in the ModelManager keeps Stop() waiting until
  // the manager answers it (ModelManager::Shutdown bounds that). Idempotent.
  void Stop(absl::Duration deadline);

 private:
  GrpcServer() = default;

  std::unique_ptr<internal::AdminWorker> admin_;
  std::unique_ptr<internal::GrpcService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  bool stopped_ = false;
};

}  // namespace ferry

#endif  // FERRY_API_GRPC_GRPC_SERVER_H_
