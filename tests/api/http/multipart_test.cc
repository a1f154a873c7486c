// SPDX-License-Identifier: Apache-2.0
#include "api/http/multipart.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ferry {
namespace {

using ::testing::HasSubstr;

std::string Body(const std::string& boundary, const std::string& file_data) {
  return "preamble to ignore\r\n--" + boundary +
         "\r\n"
         "Content-Disposition: form-data; name=\"purpose\"\r\n"
         "\r\n"
         "batch\r\n"
         "--" +
         boundary +
         "\r\n"
         "Content-Disposition: form-data; name=\"file\"; "
         "filename=\"in put.jsonl\"\r\n"
         "Content-Type: application/jsonl\r\n"
         "\r\n" +
         file_data + "\r\n--" + boundary + "--\r\nepilogue";
}

TEST(MultipartBoundaryTest, ReadsPlainAndQuotedBoundaries) {
  EXPECT_EQ(*MultipartBoundary("multipart/form-data; boundary=abc123"),
            "abc123");
  EXPECT_EQ(*MultipartBoundary(
                "Multipart/Form-Data; charset=utf-8; BOUNDARY=\"a b:c\""),
            "a b:c");
}

TEST(MultipartBoundaryTest, RefusesOtherTypesAndMissingBoundaries) {
  auto s = MultipartBoundary("application/json");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()),
              HasSubstr("must be multipart/form-data"));
  s = MultipartBoundary("multipart/form-data");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("no boundary"));
  s = MultipartBoundary("multipart/form-data; boundary=" +
                        std::string(71, 'x'));
  EXPECT_FALSE(s.ok());
  s = MultipartBoundary("multipart/form-data; boundary=\"open");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("open quote"));
}

TEST(MultipartTest, ParsesFieldsAndFileWithoutCopyingTheData) {
  const std::string data = "{\"a\":1}\n{\"b\":2}\n";
  const std::string body = Body("XyZ", data);
  auto parts = ParseMultipartFormData(body, "XyZ");
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].name, "purpose");
  EXPECT_EQ((*parts)[0].data, "batch");
  EXPECT_FALSE((*parts)[0].filename.has_value());
  EXPECT_EQ((*parts)[1].name, "file");
  EXPECT_EQ((*parts)[1].filename, "in put.jsonl");
  EXPECT_EQ((*parts)[1].content_type, "application/jsonl");
  EXPECT_EQ((*parts)[1].data, data);
  // A view into the body.
  EXPECT_GE((*parts)[1].data.data(), body.data());
  EXPECT_LT((*parts)[1].data.data(), body.data() + body.size());
}

TEST(MultipartTest, KeepsBinaryDataWithCrLfAndBoundaryLookalikes) {
  std::string data("a\r\nb\0c\r\n--XyZa\r\n-XyZ\r\n", 20);
  data.push_back('\r');  // a trailing CR that belongs to the data
  auto parts = ParseMultipartFormData(Body("XyZ-", data), "XyZ-");
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ((*parts)[1].data, data);
}

TEST(MultipartTest, AcceptsBareLfAndEmptyParts) {
  const std::string body =
      "--b\nContent-Disposition: form-data; name=\"purpose\"\n\n\n"
      "--b\ncontent-disposition: form-data; name=file; filename=x\n\nxy\n"
      "--b--";
  auto parts = ParseMultipartFormData(body, "b");
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].data, "");
  EXPECT_EQ((*parts)[1].data, "xy");
  EXPECT_EQ((*parts)[1].filename, "x");
}

TEST(MultipartTest, DecodesExtendedFilenames) {
  const std::string body =
      "--b\r\nContent-Disposition: form-data; name=file; filename=\"plain\"; "
      "filename*=UTF-8''caf%C3%A9.jsonl\r\n\r\nx\r\n--b--\r\n";
  auto parts = ParseMultipartFormData(body, "b");
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ((*parts)[0].filename, "caf\xC3\xA9.jsonl");
}

struct BadCase {
  const char* name;
  std::string body;
  const char* message;
};

TEST(MultipartTest, MalformedBodiesNameThePartAndTheProblem) {
  const BadCase cases[] = {
      {"wrong boundary", "--other\r\n\r\n", "boundary of the Content-Type"},
      {"truncated",
       "--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nabc",
       "part 1 ('file') does not end with the boundary"},
      {"no disposition", "--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--",
       "part 1 has no Content-Disposition"},
      {"no name", "--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--",
       "Content-Disposition has no name"},
      {"not form-data",
       "--b\r\nContent-Disposition: attachment; name=x\r\n\r\nx\r\n--b--",
       "not form-data"},
      {"headers never end", "--b\r\nContent-Disposition: form-data; name=x\r\n",
       "headers do not end"},
      {"header without colon", "--b\r\nnonsense\r\n\r\nx\r\n--b--",
       "has no ':'"},
      {"duplicate",
       "--b\r\nContent-Disposition: form-data; name=a\r\n\r\n1\r\n"
       "--b\r\nContent-Disposition: form-data; name=a\r\n\r\n2\r\n--b--",
       "field 'a' appears twice"},
      {"no parts", "--b--\r\n", "no parts"},
      {"text after boundary", "--bx\r\n", "not followed by a line break"},
      {"transfer encoding",
       "--b\r\nContent-Disposition: form-data; name=a\r\n"
       "Content-Transfer-Encoding: base64\r\n\r\nx\r\n--b--",
       "base64"},
      {"empty body", "", "no '--b' line"},
  };
  for (const BadCase& c : cases) {
    auto parts = ParseMultipartFormData(c.body, "b");
    ASSERT_FALSE(parts.ok()) << c.name;
    EXPECT_EQ(parts.status().code(), absl::StatusCode::kInvalidArgument)
        << c.name;
    EXPECT_THAT(std::string(parts.status().message()), HasSubstr(c.message))
        << c.name << ": " << parts.status();
  }
}

}  // namespace
}  // namespace ferry
