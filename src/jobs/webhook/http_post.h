// SPDX-License-Identifier: Apache-2.0
// PostJson: a small blocking HTTP/1.1 client, just enough to deliver webhooks
// (and, with HttpCall, HttpUpload and HttpDownload, for `ferry jobs` and for
// jobs whose input is an http(s) URL).
//
// One request per connection (`Connection: close`), no redirects (following
// one would let a receiver point Ferry at any other host), no proxies. Only
// the response's status line and headers are read; its body is ignored.
// `https` URLs are verified against the system trust store, or against
// `HttpPostOptions::ca_pem` when set, with the host name (or IP address)
// checked against the certificate.
//
// The timeout is wall-clock time (sockets live in real time, not in a test's
// fake Clock) and covers connecting, the TLS handshake, sending and the
// response headers. Name resolution is abandoned at the timeout too, although
// the system resolver may hold the calling thread a little longer.
//
// Blocks the calling thread; safe to call from several threads at once.
#ifndef FERRY_JOBS_WEBHOOK_HTTP_POST_H_
#define FERRY_JOBS_WEBHOOK_HTTP_POST_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ferry {

// A parsed `http[s]://host[:port][/path][?query]` URL.
struct WebhookUrl {
  bool https = false;
  std::string host;     // without brackets for IPv6 literals
  uint16_t port = 0;    // 80 or 443 when the URL names none
  std::string target;   // path and query; "/" when the URL has none
  std::string display;  // for messages: query and user info replaced by "..."
};

// INVALID_ARGUMENT naming the URL (less its query, which often holds a
// token) for anything else: another scheme, user info, no host, a bad port, a
// fragment, spaces or control characters. Use it to check a job's URL when
// the job is submitted.
absl::StatusOr<WebhookUrl> ParseWebhookUrl(absl::string_view url);

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpPostOptions {
  absl::Duration timeout = absl::Seconds(10);
  // For HttpDownload: asked between reads of the body; true abandons the
  // download with CANCELLED (e.g. the server is stopping).
  std::function<bool()> cancelled;
  // PEM certificates to trust for https instead of the system store; empty
  // means the system store.
  std::string ca_pem;
};

// POSTs `body` with `Content-Type: application/json` and `headers` and
// returns the response's status code, whatever it is. Errors name the URL:
// INVALID_ARGUMENT for a bad URL or a header with CR/LF; UNAVAILABLE when the
// host does not resolve, refuses or drops the connection, fails TLS
// verification or answers something that is not HTTP; DEADLINE_EXCEEDED at
// the timeout.
absl::StatusOr<int> PostJson(const std::string& url, absl::string_view body,
                             const HttpHeaders& headers,
                             const HttpPostOptions& options);
absl::StatusOr<int> PostJson(const std::string& url, absl::string_view body,
                             const HttpHeaders& headers,
                             absl::Duration timeout);

struct HttpReply {
  int status = 0;
  std::string content_type;
  std::string body;
  uint64_t bytes = 0;  // of a body written to a file (HttpDownload)
};

// Any method (GET, POST, DELETE, ...), reading the whole response body (at
// most `max_body_bytes`; more is UNAVAILABLE). `content_type` empty: no
// Content-Type header. Same URL rules, timeouts and errors as PostJson. For
// clients of Ferry's own API (`ferry jobs`).
absl::StatusOr<HttpReply> HttpCall(absl::string_view method,
                                   const std::string& url,
                                   absl::string_view body,
                                   absl::string_view content_type,
                                   const HttpHeaders& headers,
                                   const HttpPostOptions& options,
                                   uint64_t max_body_bytes = uint64_t{1} << 31);

// A request body sent from a file: `prefix`, then the file's bytes, then
// `suffix` (e.g. a multipart upload's part headers and closing boundary).
struct HttpBodyFile {
  std::string prefix;
  std::string path;
  std::string suffix;
};

// As HttpCall, but the body streams from `body.path` in pieces, so memory
// does not grow with the file. `options.timeout` bounds connecting, then each
// write of a piece and the wait for the response headers, not the whole
// transfer. NOT_FOUND naming the path when the file cannot be read;
// DATA_LOSS when it changes size while being sent.
absl::StatusOr<HttpReply> HttpUpload(
    absl::string_view method, const std::string& url, const HttpBodyFile& body,
    absl::string_view content_type, const HttpPostOptions& options,
    uint64_t max_body_bytes = uint64_t{1} << 31);

// GETs `url` into the file `path` (created or truncated) and returns the
// bytes written. The body streams to disk: memory does not grow with it.
// `options.timeout` bounds connecting and the response headers, then each
// wait for more of the body (not the whole transfer). Same URL rules and
// errors as PostJson, plus: UNAVAILABLE for HTTP 5xx and 429 (worth another
// try), FAILED_PRECONDITION for any other non-2xx status or a file that
// cannot be written, CANCELLED when `options.cancelled` says so. On an error
// `path` may hold part of the body.
absl::StatusOr<uint64_t> HttpDownload(const std::string& url,
                                      const std::string& path,
                                      const HttpPostOptions& options);

}  // namespace ferry

#endif  // FERRY_JOBS_WEBHOOK_HTTP_POST_H_
