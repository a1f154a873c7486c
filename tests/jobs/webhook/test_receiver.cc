// SPDX-License-Identifier: Apache-2.0
#include "jobs/webhook/test_receiver.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <memory>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "boost/asio/connect.hpp"
#include "boost/asio/ssl/context.hpp"
#include "boost/asio/ssl/stream.hpp"
#include "boost/beast/core/flat_buffer.hpp"
#include "boost/beast/http/parser.hpp"
#include "boost/beast/http/read.hpp"
#include "boost/beast/http/string_body.hpp"
#include "boost/beast/http/write.hpp"
#include "core/logging.h"

namespace ferry {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

std::string BioString(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

void AddExtension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  FERRY_CHECK(ext != nullptr && X509_add_ext(cert, ext, -1) == 1);
  X509_EXTENSION_free(ext);
}

// Reads one request from `stream`, hands it to `record`, answers `status`.
// Recording comes first so that a client that has its answer finds the
// request recorded.
template <class Stream, class Record>
void Exchange(Stream& stream, int status, const std::string& body,
              Record record) {
  beast::error_code ec;
  beast::flat_buffer buffer;
  http::request_parser<http::string_body> parser;
  parser.body_limit(64 << 20);  // uploads in tests are a few MB
  http::read(stream, buffer, parser, ec);
  if (ec) return;
  const http::request<http::string_body>& request = parser.get();
  ReceivedRequest r;
  r.method = std::string(request.method_string());
  r.target = std::string(request.target());
  for (const auto& field : request) {
    r.headers[absl::AsciiStrToLower(std::string(field.name_string()))] =
        std::string(field.value());
  }
  r.body = request.body();
  record(std::move(r));
  http::response<http::string_body> response{static_cast<http::status>(status),
                                             11};
  response.set(http::field::content_type, "text/plain");
  response.set(http::field::connection, "close");
  response.body() = body.empty() ? absl::StrCat("status ", status, "\n") : body;
  response.prepare_payload();
  http::write(stream, response, ec);
}

}  // namespace

TestCert MakeSelfSignedCert(const std::string& dns_name,
                            bool with_loopback_ip) {
  PkeyPtr key(EVP_EC_gen("P-256"));
  FERRY_CHECK(key != nullptr);
  X509Ptr cert(X509_new());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(
      name, "CN", MBSTRING_ASC,
      reinterpret_cast<const unsigned char*>(dns_name.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  AddExtension(
      cert.get(), NID_subject_alt_name,
      absl::StrCat("DNS:", dns_name, with_loopback_ip ? ",IP:127.0.0.1" : "")
          .c_str());
  FERRY_CHECK(X509_sign(cert.get(), key.get(), EVP_sha256()) > 0);

  TestCert out;
  BioPtr cert_bio(BIO_new(BIO_s_mem()));
  FERRY_CHECK(PEM_write_bio_X509(cert_bio.get(), cert.get()) == 1);
  out.cert_pem = BioString(cert_bio.get());
  BioPtr key_bio(BIO_new(BIO_s_mem()));
  FERRY_CHECK(PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr,
                                       nullptr, 0, nullptr, nullptr) == 1);
  out.key_pem = BioString(key_bio.get());
  return out;
}

TestReceiver::TestReceiver(std::vector<int> statuses,
                           std::optional<TestCert> tls)
    : statuses_(std::move(statuses)),
      tls_(std::move(tls)),
      acceptor_(ioc_, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0)) {
  FERRY_CHECK(!statuses_.empty());
  port_ = acceptor_.local_endpoint().port();
  thread_ = std::thread([this] { Serve(); });
}

TestReceiver::~TestReceiver() {
  stopping_ = true;
  const int fd = active_fd_.load();
  if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
  // Wakes the blocking accept() so the thread sees `stopping_`.
  beast::error_code ec;
  tcp::socket poke(ioc_);
  poke.connect(acceptor_.local_endpoint(), ec);
  thread_.join();
}

std::string TestReceiver::url(absl::string_view path) const {
  return absl::StrCat(tls_ ? "https" : "http", "://127.0.0.1:", port_, path);
}

std::vector<ReceivedRequest> TestReceiver::requests() {
  MutexLock lock(&mu_);
  return requests_;
}

int TestReceiver::NextStatus() {
  MutexLock lock(&mu_);
  const size_t i = std::min(requests_.size(), statuses_.size() - 1);
  return statuses_[i];
}

void TestReceiver::Serve() {
  while (true) {
    tcp::socket socket(ioc_);
    beast::error_code ec;
    acceptor_.accept(socket, ec);
    if (stopping_) return;
    if (ec) continue;
    active_fd_ = socket.native_handle();
    if (stopping_) return;  // the destructor may have missed the fd
    Handle(socket);
    active_fd_ = -1;
  }
}

void TestReceiver::Handle(tcp::socket& socket) {
  const int status = NextStatus();
  std::string body;
  {
    MutexLock lock(&mu_);
    body = body_;
  }
  auto record = [this](ReceivedRequest r) {
    MutexLock lock(&mu_);
    requests_.push_back(std::move(r));
  };
  if (!tls_) {
    Exchange(socket, status, body, record);
  } else {
    ssl::context ctx(ssl::context::tls_server);
    ctx.use_certificate_chain(net::buffer(tls_->cert_pem));
    ctx.use_private_key(net::buffer(tls_->key_pem), ssl::context::pem);
    ssl::stream<tcp::socket&> stream(socket, ctx);
    beast::error_code ec;
    stream.handshake(ssl::stream_base::server, ec);
    if (ec) return;  // e.g. the client rejected the certificate
    Exchange(stream, status, body, record);
  }
}

void TestReceiver::set_body(std::string body) {
  MutexLock lock(&mu_);
  body_ = std::move(body);
}

}  // namespace ferry
