// SPDX-License-Identifier: Apache-2.0
#include "loadgen/http_transport.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "boost/asio/connect.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/post.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"

namespace ferry {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

class HttpTransport final : public Transport {
 public:
  HttpTransport(HttpTransportOptions options,
                tcp::resolver::results_type endpoints)
      : options_(std::move(options)), endpoints_(std::move(endpoints)) {
    for (const HttpTransportOptions::Body& body : options_.bodies) {
      http::request<http::string_body>& r = requests_.emplace_back();
      r.method(http::verb::post);
      r.target(options_.target);
      r.version(11);
      r.set(http::field::host, absl::StrCat(options_.host, ":", options_.port));
      if (body.binary_json_size > 0) {
        r.set(http::field::content_type, "application/octet-stream");
        r.set("Inference-Header-Content-Length",
              std::to_string(body.binary_json_size));
      } else {
        r.set(http::field::content_type, "application/json");
      }
      r.body() = body.bytes;
      r.prepare_payload();
    }
    const int n = std::max(1, options_.threads);
    per_loop_cap_ = std::max(1, options_.max_connections / n);
    for (int i = 0; i < n; ++i) loops_.push_back(std::make_unique<Loop>());
    for (auto& loop : loops_) {
      loop->thread = std::thread([l = loop.get()] { l->ioc.run(); });
    }
  }

  ~HttpTransport() override {
    for (auto& loop : loops_) {
      loop->work.reset();
      loop->ioc.stop();
    }
    for (auto& loop : loops_) loop->thread.join();
  }

  void Send(CallDone done) override {
    Loop* loop =
        loops_[next_.fetch_add(1, std::memory_order_relaxed) % loops_.size()]
            .get();
    asio::post(loop->ioc, [this, loop, done = std::move(done)]() mutable {
      Dispatch(loop, std::move(done));
    });
  }

 private:
  struct Conn {
    explicit Conn(asio::io_context& ioc) : stream(ioc) {}
    beast::tcp_stream stream;
    beast::flat_buffer buffer;
    http::response<http::string_body> response;
    bool connected = false;
    CallDone done;
  };
  using ConnPtr = std::shared_ptr<Conn>;

  // Everything below runs on the loop's own thread.
  struct Loop {
    asio::io_context ioc{1};
    std::optional<asio::executor_work_guard<asio::io_context::executor_type>>
        work{ioc.get_executor()};
    std::thread thread;
    std::vector<ConnPtr> idle;
    int open = 0;
    std::deque<CallDone> waiting;
  };

  void Dispatch(Loop* loop, CallDone done) {
    if (!loop->idle.empty()) {
      ConnPtr conn = std::move(loop->idle.back());
      loop->idle.pop_back();
      Start(loop, std::move(conn), std::move(done));
    } else if (loop->open < per_loop_cap_) {
      ++loop->open;
      Start(loop, std::make_shared<Conn>(loop->ioc), std::move(done));
    } else {
      loop->waiting.push_back(std::move(done));
    }
  }

  void Start(Loop* loop, ConnPtr conn, CallDone done) {
    conn->done = std::move(done);
    conn->stream.expires_after(absl::ToChronoNanoseconds(options_.timeout));
    if (conn->connected) {
      Write(loop, std::move(conn));
      return;
    }
    Conn* c = conn.get();
    c->stream.async_connect(
        endpoints_, [this, loop, conn = std::move(conn)](
                        beast::error_code ec, const tcp::endpoint&) mutable {
          if (ec) return Fail(loop, std::move(conn), "connect", ec);
          conn->connected = true;
          conn->stream.socket().set_option(tcp::no_delay(true), ec);
          Write(loop, std::move(conn));
        });
  }

  void Write(Loop* loop, ConnPtr conn) {
    Conn* c = conn.get();
    const auto& request =
        requests_[next_body_.fetch_add(1, std::memory_order_relaxed) %
                  requests_.size()];
    http::async_write(c->stream, request,
                      [this, loop, conn = std::move(conn)](beast::error_code ec,
                                                           size_t) mutable {
                        if (ec) return Fail(loop, std::move(conn), "write", ec);
                        Read(loop, std::move(conn));
                      });
  }

  void Read(Loop* loop, ConnPtr conn) {
    Conn* c = conn.get();
    c->response = {};
    http::async_read(c->stream, c->buffer, c->response,
                     [this, loop, conn = std::move(conn)](beast::error_code ec,
                                                          size_t) mutable {
                       if (ec) return Fail(loop, std::move(conn), "read", ec);
                       const unsigned status = conn->response.result_int();
                       if (!conn->response.keep_alive()) Close(conn.get());
                       CallResult result;
                       result.ok = status == 200;
                       if (!result.ok)
                         result.error = absl::StrCat("http ", status);
                       Finish(loop, std::move(conn), std::move(result));
                     });
  }

  void Fail(Loop* loop, ConnPtr conn, const char* step, beast::error_code ec) {
    Close(conn.get());
    CallResult result;
    result.error = ec == beast::error::timeout
                       ? std::string("timeout")
                       : absl::StrCat(step, ": ", ec.message());
    Finish(loop, std::move(conn), std::move(result));
  }

  static void Close(Conn* conn) {
    beast::error_code ignored;
    conn->stream.socket().close(ignored);
    conn->buffer.clear();
    conn->connected = false;
  }

  // Answers the call, then hands the connection to a waiting call or parks
  // it.
  void Finish(Loop* loop, ConnPtr conn, CallResult result) {
    CallDone done = std::move(conn->done);
    done(std::move(result));
    if (!loop->waiting.empty()) {
      CallDone next = std::move(loop->waiting.front());
      loop->waiting.pop_front();
      Start(loop, std::move(conn), std::move(next));
    } else {
      loop->idle.push_back(std::move(conn));
    }
  }

  const HttpTransportOptions options_;
  const tcp::resolver::results_type endpoints_;
  std::vector<http::request<http::string_body>> requests_;  // read-only
  std::atomic<uint64_t> next_body_{0};
  int per_loop_cap_ = 1;
  std::vector<std::unique_ptr<Loop>> loops_;
  std::atomic<uint64_t> next_{0};
};

}  // namespace

absl::StatusOr<std::unique_ptr<Transport>> MakeHttpTransport(
    HttpTransportOptions options) {
  if (options.bodies.empty()) {
    return absl::InvalidArgumentError("no request body to send");
  }
  asio::io_context ioc;
  tcp::resolver resolver(ioc);
  beast::error_code ec;
  auto endpoints =
      resolver.resolve(options.host, std::to_string(options.port), ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve '", options.host, "': ", ec.message()));
  }
  return std::unique_ptr<Transport>(
      new HttpTransport(std::move(options), std::move(endpoints)));
}

}  // namespace ferry
