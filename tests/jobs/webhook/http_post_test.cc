// SPDX-License-Identifier: Apache-2.0
#include "jobs/webhook/http_post.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "gtest/gtest.h"
#include "jobs/webhook/test_receiver.h"
#include "test_util/temp_dir.h"

namespace ferry {
namespace {

using tcp = boost::asio::ip::tcp;

// A loopback port nothing listens on: bound, then released.
uint16_t ClosedPort() {
  boost::asio::io_context ioc;
  tcp::acceptor a(ioc,
                  tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  const uint16_t port = a.local_endpoint().port();
  a.close();
  return port;
}

TEST(ParseWebhookUrlTest, AcceptsHttpAndHttpsForms) {
  struct Case {
    const char* url;
    bool https;
    const char* host;
    uint16_t port;
    const char* target;
  };
  for (const Case& c : {
           Case{"http://example.com", false, "example.com", 80, "/"},
           Case{"HTTPS://Example.com/", true, "Example.com", 443, "/"},
           Case{"https://h.example:8443/a/b?x=1&y=2", true, "h.example", 8443,
                "/a/b?x=1&y=2"},
           Case{"http://127.0.0.1:9000/hook", false, "127.0.0.1", 9000,
                "/hook"},
           Case{"http://[::1]:9000/p", false, "::1", 9000, "/p"},
           Case{"http://[::1]/p", false, "::1", 80, "/p"},
           Case{"http://h?token=t", false, "h", 80, "/?token=t"},
       }) {
    absl::StatusOr<WebhookUrl> u = ParseWebhookUrl(c.url);
    ASSERT_TRUE(u.ok()) << c.url << ": " << u.status();
    EXPECT_EQ(u->https, c.https) << c.url;
    EXPECT_EQ(u->host, c.host) << c.url;
    EXPECT_EQ(u->port, c.port) << c.url;
    EXPECT_EQ(u->target, c.target) << c.url;
  }
}

TEST(ParseWebhookUrlTest, RejectsMalformedUrlsNamingThem) {
  for (const char* url : {
           "",
           "example.com/hook",
           "ftp://h/x",
           "http://",
           "http:///path",
           "http://h:0/",
           "http://h:65536/",
           "http://h:8o/",
           "http://h:/",
           "http://h:+80/",
           "http://user:pw@h/",
           "http://h/a b",
           "http://h/#frag",
           "http://[::1/",
           "http://[::1]x/",
           "http://h/\r\nX-Injected: 1",
       }) {
    const absl::StatusOr<WebhookUrl> u = ParseWebhookUrl(url);
    EXPECT_EQ(u.status().code(), absl::StatusCode::kInvalidArgument)
        << "'" << url << "'";
  }
  const absl::Status s = ParseWebhookUrl("ftp://h/x").status();
  EXPECT_TRUE(absl::StrContains(s.message(), "'ftp://h/x'")) << s;
}

TEST(ParseWebhookUrlTest, MessagesHideQueryAndUserInfo) {
  const absl::Status s =
      ParseWebhookUrl("http://user:hunter2@h/x?token=s3cret").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(absl::StrContains(s.message(), "s3cret")) << s;
  EXPECT_FALSE(absl::StrContains(s.message(), "hunter2")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "http://...@h/x?...")) << s;
}

TEST(PostJsonTest, PostsJsonWithHeadersAndReturnsTheStatus) {
  TestReceiver receiver({202});
  const std::string body = R"({"hello":"world"})";
  const absl::StatusOr<int> code =
      PostJson(receiver.url("/in?k=v"), body,
               {{"Ferry-Signature", "t=1,v1=ab"}}, absl::Seconds(5));
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 202);
  const std::vector<ReceivedRequest> got = receiver.requests();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].method, "POST");
  EXPECT_EQ(got[0].target, "/in?k=v");
  EXPECT_EQ(got[0].body, body);
  EXPECT_EQ(got[0].headers.at("content-type"), "application/json");
  EXPECT_EQ(got[0].headers.at("content-length"), "17");
  EXPECT_EQ(got[0].headers.at("host"),
            absl::StrCat("127.0.0.1:", receiver.port()));
  EXPECT_EQ(got[0].headers.at("ferry-signature"), "t=1,v1=ab");
}

TEST(PostJsonTest, NonSuccessStatusIsAValueNotAnError) {
  TestReceiver receiver({503});
  const absl::StatusOr<int> code =
      PostJson(receiver.url(), "{}", {}, absl::Seconds(5));
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 503);
}

