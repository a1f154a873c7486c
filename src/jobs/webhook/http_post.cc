// SPDX-License-Identifier: Apache-2.0
#include "jobs/webhook/http_post.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/address.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/ssl/context.hpp"
#include "boost/asio/ssl/host_name_verification.hpp"
#include "boost/asio/write.hpp"
#include "boost/beast/core/error.hpp"
#include "boost/beast/core/flat_buffer.hpp"
#include "boost/beast/core/stream_traits.hpp"
#include "boost/beast/core/tcp_stream.hpp"
#include "boost/beast/http/file_body.hpp"
#include "boost/beast/http/parser.hpp"
#include "boost/beast/http/read.hpp"
#include "boost/beast/http/string_body.hpp"
#include "boost/beast/http/write.hpp"
#include "boost/beast/ssl/ssl_stream.hpp"
#include "core/status_macros.h"

namespace ferry {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;
using SteadyTime = std::chrono::steady_clock::time_point;

// The URL as messages show it: user info and query often hold credentials,
// and these messages end up in logs and job records.
std::string DisplayUrl(absl::string_view url) {
  const size_t query = url.find_first_of("?#");
  std::string display(url.substr(0, query));
  if (query != absl::string_view::npos) display += "?...";
  const size_t scheme_end = display.find("://");
  if (scheme_end != std::string::npos) {
    const size_t authority = scheme_end + 3;
    const size_t at =
        display.substr(0, display.find('/', authority)).rfind('@');
    if (at != std::string::npos && at >= authority) {
      display.replace(authority, at - authority, "...");
    }
  }
  return display;
}

bool HasControlOrSpace(absl::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) return true;
  }
  return false;
}

std::string HostHeader(const WebhookUrl& u) {
  std::string host = u.host.find(':') != std::string::npos
                         ? absl::StrCat("[", u.host, "]")
                         : u.host;
  if (u.port != (u.https ? 443 : 80)) absl::StrAppend(&host, ":", u.port);
  return host;
}

bool IsIpLiteral(const std::string& host) {
  boost::system::error_code ec;
  net::ip::make_address(host, ec);
  return !ec;
}

absl::Status Failure(absl::string_view method, const WebhookUrl& u,
                     absl::string_view phase, const beast::error_code& ec,
                     absl::Duration timeout) {
  if (ec == beast::error::timeout || ec == net::error::timed_out) {
    return absl::DeadlineExceededError(
        absl::StrCat(method, " ", u.display, ": timed out after ",
                     absl::FormatDuration(timeout), " while ", phase));
  }
  return absl::UnavailableError(
      absl::StrCat(method, " ", u.display, ": ", phase, ": ", ec.message()));
}

// Runs `ioc` until the one operation started on it has completed. Every
// socket operation below is asynchronous only because beast's timeouts
// (tcp_stream::expires_at) apply to asynchronous operations alone.
void RunPending(net::io_context& ioc) {
  ioc.run();
  ioc.restart();
}

absl::StatusOr<tcp::resolver::results_type> Resolve(net::io_context& ioc,
                                                    absl::string_view method,
                                                    const WebhookUrl& u,
                                                    SteadyTime deadline,
                                                    absl::Duration timeout) {
  tcp::resolver resolver(ioc);
  bool done = false;
  beast::error_code ec;
  tcp::resolver::results_type endpoints;
  resolver.async_resolve(
      u.host, std::to_string(u.port),
      [&](const beast::error_code& e, tcp::resolver::results_type r) {
        done = true;
        ec = e;
        endpoints = std::move(r);
      });
  ioc.run_until(deadline);
  if (!done) {
    resolver.cancel();
    RunPending(ioc);
    return Failure(method, u, absl::StrCat("resolving '", u.host, "'"),
                   beast::error::timeout, timeout);
  }
  ioc.restart();
  if (ec)
    return Failure(method, u, absl::StrCat("resolving '", u.host, "'"), ec,
                   timeout);
  return endpoints;
}

