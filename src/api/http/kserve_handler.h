// SPDX-License-Identifier: Apache-2.0
// KserveHandler: the endpoints of Ferry's REST API (KServe v2, Triton's binary
// tensor, model repository, configuration and statistics extensions, and
// /metrics; /v1 paths go to the JobsHandler), from a parsed HTTP request to
// an HTTP response. HttpServer's
// connections call it; it knows nothing of sockets. docs/api.md lists the
// endpoints and the status codes.
//
// Thread-safety: safe for concurrent use. Handle() never blocks: inferences go
// to the ModelManager with a callback that posts the result back onto the
// connection's executor, and model loads and unloads run on `blocking`.
#ifndef FERRY_API_HTTP_KSERVE_HANDLER_H_
#define FERRY_API_HTTP_KSERVE_HANDLER_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "boost/asio/any_io_executor.hpp"
#include "boost/beast/http/message.hpp"
#include "boost/beast/http/status.hpp"
#include "boost/beast/http/string_body.hpp"
#include "repository/model_manager.h"

namespace ferry {

// A file the connection streamed a request body into; removed when the last
// HttpRequest that refers to it goes.
class RequestBodyFile {
 public:
  explicit RequestBodyFile(std::string path) : path_(std::move(path)) {}
  ~RequestBodyFile();
  RequestBodyFile(const RequestBodyFile&) = delete;
  RequestBodyFile& operator=(const RequestBodyFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  const std::string path_;
};

// A Beast message with a string body, or, with body_file set, whose body is
// a file instead: the connection streams it to or from disk rather than
// holding it in memory (body() stays empty).
template <class Message, class BodyFile>
class MessageWithBodyFile : public Message {
 public:
  using Base = Message;
  using Base::Base;
  MessageWithBodyFile() = default;
  MessageWithBodyFile(Base&& base) : Base(std::move(base)) {}  // NOLINT

  BodyFile body_file;
};

// Requests: file uploads, when the server has an upload directory; the file
// goes when the last request that refers to it does.
using HttpRequest = MessageWithBodyFile<
    boost::beast::http::request<boost::beast::http::string_body>,
    std::shared_ptr<const RequestBodyFile>>;
// Responses: file downloads of any size; body_file is the file's path.
using HttpResponse = MessageWithBodyFile<
    boost::beast::http::response<boost::beast::http::string_body>, std::string>;

// The HTTP status for an absl::Status code: INVALID_ARGUMENT 400, NOT_FOUND
// 404, RESOURCE_EXHAUSTED 429, UNIMPLEMENTED 501, UNAVAILABLE 503,
// DEADLINE_EXCEEDED 504, anything else 500.
boost::beast::http::status HttpStatusFromCode(absl::StatusCode code);

// {"error": message} with the mapped status; UNAVAILABLE and
// RESOURCE_EXHAUSTED add "Retry-After: 1".
HttpResponse ErrorResponse(const absl::Status& status);
HttpResponse ErrorResponse(boost::beast::http::status code,
                           absl::string_view message);

class JobsHandler;

class KserveHandler {
 public:
  // Called exactly once, on the executor given to Handle(). The caller sets
  // the response's HTTP version and keep-alive.
  using Respond = absl::AnyInvocable<void(HttpResponse)>;

  // `jobs` answers every /v1 path (the job API); null: those paths are 404.
  KserveHandler(ModelManager* manager,
                std::function<std::string()> metrics_text,
                boost::asio::any_io_executor blocking,
                JobsHandler* jobs = nullptr);

  // Answers `request`, possibly before returning (then on the calling thread,
  // which must be running on `executor`), possibly later via `executor`.
  void Handle(HttpRequest request, boost::asio::any_io_executor executor,
              Respond respond);

 private:
  struct Route;

  void Infer(HttpRequest& request, const Route& route,
             boost::asio::any_io_executor executor, Respond respond);
  HttpResponse ModelMetadata(const Route& route) const;
  HttpResponse ModelReady(const Route& route) const;
  HttpResponse ModelConfig(const Route& route) const;
  HttpResponse Statistics(const Route& route) const;
  HttpResponse RepositoryIndex(const HttpRequest& request) const;
  void LoadOrUnload(const HttpRequest& request, const Route& route, bool load,
                    boost::asio::any_io_executor executor, Respond respond);

  ModelManager* const manager_;
  const std::function<std::string()> metrics_text_;
  const boost::asio::any_io_executor blocking_;
  JobsHandler* const jobs_;
};

}  // namespace ferry

#endif  // FERRY_API_HTTP_KSERVE_HANDLER_H_