TEST(PostJsonTest, ConnectionRefusedIsUnavailableNamingTheUrl) {
  const std::string url = absl::StrCat("http://127.0.0.1:", ClosedPort(), "/h");
  const absl::StatusOr<int> code = PostJson(url, "{}", {}, absl::Seconds(5));
  EXPECT_EQ(code.status().code(), absl::StatusCode::kUnavailable)
      << code.status();
  EXPECT_TRUE(absl::StrContains(code.status().message(), url)) << code.status();
}

TEST(PostJsonTest, SilentServerIsDeadlineExceededAtTheTimeout) {
  // Listens, so the connection is made by the kernel, but never answers.
  boost::asio::io_context ioc;
  tcp::acceptor silent(
      ioc, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  const std::string url =
      absl::StrCat("http://127.0.0.1:", silent.local_endpoint().port(), "/h");
  const absl::Time start = absl::Now();
  const absl::StatusOr<int> code =
      PostJson(url, "{}", {}, absl::Milliseconds(200));
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(code.status().code(), absl::StatusCode::kDeadlineExceeded)
      << code.status();
  EXPECT_TRUE(absl::StrContains(code.status().message(), url)) << code.status();
  EXPECT_GE(took, absl::Milliseconds(150));
  EXPECT_LT(took, absl::Seconds(3));
}

TEST(PostJsonTest, BadUrlOrHeaderIsInvalidArgument) {
  EXPECT_EQ(PostJson("gopher://h/", "{}", {}, absl::Seconds(1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  TestReceiver receiver({200});
  EXPECT_EQ(
      PostJson(receiver.url(), "{}", {{"X-A", "1\r\nX-B: 2"}}, absl::Seconds(1))
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PostJson(receiver.url(), "{}", {{"X A", "1"}}, absl::Seconds(1))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(receiver.requests().empty());
}

TEST(PostJsonTest, HttpsWithTrustedCertificate) {
  const TestCert cert = MakeSelfSignedCert();
  TestReceiver receiver({200}, cert);
  HttpPostOptions options;
  options.timeout = absl::Seconds(5);
  options.ca_pem = cert.cert_pem;
  const absl::StatusOr<int> code =
      PostJson(receiver.url(), R"({"tls":true})", {}, options);
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 200);
  ASSERT_EQ(receiver.requests().size(), 1u);
  EXPECT_EQ(receiver.requests()[0].body, R"({"tls":true})");
}

TEST(PostJsonTest, HttpsRejectsUntrustedCertificate) {
  TestReceiver receiver({200}, MakeSelfSignedCert());
  // The system store does not hold the receiver's self-signed certificate.
  const absl::StatusOr<int> code =
      PostJson(receiver.url(), "{}", {}, absl::Seconds(5));
  EXPECT_EQ(code.status().code(), absl::StatusCode::kUnavailable)
      << code.status();
  EXPECT_TRUE(absl::StrContains(code.status().message(), "TLS handshake"))
      << code.status();
  EXPECT_TRUE(receiver.requests().empty());
}

TEST(PostJsonTest, HttpsRejectsCertificateForAnotherHost) {
  const TestCert cert =
      MakeSelfSignedCert("localhost", /*with_loopback_ip=*/false);
  TestReceiver receiver({200}, cert);
  HttpPostOptions options;
  options.ca_pem = cert.cert_pem;  // trusted, but not issued for 127.0.0.1
  const absl::StatusOr<int> code = PostJson(receiver.url(), "{}", {}, options);
  EXPECT_EQ(code.status().code(), absl::StatusCode::kUnavailable)
      << code.status();
  EXPECT_TRUE(receiver.requests().empty());
}

TEST(PostJsonTest, HttpsToAPlainHttpServerFails) {
  TestReceiver receiver({200});
  std::string url = receiver.url();
  url.replace(0, 4, "https");
  const absl::StatusOr<int> code = PostJson(url, "{}", {}, absl::Seconds(5));
  EXPECT_EQ(code.status().code(), absl::StatusCode::kUnavailable)
      << code.status();
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(HttpDownloadTest, StreamsTheBodyIntoAFile) {
  testing::TempDir dir;
  TestReceiver receiver({200});
  std::string body;
  for (int i = 0; i < 200'000; ++i) absl::StrAppend(&body, i, ",", i % 7, "\n");
  receiver.set_body(body);
  const std::string path = (dir.path() / "in.csv").string();
  HttpPostOptions options;
  options.timeout = absl::Seconds(5);
  const absl::StatusOr<uint64_t> bytes =
      HttpDownload(receiver.url("/data/in.csv?sig=secret"), path, options);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, body.size());
  EXPECT_EQ(ReadAll(path), body);
  ASSERT_EQ(receiver.requests().size(), 1u);
  EXPECT_EQ(receiver.requests()[0].method, "GET");
  EXPECT_EQ(receiver.requests()[0].target, "/data/in.csv?sig=secret");
  // A download that is told to stop stops (between reads of the body).
  int asked = 0;
  options.cancelled = [&asked] { return ++asked > 1; };
  const absl::Status stopped =
      HttpDownload(receiver.url("/data/in.csv"), path, options).status();
  EXPECT_EQ(stopped.code(), absl::StatusCode::kCancelled) << stopped;
  EXPECT_GE(asked, 2);
}

TEST(HttpDownloadTest, OverHttpsWithATrustedCertificate) {
  testing::TempDir dir;
  const TestCert cert = MakeSelfSignedCert();
  TestReceiver receiver({200}, cert);
  receiver.set_body("id,x\n1,2\n");
  HttpPostOptions options;
  options.timeout = absl::Seconds(5);
  options.ca_pem = cert.cert_pem;
  const std::string path = (dir.path() / "in.csv").string();
  const absl::StatusOr<uint64_t> bytes =
      HttpDownload(receiver.url("/in.csv"), path, options);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(ReadAll(path), "id,x\n1,2\n");
  // Untrusted: refused before any byte is written.
  options.ca_pem.clear();
  const std::string other = (dir.path() / "other.csv").string();
  EXPECT_EQ(
      HttpDownload(receiver.url("/in.csv"), other, options).status().code(),
      absl::StatusCode::kUnavailable);
  EXPECT_FALSE(std::filesystem::exists(other));
}

TEST(HttpDownloadTest, StatusesAndPathsAreErrorsNamingThem) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "in.csv").string();
  HttpPostOptions options;
  options.timeout = absl::Seconds(5);
  {
    TestReceiver receiver({404});
    const absl::Status s =
        HttpDownload(receiver.url("/gone.csv?token=t"), path, options).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(absl::StrContains(s.message(), "HTTP 404")) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "/gone.csv?...")) << s;
    EXPECT_FALSE(absl::StrContains(s.message(), "token")) << s;
    EXPECT_FALSE(std::filesystem::exists(path));
  }
  {
    TestReceiver receiver({503});
    const absl::Status s =
        HttpDownload(receiver.url("/busy.csv"), path, options).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  }
  {
    TestReceiver receiver({200});
    const absl::Status s =
        HttpDownload(receiver.url("/x.csv"),
                     (dir.path() / "no" / "dir" / "x.csv").string(), options)
            .status();
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "no/dir/x.csv")) << s;
  }
}

