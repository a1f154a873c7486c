// SPDX-License-Identifier: Apache-2.0
// HttpServer: the KServe v2 REST front-end (plus Triton's repository and
// statistics extensions and /metrics) over HTTP/1.1 with keep-alive, built on
// Boost.Beast. `ferry serve` starts one in front of its ModelManager.
//
// Threads: `io_threads` threads run one io_context; every connection has its
// own strand, so one connection's reads, handler and writes never run
// concurrently. An inference holds no thread while it waits in the batcher:
// the handler calls ModelManager::Infer with a callback that posts the result
// back onto the connection's strand, where it is encoded and written. Model
// loads and unloads, which take seconds, run on one extra thread of their own.
//
// Thread-safety: Start() and Stop() from one controlling thread; port() from
// any. The ModelManager must outlive the server; call
// ModelManager::Shutdown() before Stop() so that every accepted inference has
// been answered when Stop() closes the connections.
#ifndef FERRY_API_HTTP_HTTP_SERVER_H_
#define FERRY_API_HTTP_HTTP_SERVER_H_

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "repository/model_manager.h"

namespace ferry {

class JobsHandler;

struct HttpServerOptions {
  std::string address = "0.0.0.0";
  int port = 8000;  // 0: pick a free port (see HttpServer::port())
  int io_threads = 2;
  size_t max_body_bytes = size_t{64} << 20;  // larger bodies get 413
  // Renders GET /metrics (Prometheus text); empty function or empty text: 404.
  std::function<std::string()> metrics_text;
  // Answers /v1 (the job API); null: 404. Must outlive the server.
  JobsHandler* jobs = nullptr;
  // The body limit of file uploads (POST /v1/files) instead of
  // max_body_bytes.
  size_t max_upload_bytes = size_t{256} << 20;
  // Where upload bodies stream to (HttpRequest::body_file) while they
  // arrive, so an upload costs disk, not memory; best on the filesystem the
  // uploaded files end up on. Empty: uploads are read into memory.
  std::filesystem::path upload_dir;
};

namespace http_internal {
struct ServerCore;  // io_context, acceptor, connections (http_server.cc)
}  // namespace http_internal

class HttpServer {
 public:
  // Binds, listens and starts the I/O threads. INVALID_ARGUMENT for bad
  // options, UNAVAILABLE when the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      HttpServerOptions options, ModelManager* manager);

  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound port (the chosen one when options.port was 0).
  int port() const { return port_; }

  // Stops accepting connections, closes idle ones, lets every connection
  // finish the response it owes (waiting up to 30 s for them), and joins the
  // threads. Idempotent.
  void Stop();

 private:
  HttpServer(std::shared_ptr<http_internal::ServerCore> core, int port);

  std::shared_ptr<http_internal::ServerCore> core_;
  const int port_;
  std::vector<std::thread> threads_;
  bool stopped_ = false;
};

}  // namespace ferry

#endif  // FERRY_API_HTTP_HTTP_SERVER_H_
