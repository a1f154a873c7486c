// SPDX-License-Identifier: Apache-2.0
#include "api/http/http_server.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <optional>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/http/kserve_handler.h"
#include "boost/asio/bind_executor.hpp"
#include "boost/asio/dispatch.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/post.hpp"
#include "boost/asio/steady_timer.hpp"
#include "boost/asio/strand.hpp"
#include "boost/asio/thread_pool.hpp"
#include "boost/beast/core/flat_buffer.hpp"
#include "boost/beast/core/tcp_stream.hpp"
#include "boost/beast/http/empty_body.hpp"
#include "boost/beast/http/error.hpp"
#include "boost/beast/http/file_body.hpp"
#include "boost/beast/http/parser.hpp"
#include "boost/beast/http/read.hpp"
#include "boost/beast/http/serializer.hpp"
#include "boost/beast/http/write.hpp"
#include "core/logging.h"
#include "core/mutex.h"
#include "core/thread_priority.h"

namespace ferry {
namespace http_internal {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

// An idle keep-alive connection is closed after this long.
constexpr auto kIdleTimeout = std::chrono::seconds(120);
// Reading a request body or writing a response may take this long.
constexpr auto kTransferTimeout = std::chrono::seconds(60);
// After a response that closes the connection with request bytes still unread
// (413), the server reads and drops at most this much, so the client sees the
// response instead of a connection reset.
constexpr size_t kMaxDrainBytes = size_t{256} << 20;
constexpr auto kDrainTimeout = std::chrono::seconds(10);
// On Stop(), how long an idle keep-alive connection may still deliver a
// request that was on its way.
constexpr auto kStopIdleWindow = std::chrono::milliseconds(500);

class Session;

struct ServerCore {
  ServerCore(HttpServerOptions o, ModelManager* manager)
      : options(std::move(o)),
        ioc(options.io_threads),
        acceptor(net::make_strand(ioc)),
        blocking(1),
        handler(manager, options.metrics_text, blocking.get_executor(),
                options.jobs) {}

  void DoAccept(std::shared_ptr<ServerCore> self);
  void Register(Session* s, std::weak_ptr<Session> w) ABSL_LOCKS_EXCLUDED(mu) {
    MutexLock lock(&mu);
    sessions.emplace(s, std::move(w));
  }
  void Unregister(Session* s) ABSL_LOCKS_EXCLUDED(mu) {
    MutexLock lock(&mu);
    sessions.erase(s);
    if (sessions.empty()) cv.SignalAll();
  }

  const HttpServerOptions options;
  net::io_context ioc;
  tcp::acceptor acceptor;
  net::thread_pool blocking;  // model loads and unloads
  KserveHandler handler;
  std::atomic<bool> stopping{false};

  Mutex mu;
  CondVar cv;
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions
      ABSL_GUARDED_BY(mu);
};

// One connection. Every member is touched only on the connection's strand
// (the stream's executor).
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<ServerCore> core)
      : stream_(std::move(socket)),
        core_(std::move(core)),
        stop_timer_(stream_.get_executor()) {}
  ~Session() { core_->Unregister(this); }

  void Start() {
    core_->Register(this, weak_from_this());
    net::dispatch(stream_.get_executor(),
                  [self = shared_from_this()] { self->ReadHeader(); });
  }

  // From Stop(): close after the response owed. An idle connection gets
  // kStopIdleWindow to deliver a request the client may already have sent
  // (it is answered, then the connection closes); then it is closed.
  void Stop() {
    net::post(stream_.get_executor(), [self = shared_from_this()] {
      self->close_after_write_ = true;
      self->stop_timer_.expires_after(kStopIdleWindow);
      self->stop_timer_.async_wait([self](beast::error_code ec) {
        if (!ec && !self->busy_) self->stream_.cancel();
      });
    });
  }