TEST(HttpUploadTest, StreamsAFileBetweenAPrefixAndASuffix) {
  testing::TempDir dir;
  TestReceiver receiver({201});
  receiver.set_body("{\"id\": \"file-1\"}");
  std::string data;  // several of the client's 1 MiB pieces
  for (int i = 0; i < 400'000; ++i) absl::StrAppend(&data, i, ",", i % 7, "\n");
  ASSERT_GT(data.size(), 2u << 20);
  const std::string path = (dir.path() / "in.csv").string();
  {
    std::ofstream out(path, std::ios::binary);
    out << data;
  }
  HttpBodyFile body{"--b\r\nheaders\r\n\r\n", path, "\r\n--b--\r\n"};
  HttpPostOptions options;
  options.timeout = absl::Seconds(5);
  const absl::StatusOr<HttpReply> reply =
      HttpUpload("POST", receiver.url("/v1/files"), body,
                 "multipart/form-data; boundary=b", options);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->status, 201);
  EXPECT_EQ(reply->body, "{\"id\": \"file-1\"}");
  const std::vector<ReceivedRequest> got = receiver.requests();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].method, "POST");
  EXPECT_EQ(got[0].target, "/v1/files");
  EXPECT_EQ(got[0].headers.at("content-type"),
            "multipart/form-data; boundary=b");
  EXPECT_EQ(
      got[0].headers.at("content-length"),
      std::to_string(body.prefix.size() + data.size() + body.suffix.size()));
  EXPECT_EQ(got[0].body, body.prefix + data + body.suffix);

  // A file that is not there: NOT_FOUND naming it, nothing sent.
  body.path = (dir.path() / "missing.csv").string();
  const absl::Status missing =
      HttpUpload("POST", receiver.url("/v1/files"), body, "text/csv", options)
          .status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound) << missing;
  EXPECT_TRUE(absl::StrContains(missing.message(), "missing.csv")) << missing;
  EXPECT_EQ(receiver.requests().size(), 1u);
}

}  // namespace
}  // namespace ferry