// The rest of a download (see Exchange) once the request is written: the
// response's body streams into `path` (created or truncated), each read
// allowed `timeout` of silence.
template <class Stream>
absl::StatusOr<HttpReply> ReadToFile(net::io_context& ioc, Stream& stream,
                                     const WebhookUrl& u,
                                     absl::string_view method,
                                     const HttpPostOptions& options,
                                     const std::string& path) {
  const absl::Duration timeout = options.timeout;
  beast::error_code ec;
  beast::flat_buffer buffer;
  http::response_parser<http::file_body> parser;
  // Bounded by the disk, not by memory.
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  http::async_read_header(stream, buffer, parser,
                          [&](const beast::error_code& e, size_t) { ec = e; });
  RunPending(ioc);
  if (ec) return Failure(method, u, "reading the response", ec, timeout);
  HttpReply reply;
  reply.status = static_cast<int>(parser.get().result_int());
  reply.content_type = std::string(parser.get()[http::field::content_type]);
  if (reply.status < 200 || reply.status > 299) return reply;
  parser.get().body().open(path.c_str(), beast::file_mode::write, ec);
  if (ec) {
    return absl::FailedPreconditionError(absl::StrCat(
        method, " ", u.display, ": cannot write '", path, "': ", ec.message()));
  }
  while (!parser.is_done()) {
    if (options.cancelled && options.cancelled()) {
      return absl::CancelledError(
          absl::StrCat(method, " ", u.display, ": abandoned (stopping)"));
    }
    beast::get_lowest_layer(stream).expires_after(
        absl::ToChronoNanoseconds(timeout));
    http::async_read_some(stream, buffer, parser,
                          [&](const beast::error_code& e, size_t) { ec = e; });
    RunPending(ioc);
    if (ec) return Failure(method, u, "reading the body", ec, timeout);
  }
  parser.get().body().close();
  std::error_code size_ec;
  reply.bytes = std::filesystem::file_size(path, size_ec);
  return reply;
}

// A request body sent from a file, with the file's size as Send measured it
// (and put into Content-Length).
struct Upload {
  const HttpBodyFile& body;
  uint64_t file_bytes;
};

// Writes `request`'s headers, then the body from `upload` piece by piece,
// each write allowed `timeout`; then gives the response the same `timeout` to
// start.
template <class Stream>
absl::Status WriteBodyFile(net::io_context& ioc, Stream& stream,
                           const WebhookUrl& u,
                           const http::request<http::string_body>& request,
                           const Upload& sent_file, absl::Duration timeout) {
  const HttpBodyFile& upload = sent_file.body;
  const uint64_t file_bytes = sent_file.file_bytes;
  const std::string method(request.method_string());
  beast::error_code ec;
  auto write = [&](net::const_buffer data) -> absl::Status {
    beast::get_lowest_layer(stream).expires_after(
        absl::ToChronoNanoseconds(timeout));
    net::async_write(stream, data,
                     [&](const beast::error_code& e, size_t) { ec = e; });
    RunPending(ioc);
    if (ec) return Failure(method, u, "sending the body", ec, timeout);
    return absl::OkStatus();
  };
  std::ifstream in(upload.path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(
        method, " ", u.display, ": cannot read '", upload.path, "'"));
  }
  http::request_serializer<http::string_body> serializer(request);
  http::async_write_header(stream, serializer,
                           [&](const beast::error_code& e, size_t) { ec = e; });
  RunPending(ioc);
  if (ec) return Failure(method, u, "sending the request", ec, timeout);
  RETURN_IF_ERROR(write(net::buffer(upload.prefix)));
  std::vector<char> piece(1 << 20);
  uint64_t sent = 0;
  while (sent < file_bytes) {
    const size_t want = static_cast<size_t>(
        std::min<uint64_t>(piece.size(), file_bytes - sent));
    in.read(piece.data(), static_cast<std::streamsize>(want));
    if (static_cast<size_t>(in.gcount()) != want) {
      return absl::DataLossError(absl::StrCat(
          method, " ", u.display, ": '", upload.path, "' shrank while it was ",
          "being sent (", sent + static_cast<uint64_t>(in.gcount()), " of ",
          file_bytes, " bytes)"));
    }
    RETURN_IF_ERROR(write(net::buffer(piece.data(), want)));
    sent += want;
  }
  if (in.peek() != std::ifstream::traits_type::eof()) {
    return absl::DataLossError(absl::StrCat(method, " ", u.display, ": '",
                                            upload.path,
                                            "' grew while it was being sent"));
  }
  RETURN_IF_ERROR(write(net::buffer(upload.suffix)));
  beast::get_lowest_layer(stream).expires_after(
      absl::ToChronoNanoseconds(timeout));
  return absl::OkStatus();
}