 private:
  void ReadHeader() {
    busy_ = false;
    if (close_after_write_) return Close();
    parser_.emplace();
    // The parser checks a Content-Length against its limit while it reads the
    // header, before OnHeader knows whether this is an upload: start with the
    // larger limit; OnHeader sets the request's own.
    parser_->body_limit(core_->options.jobs != nullptr
                            ? std::max(core_->options.max_body_bytes,
                                       core_->options.max_upload_bytes)
                            : core_->options.max_body_bytes);
    stream_.expires_after(kIdleTimeout);
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) {
          self->OnHeader(ec);
        });
  }

  void OnHeader(beast::error_code ec) {
    if (ec) return OnReadError(ec);
    busy_ = true;
    const auto& req = parser_->get();
    version_ = req.version();
    keep_alive_ = req.keep_alive();
    // Uploads have a limit of their own. No body byte has been parsed yet, so
    // the parser's limit can still change.
    upload_ = IsUpload(req);
    const size_t limit = body_limit();
    parser_->body_limit(limit);
    if (auto length = parser_->content_length(); length && *length > limit) {
      return SendTooLarge();
    }
    if (upload_ && !core_->options.upload_dir.empty()) {
      if (absl::Status s = StartUploadFile(limit); !s.ok()) {
        close_after_write_ = true;
        drain_after_write_ = true;
        return Send(ErrorResponse(s));
      }
    }
    if (beast::iequals(req[http::field::expect], "100-continue")) {
      continue_.emplace(http::status::continue_, version_);
      stream_.expires_after(kTransferTimeout);
      http::async_write(
          stream_, *continue_,
          [self = shared_from_this()](beast::error_code ec, size_t) {
            self->continue_.reset();
            if (ec) return self->Close();
            self->ReadBody();
          });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    stream_.expires_after(kTransferTimeout);
    if (upload_parser_) {
      http::async_read(
          stream_, buffer_, *upload_parser_,
          [self = shared_from_this()](beast::error_code ec, size_t) {
            self->OnUploadRead(ec);
          });
      return;
    }
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       self->OnRead(ec);
                     });
  }

  // An upload's body goes to a fresh file in the upload directory: the
  // header parser becomes a file-body parser (no body byte is parsed yet).
  absl::Status StartUploadFile(size_t limit) {
    static std::atomic<uint64_t> counter{0};
    const std::filesystem::path path =
        core_->options.upload_dir /
        absl::StrCat(".upload-", getpid(), "-", counter.fetch_add(1));
    upload_parser_.emplace(std::move(*parser_));
    parser_.reset();
    upload_parser_->body_limit(limit);
    upload_body_ = std::make_shared<RequestBodyFile>(path.string());
    beast::error_code ec;
    upload_parser_->get().body().open(path.c_str(), beast::file_mode::write_new,
                                      ec);
    if (ec) {
      upload_parser_.reset();
      upload_body_.reset();
      return absl::InternalError(absl::StrCat(
          "cannot store the upload in '", path.string(), "': ", ec.message()));
    }
    return absl::OkStatus();
  }

  void OnUploadRead(beast::error_code ec) {
    upload_parser_->get().body().close();
    if (ec) {
      upload_body_.reset();  // removes the partial file
      return OnReadError(ec);
    }
    stream_.expires_never();
    HttpRequest request;
    static_cast<http::request_header<>&>(request) =
        std::move(upload_parser_->get().base());
    request.body_file = std::move(upload_body_);
    upload_parser_.reset();
    core_->handler.Handle(std::move(request), stream_.get_executor(),
                          [self = shared_from_this()](HttpResponse res) {
                            self->Send(std::move(res));
                          });
  }

  // A file upload (POST /v1/files), which has a body limit of its own.
  bool IsUpload(const http::request<http::string_body>& req) const {
    if (core_->options.jobs == nullptr || req.method() != http::verb::post) {
      return false;
    }
    absl::string_view target(req.target().data(), req.target().size());
    target = target.substr(0, target.find('?'));
    return target == "/v1/files" || target == "/v1/files/";
  }

  void OnReadError(beast::error_code ec) {
    if (ec == http::error::body_limit) {
      // Also raised while the header is read (a Content-Length over the
      // limit), before OnHeader ran.
      if (parser_) upload_ = IsUpload(parser_->get());
      upload_parser_.reset();
      return SendTooLarge();
    }
    upload_parser_.reset();
    if (busy_ && ec != http::error::end_of_stream &&
        ec != net::error::operation_aborted && ec != beast::error::timeout &&
        ec != net::error::connection_reset) {
      // A malformed request line, header or chunk: answer, then close.
      close_after_write_ = true;
      return Send(ErrorResponse(
          http::status::bad_request,
          absl::StrCat("malformed HTTP request: ", ec.message())));
    }
    if (!busy_ && ec != http::error::end_of_stream &&
        ec != net::error::operation_aborted && ec != beast::error::timeout &&
        ec != net::error::connection_reset && ec != net::error::eof) {
      close_after_write_ = true;
      return Send(ErrorResponse(
          http::status::bad_request,
          absl::StrCat("malformed HTTP request: ", ec.message())));
    }
    Close();
  }

  void OnRead(beast::error_code ec) {
    if (ec) return OnReadError(ec);
    stream_.expires_never();
    HttpRequest request = parser_->release();
    parser_.reset();
    core_->handler.Handle(std::move(request), stream_.get_executor(),
                          [self = shared_from_this()](HttpResponse res) {
                            self->Send(std::move(res));
                          });
  }

  void SendTooLarge() {
    close_after_write_ = true;
    drain_after_write_ = true;
    Send(ErrorResponse(
        http::status::payload_too_large,
        absl::StrCat("request body is larger than the limit of ", body_limit(),
                     upload_ ? " bytes for uploads (ferry serve "
                               "--max-upload-bytes)"
                             : " bytes (ferry serve --max-body-bytes)")));
  }

  size_t body_limit() const {
    return upload_ ? core_->options.max_upload_bytes
                   : core_->options.max_body_bytes;
  }

  void Send(HttpResponse res) {
    busy_ = true;
    if (!res.body_file.empty()) return SendFile(std::move(res));
    res.version(version_);
    res.keep_alive(keep_alive_ && !close_after_write_ &&
                   !core_->stopping.load());
    res.prepare_payload();
    response_.emplace(std::move(res));
    stream_.expires_after(kTransferTimeout);
    http::async_write(stream_, *response_,
                      [self = shared_from_this()](
                          beast::error_code ec, size_t) { self->OnWrite(ec); });
  }

  // The body streams from the file in Beast's chunks (no copy of the whole
  // file in memory); the transfer timeout applies to each chunk's progress.
  void SendFile(HttpResponse res) {
    http::file_body::value_type file;
    beast::error_code ec;
    file.open(res.body_file.c_str(), beast::file_mode::scan, ec);
    if (ec) {
      return Send(ErrorResponse(
          http::status::not_found,
          absl::StrCat("the file's content is gone: ", ec.message())));
    }
    file_response_.emplace(
        std::move(static_cast<http::response_header<>&>(res)), std::move(file));
    file_response_->version(version_);
    file_response_->keep_alive(keep_alive_ && !close_after_write_ &&
                               !core_->stopping.load());
    file_response_->prepare_payload();
    file_serializer_.emplace(*file_response_);
    WriteFileChunk();
  }

  void WriteFileChunk() {
    stream_.expires_after(kTransferTimeout);
    http::async_write_some(
        stream_, *file_serializer_,
        [self = shared_from_this()](beast::error_code ec, size_t) {
          if (!ec && !self->file_serializer_->is_done()) {
            return self->WriteFileChunk();
          }
          self->OnWrite(ec);
        });
  }

  void OnWrite(beast::error_code ec) {
    const bool keep_alive =
        response_ ? response_->keep_alive() : file_response_->keep_alive();
    file_serializer_.reset();
    file_response_.reset();
    response_.reset();
    if (ec) return Close();
    if (!keep_alive) {
      if (drain_after_write_) return Drain();
      return Close();
    }
    ReadHeader();
  }

  // Half-closes and discards what the client still sends, so that it reads
  // the response rather than a reset.
  void Drain() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(kDrainTimeout);
    drain_buffer_.resize(64 << 10);
    ReadAndDrop();
  }
  void ReadAndDrop() {
    stream_.async_read_some(
        net::buffer(drain_buffer_),
        [self = shared_from_this()](beast::error_code ec, size_t n) {
          self->drained_ += n;
          if (ec || self->drained_ > kMaxDrainBytes) return self->Close();
          self->ReadAndDrop();
        });
  }

  void Close() {
    stop_timer_.cancel();
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  const std::shared_ptr<ServerCore> core_;
  net::steady_timer stop_timer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  // An upload being streamed to disk (HttpServerOptions::upload_dir).
  std::optional<http::request_parser<http::file_body>> upload_parser_;
  std::shared_ptr<RequestBodyFile> upload_body_;
  std::optional<http::response<http::empty_body>> continue_;
  std::optional<HttpResponse> response_;
  std::optional<http::response<http::file_body>> file_response_;
  std::optional<http::response_serializer<http::file_body>> file_serializer_;
  std::vector<char> drain_buffer_;
  size_t drained_ = 0;
  unsigned version_ = 11;
  bool keep_alive_ = true;
  bool busy_ = false;  // a request is being read or answered
  bool close_after_write_ = false;
  bool drain_after_write_ = false;
  bool upload_ = false;  // the request is a file upload (POST /v1/files)
};

