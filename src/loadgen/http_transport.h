// SPDX-License-Identifier: Apache-2.0
// HttpTransport: KServe v2 inference requests over HTTP/1.1 with Boost.Beast.
// One or more event-loop threads, each with its own pool of keep-alive
// connections: a call takes an idle connection, or opens one while the pool
// is below its cap, or waits for one (a waiting call's latency keeps counting,
// so an open loop measures from the intended send time).
#ifndef FERRY_LOADGEN_HTTP_TRANSPORT_H_
#define FERRY_LOADGEN_HTTP_TRANSPORT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "loadgen/transport.h"

namespace ferry {

struct HttpTransportOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8000;
  std::string target;  // e.g. /v2/models/fraud_xgb/infer
  struct Body {
    std::string bytes;
    // Bytes of JSON at the start when it carries binary tensors (sent as
    // Inference-Header-Content-Length); 0: plain JSON.
    size_t binary_json_size = 0;
  };
  // Request bodies, sent as they are, in turn (at least one).
  std::vector<Body> bodies;
  int threads = 1;             // event loops
  int max_connections = 1024;  // over all loops
  absl::Duration timeout = absl::Seconds(30);
};

// UNAVAILABLE when the host does not resolve.
absl::StatusOr<std::unique_ptr<Transport>> MakeHttpTransport(
    HttpTransportOptions options);

}  // namespace ferry

#endif  // FERRY_LOADGEN_HTTP_TRANSPORT_H_