template <class Stream>
absl::StatusOr<HttpReply> Exchange(
    net::io_context& ioc, Stream& stream, const WebhookUrl& u,
    const http::request<http::string_body>& request,
    const HttpPostOptions& options, std::optional<uint64_t> body_limit,
    const std::string* download_to, const Upload* upload) {
  const absl::Duration timeout = options.timeout;
  const std::string method(request.method_string());
  beast::error_code ec;
  absl::Status upload_error;
  if (upload == nullptr) {
    http::async_write(stream, request,
                      [&](const beast::error_code& e, size_t) { ec = e; });
    RunPending(ioc);
    if (ec) return Failure(method, u, "sending the request", ec, timeout);
  } else {
    upload_error = WriteBodyFile(ioc, stream, u, request, *upload, timeout);
    // A server may answer before the whole body is sent (413, 401...) and
    // close, failing the write: its answer says more than the write error.
    if (!upload_error.ok() && !absl::IsUnavailable(upload_error) &&
        !absl::IsDeadlineExceeded(upload_error)) {
      return upload_error;
    }
    if (!upload_error.ok()) {
      beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(2));
    }
  }
  if (download_to != nullptr) {
    return ReadToFile(ioc, stream, u, method, options, *download_to);
  }
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  HttpReply reply;
  if (body_limit) {
    parser.body_limit(*body_limit);
    http::async_read(stream, buffer, parser,
                     [&](const beast::error_code& e, size_t) { ec = e; });
  } else {
    http::async_read_header(
        stream, buffer, parser,
        [&](const beast::error_code& e, size_t) { ec = e; });
  }
  RunPending(ioc);
  if (ec && !upload_error.ok()) return upload_error;
  if (ec) return Failure(method, u, "reading the response", ec, timeout);
  reply.status = static_cast<int>(parser.get().result_int());
  reply.content_type = std::string(parser.get()[http::field::content_type]);
  if (body_limit) reply.body = std::move(parser.get().body());
  return reply;
}

absl::Status Connect(net::io_context& ioc, beast::tcp_stream& stream,
                     const tcp::resolver::results_type& endpoints,
                     absl::string_view method, const WebhookUrl& u,
                     absl::Duration timeout) {
  beast::error_code ec;
  stream.async_connect(endpoints, [&](const beast::error_code& e,
                                      const tcp::endpoint&) { ec = e; });
  RunPending(ioc);
  if (ec) return Failure(method, u, "connecting", ec, timeout);
  return absl::OkStatus();
}

absl::StatusOr<HttpReply> SendHttps(
    net::io_context& ioc, const tcp::resolver::results_type& endpoints,
    const WebhookUrl& u, const http::request<http::string_body>& request,
    SteadyTime deadline, const HttpPostOptions& options,
    std::optional<uint64_t> body_limit, const std::string* download_to,
    const Upload* upload) {
  const std::string method(request.method_string());
  ssl::context ctx(ssl::context::tls_client);
  beast::error_code ec;
  if (options.ca_pem.empty()) {
    ctx.set_default_verify_paths(ec);
  } else {
    ctx.add_certificate_authority(net::buffer(options.ca_pem), ec);
  }
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat(method, " ", u.display,
                     ": loading trusted certificates: ", ec.message()));
  }
  ctx.set_verify_mode(ssl::verify_peer);
  beast::ssl_stream<beast::tcp_stream> stream(ioc, ctx);
  stream.set_verify_callback(ssl::host_name_verification(u.host));
  // SNI carries DNS names only (RFC 6066).
  if (!IsIpLiteral(u.host) &&
      !SSL_set_tlsext_host_name(stream.native_handle(), u.host.c_str())) {
    return absl::UnavailableError(
        absl::StrCat(method, " ", u.display, ": cannot set TLS server name"));
  }
  beast::get_lowest_layer(stream).expires_at(deadline);
  RETURN_IF_ERROR(Connect(ioc, beast::get_lowest_layer(stream), endpoints,
                          method, u, options.timeout));
  stream.async_handshake(ssl::stream_base::client,
                         [&](const beast::error_code& e) { ec = e; });
  RunPending(ioc);
  if (ec) return Failure(method, u, "TLS handshake", ec, options.timeout);
  return Exchange(ioc, stream, u, request, options, body_limit, download_to,
                  upload);
}

}  // namespace