void ServerCore::DoAccept(std::shared_ptr<ServerCore> self) {
  acceptor.async_accept(
      net::make_strand(ioc),
      [self](beast::error_code ec, tcp::socket socket) mutable {
        if (ec == net::error::operation_aborted || !self->acceptor.is_open()) {
          return;
        }
        if (ec) {
          FERRY_LOG(kWarning, "HTTP accept failed: ", ec.message());
        } else if (!self->stopping.load()) {
          beast::error_code ignored;
          socket.set_option(tcp::no_delay(true), ignored);
          std::make_shared<Session>(std::move(socket), self)->Start();
        }
        if (!self->stopping.load()) self->DoAccept(self);
      });
}

}  // namespace http_internal

using http_internal::ServerCore;
using http_internal::Session;
namespace net = boost::asio;
using tcp = boost::asio::ip::tcp;

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    HttpServerOptions options, ModelManager* manager) {
  if (options.io_threads < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("io_threads is ", options.io_threads, ", must be >= 1"));
  }
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("port ", options.port, " is not in [0, 65535]"));
  }
  if (options.max_body_bytes == 0 || options.max_upload_bytes == 0) {
    return absl::InvalidArgumentError(
        "max_body_bytes and max_upload_bytes must be positive");
  }
  boost::system::error_code ec;
  const net::ip::address address = net::ip::make_address(options.address, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("address '", options.address,
                     "' is not an IP address: ", ec.message()));
  }
  const tcp::endpoint endpoint(address,
                               static_cast<unsigned short>(options.port));
  auto core = std::make_shared<ServerCore>(std::move(options), manager);
  auto fail = [&](absl::string_view what) {
    return absl::UnavailableError(
        absl::StrCat("cannot ", what, " ", endpoint.address().to_string(), ":",
                     endpoint.port(), ": ", ec.message()));
  };
  core->acceptor.open(endpoint.protocol(), ec);
  if (ec) return fail("open a socket for");
  core->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (ec) return fail("set SO_REUSEADDR for");
  core->acceptor.bind(endpoint, ec);
  if (ec) return fail("bind");
  core->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return fail("listen on");
  const int port = core->acceptor.local_endpoint(ec).port();
  if (ec) return fail("read the port of");
  core->DoAccept(core);

  std::unique_ptr<HttpServer> server(new HttpServer(core, port));
  for (int i = 0; i < core->options.io_threads; ++i) {
    server->threads_.emplace_back([core, i] {
      SetThreadName(absl::StrCat("http-io", i));
      try {
        core->ioc.run();
      } catch (const std::exception& e) {
        FERRY_LOG(kError, "HTTP I/O thread stopped: ", e.what());
      }
    });
  }
  return server;
}

HttpServer::HttpServer(std::shared_ptr<ServerCore> core, int port)
    : core_(std::move(core)), port_(port) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  core_->stopping.store(true);
  net::post(core_->acceptor.get_executor(), [core = core_] {
    boost::system::error_code ignored;
    core->acceptor.close(ignored);
  });
  // Loads and unloads in progress finish and post their responses.
  core_->blocking.join();
  std::vector<std::shared_ptr<Session>> live;
  {
    MutexLock lock(&core_->mu);
    for (auto& [ptr, weak] : core_->sessions) {
      if (auto s = weak.lock()) live.push_back(std::move(s));
    }
  }
  for (auto& s : live) s->Stop();
  live.clear();
  {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    MutexLock lock(&core_->mu);
    while (!core_->sessions.empty()) {
      if (core_->cv.WaitWithDeadline(&core_->mu, deadline)) break;
    }
    if (!core_->sessions.empty()) {
      FERRY_LOG(kWarning, "HTTP server stopping with ", core_->sessions.size(),
                " connection(s) still open after 30 s");
    }
  }
  core_->ioc.stop();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

}  // namespace ferry
