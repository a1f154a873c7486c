// SPDX-License-Identifier: Apache-2.0
// TestReceiver: a real webhook receiver for tests, an HTTP(S) server on
// 127.0.0.1 that records every request and answers each with the next status
// of a script (the last one repeats). One connection at a time, on a thread of
// its own. Also MakeSelfSignedCert, a throwaway identity for https tests.
#ifndef FERRY_TESTS_JOBS_WEBHOOK_TEST_RECEIVER_H_
#define FERRY_TESTS_JOBS_WEBHOOK_TEST_RECEIVER_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "core/mutex.h"

namespace ferry {

struct TestCert {
  std::string cert_pem;
  std::string key_pem;
};

// A self-signed P-256 certificate for `dns_name` and, unless told otherwise,
// the IP address 127.0.0.1.
TestCert MakeSelfSignedCert(const std::string& dns_name = "localhost",
                            bool with_loopback_ip = true);

struct ReceivedRequest {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

class TestReceiver {
 public:
  // Answers with `statuses` in turn; with `tls`, speaks https.
  explicit TestReceiver(std::vector<int> statuses,
                        std::optional<TestCert> tls = std::nullopt);
  ~TestReceiver();  // stops and joins the thread

  uint16_t port() const { return port_; }
  // "http[s]://127.0.0.1:<port><path>".
  std::string url(absl::string_view path = "/hooks/ferry") const;

  std::vector<ReceivedRequest> requests() ABSL_LOCKS_EXCLUDED(mu_);
  // The body of every response from now on (default: "status <code>\n").
  void set_body(std::string body) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Serve();
  void Handle(boost::asio::ip::tcp::socket& socket);
  int NextStatus() ABSL_LOCKS_EXCLUDED(mu_);

  const std::vector<int> statuses_;
  const std::optional<TestCert> tls_;
  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  // The connection being served, so the destructor can shut it down if a
  // client under test never finishes its request.
  std::atomic<int> active_fd_{-1};
  std::thread thread_;

  Mutex mu_;
  std::vector<ReceivedRequest> requests_ ABSL_GUARDED_BY(mu_);
  std::string body_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ferry

#endif  // FERRY_TESTS_JOBS_WEBHOOK_TEST_RECEIVER_H_