absl::StatusOr<WebhookUrl> ParseWebhookUrl(absl::string_view url) {
  WebhookUrl u;
  u.display = DisplayUrl(url);
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("URL '", u.display, "': ", why));
  };
  // Also keeps CR/LF out of the request line.
  if (HasControlOrSpace(url)) return bad("contains a space or control byte");
  const size_t scheme_end = url.find("://");
  if (scheme_end == absl::string_view::npos) {
    return bad("expected http://host[:port]/path or https://…");
  }
  const std::string scheme = absl::AsciiStrToLower(url.substr(0, scheme_end));
  if (scheme != "http" && scheme != "https") {
    return bad(absl::StrCat("scheme '", scheme, "' is not http or https"));
  }
  u.https = scheme == "https";
  absl::string_view rest = url.substr(scheme_end + 3);
  if (rest.find('#') != absl::string_view::npos) return bad("has a fragment");
  const size_t authority_end = rest.find_first_of("/?");
  const absl::string_view authority = rest.substr(0, authority_end);
  if (authority.find('@') != absl::string_view::npos) {
    return bad("user info is not supported; receivers check Ferry-Signature");
  }
  absl::string_view host = authority;
  absl::string_view port;
  bool has_port = false;
  if (absl::StartsWith(authority, "[")) {
    const size_t close = authority.find(']');
    if (close == absl::string_view::npos) return bad("unclosed '[' in host");
    host = authority.substr(1, close - 1);
    const absl::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return bad("expected ':' after ']'");
      port = after.substr(1);
      has_port = true;
    }
  } else if (const size_t colon = authority.find(':');
             colon != absl::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    has_port = true;
  }
  if (host.empty()) return bad("no host");
  u.host = std::string(host);
  u.port = u.https ? 443 : 80;
  if (has_port) {
    uint32_t p = 0;
    if (port.empty() ||
        !std::all_of(port.begin(), port.end(), absl::ascii_isdigit) ||
        !absl::SimpleAtoi(port, &p) || p == 0 || p > 65535) {
      return bad(absl::StrCat("port '", port, "' is not in 1-65535"));
    }
    u.port = static_cast<uint16_t>(p);
  }
  u.target = authority_end == absl::string_view::npos
                 ? "/"
                 : std::string(rest.substr(authority_end));
  if (absl::StartsWith(u.target, "?")) u.target.insert(0, "/");
  return u;
}

namespace {

absl::StatusOr<http::verb> ParseMethod(absl::string_view method) {
  const http::verb verb =
      http::string_to_verb(beast::string_view(method.data(), method.size()));
  if (verb == http::verb::unknown) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown HTTP method '", method, "'"));
  }
  return verb;
}

