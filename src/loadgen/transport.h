// SPDX-License-Identifier: Apache-2.0
// Transport: how `ferry bench` sends one inference, asynchronously. The load
// driver (load_driver.h) decides when; a transport decides how (HTTP/1.1 over
// a pool of keep-alive connections, or gRPC calls over a few channels) and
// never holds a thread per call in flight.
#ifndef FERRY_LOADGEN_TRANSPORT_H_
#define FERRY_LOADGEN_TRANSPORT_H_

#include <functional>
#include <string>

namespace ferry {

struct CallResult {
  bool ok = false;
  // Why not, as a short code that groups alike failures: "http 503",
  // "grpc UNAVAILABLE", "connect: Connection refused", "timeout".
  std::string error;
};

using CallDone = std::function<void(CallResult)>;

class Transport {
 public:
  virtual ~Transport() = default;

  // Starts one inference; `done` runs exactly once, on a transport thread,
  // when it ends. Thread-safe; never blocks. Every call must have finished
  // before the transport is destroyed.
  virtual void Send(CallDone done) = 0;
};

}  // namespace ferry

#endif  // FERRY_LOADGEN_TRANSPORT_H_