absl::StatusOr<HttpReply> Send(http::verb verb, const std::string& url,
                               absl::string_view body,
                               absl::string_view content_type,
                               const HttpHeaders& headers,
                               const HttpPostOptions& options,
                               std::optional<uint64_t> body_limit,
                               const std::string* download_to = nullptr,
                               const HttpBodyFile* upload = nullptr) {
  const std::string method(http::to_string(verb));
  ASSIGN_OR_RETURN(const WebhookUrl u, ParseWebhookUrl(url));
  http::request<http::string_body> request{verb, u.target, 11};
  request.set(http::field::host, HostHeader(u));
  request.set(http::field::user_agent, "Ferry/1");
  if (!content_type.empty()) {
    request.set(http::field::content_type, std::string(content_type));
  }
  request.set(http::field::connection, "close");
  for (const auto& [name, value] : headers) {
    // Beast writes fields verbatim; a CR or LF would start a new header.
    if (name.empty() || HasControlOrSpace(name) ||
        value.find_first_of("\r\n\0", 0, 3) != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          method, " ", u.display, ": header '", absl::CEscape(name),
          "' has an empty name or a control byte"));
    }
    request.set(name, value);
  }
  std::optional<Upload> sent_file;
  if (upload != nullptr) {
    std::error_code size_ec;
    const uint64_t size = std::filesystem::file_size(upload->path, size_ec);
    if (size_ec) {
      return absl::NotFoundError(absl::StrCat(method, " ", u.display,
                                              ": cannot read '", upload->path,
                                              "': ", size_ec.message()));
    }
    sent_file.emplace(Upload{*upload, size});
    request.content_length(upload->prefix.size() + size +
                           upload->suffix.size());
  } else if (verb != http::verb::get || !body.empty()) {
    request.body() = std::string(body);
    request.prepare_payload();
  }

  const SteadyTime deadline = std::chrono::steady_clock::now() +
                              absl::ToChronoNanoseconds(options.timeout);
  net::io_context ioc;
  ASSIGN_OR_RETURN(const tcp::resolver::results_type endpoints,
                   Resolve(ioc, method, u, deadline, options.timeout));
  const Upload* sending = sent_file ? &*sent_file : nullptr;
  if (u.https) {
    return SendHttps(ioc, endpoints, u, request, deadline, options, body_limit,
                     download_to, sending);
  }
  beast::tcp_stream stream(ioc);
  stream.expires_at(deadline);
  RETURN_IF_ERROR(Connect(ioc, stream, endpoints, method, u, options.timeout));
  return Exchange(ioc, stream, u, request, options, body_limit, download_to,
                  sending);
}

}  // namespace

absl::StatusOr<int> PostJson(const std::string& url, absl::string_view body,
                             const HttpHeaders& headers,
                             const HttpPostOptions& options) {
  ASSIGN_OR_RETURN(HttpReply reply,
                   Send(http::verb::post, url, body, "application/json",
                        headers, options, std::nullopt));
  return reply.status;
}

absl::StatusOr<HttpReply> HttpCall(
    absl::string_view method, const std::string& url, absl::string_view body,
    absl::string_view content_type, const HttpHeaders& headers,
    const HttpPostOptions& options, uint64_t max_body_bytes) {
  ASSIGN_OR_RETURN(const http::verb verb, ParseMethod(method));
  return Send(verb, url, body, content_type, headers, options, max_body_bytes);
}

absl::StatusOr<HttpReply> HttpUpload(absl::string_view method,
                                     const std::string& url,
                                     const HttpBodyFile& body,
                                     absl::string_view content_type,
                                     const HttpPostOptions& options,
                                     uint64_t max_body_bytes) {
  ASSIGN_OR_RETURN(const http::verb verb, ParseMethod(method));
  return Send(verb, url, "", content_type, {}, options, max_body_bytes, nullptr,
              &body);
}

absl::StatusOr<uint64_t> HttpDownload(const std::string& url,
                                      const std::string& path,
                                      const HttpPostOptions& options) {
  ASSIGN_OR_RETURN(HttpReply reply, Send(http::verb::get, url, "", "", {},
                                         options, std::nullopt, &path));
  if (reply.status >= 200 && reply.status <= 299) return reply.bytes;
  const std::string message = absl::StrCat(
      "GET ", DisplayUrl(url), ": HTTP ", reply.status,
      reply.status >= 500 || reply.status == 429 ? " (the server may recover)"
                                                 : "");
  if (reply.status >= 500 || reply.status == 429) {
    return absl::UnavailableError(message);
  }
  return absl::FailedPreconditionError(message);
}

absl::StatusOr<int> PostJson(const std::string& url, absl::string_view body,
                             const HttpHeaders& headers,
                             absl::Duration timeout) {
  HttpPostOptions options;
  options.timeout = timeout;
  return PostJson(url, body, headers, options);
}

}  // namespace ferry
