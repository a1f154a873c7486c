// SPDX-License-Identifier: Apache-2.0
// ScanInput and RecordReader: record boundaries, line numbers, chunks that
// cover every record exactly once, and the scan's errors.
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jobs/formats/record_format.h"
#include "jobs/formats/record_splitter.h"
#include "test_util/temp_dir.h"

namespace ferry {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Rec {
  int64_t number;
  int64_t line;
  std::string text;
  bool operator==(const Rec&) const = default;
};

void PrintTo(const Rec& r, std::ostream* os) {
  *os << "{" << r.number << ", line " << r.line << ", \"" << r.text << "\"}";
}

// Every record of every chunk, in chunk order; checks each chunk's own
// bookkeeping on the way.
std::vector<Rec> ReadAllChunks(const std::string& path, const InputScan& scan) {
  std::vector<Rec> all;
  for (const ChunkSpan& span : scan.chunks) {
    auto reader = RecordReader::Open(path, scan.format, span);
    EXPECT_TRUE(reader.ok()) << reader.status();
    if (!reader.ok()) return all;
    int64_t n = 0;
    for (;;) {
      auto next = (*reader)->Next();
      EXPECT_TRUE(next.ok()) << next.status();
      if (!next.ok() || !next->has_value()) break;
      const RawRecord& raw = **next;
      if (n == 0) {
        EXPECT_EQ(raw.number, span.first_record);
        EXPECT_EQ(raw.line, span.first_line);
      }
      all.push_back({raw.number, raw.line, raw.text});
      ++n;
    }
    EXPECT_EQ(n, span.record_count);
  }
  return all;
}

// A plain reference splitter (byte at a time) to check the memchr-driven one
// against.
std::vector<Rec> ReferenceRecords(const std::string& data, bool csv,
                                  bool skip_header) {
  std::vector<Rec> out;
  size_t i = data.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  const size_t n = data.size();
  int64_t line = 1;
  bool header_pending = csv && skip_header;
  while (i < n) {
    const size_t start = i;
    const int64_t start_line = line;
    bool in_quotes = false;
    bool field_start = true;
    while (i < n) {
      const char c = data[i];
      if (in_quotes) {
        if (c == '"') {
          if (i + 1 < n && data[i + 1] == '"') {
            i += 2;
            continue;
          }
          in_quotes = false;
          field_start = false;
        } else if (c == '\n') {
          ++line;
        }
        ++i;
        continue;
      }
      if (c == '\n') break;
      if (csv && c == '"' && field_start) {
        in_quotes = true;
      } else {
        field_start = c == ',';
      }
      ++i;
    }
    std::string text = data.substr(start, i - start);
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (i < n) {
      ++i;
      ++line;
    }
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (header_pending) {
      header_pending = false;
      continue;
    }
    out.push_back({static_cast<int64_t>(out.size()), start_line, text});
  }
  return out;
}

class RecordScanTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& contents) {
    const auto path = dir_.path() / name;
    testing::WriteFile(path, contents);
    return path.string();
  }

  // Scans with every chunk size from 1 to records + 1 and checks that the
  // chunks read back as `expected`.
  void ExpectChunksExact(const std::string& path, RecordFormat format,
                         const std::vector<Rec>& expected) {
    for (int64_t size = 1; size <= static_cast<int64_t>(expected.size()) + 1;
         ++size) {
      SCOPED_TRACE(absl::StrCat("chunk_records ", size));
      auto scan = ScanInput(path, format, size);
      ASSERT_TRUE(scan.ok()) << scan.status();
      EXPECT_EQ(scan->records, static_cast<int64_t>(expected.size()));
      const int64_t chunks =
          (static_cast<int64_t>(expected.size()) + size - 1) / size;
      EXPECT_EQ(static_cast<int64_t>(scan->chunks.size()), chunks);
      for (const ChunkSpan& span : scan->chunks) {
        EXPECT_LE(span.record_count, size);
        EXPECT_LT(span.begin_offset, span.end_offset);
      }
      EXPECT_EQ(ReadAllChunks(path, *scan), expected);
    }
  }

  testing::TempDir dir_;
};

TEST_F(RecordScanTest, CsvHeaderRecordsAndChunks) {
  const std::string path = Write("in.csv", "id,a,b\n1,2,3\n4,5,6\n7,8,9\n");
  auto scan = ScanInput(path, RecordFormat::kCsv, 2);
  ASSERT_TRUE(scan.ok()) << scan.status();
  EXPECT_EQ(scan->format, RecordFormat::kCsv);
  EXPECT_THAT(scan->header, ElementsAre("id", "a", "b"));
  EXPECT_EQ(scan->records, 3);
  ASSERT_EQ(scan->chunks.size(), 2u);
  EXPECT_EQ(scan->chunks[0].begin_offset, 7);
  EXPECT_EQ(scan->chunks[0].end_offset, 19);
  EXPECT_EQ(scan->chunks[0].first_line, 2);
  EXPECT_EQ(scan->chunks[1].begin_offset, 19);
  EXPECT_EQ(scan->chunks[1].end_offset, 25);
  EXPECT_EQ(scan->chunks[1].first_record, 2);
  EXPECT_EQ(scan->chunks[1].first_line, 4);
  EXPECT_EQ(scan->chunks[1].record_count, 1);
  EXPECT_EQ(
      ReadAllChunks(path, *scan),
      (std::vector<Rec>{{0, 2, "1,2,3"}, {1, 3, "4,5,6"}, {2, 4, "7,8,9"}}));
}

TEST_F(RecordScanTest, ChunksCloseAtTheByteCapToo) {
  // Each record is 6 bytes with its newline; a 12-byte cap makes chunks of 2
  // even though 100 records would be allowed.
  const std::string path =
      Write("bytes.csv", "id,a,b\n1,2,3\n4,5,6\n7,8,9\n1,1,1\n2,2,2\n");
  auto scan = ScanInput(path, RecordFormat::kCsv, 100, /*chunk_bytes=*/12);
  ASSERT_TRUE(scan.ok()) << scan.status();
  ASSERT_EQ(scan->chunks.size(), 3u);
  EXPECT_EQ(scan->chunks[0].record_count, 2);
  EXPECT_EQ(scan->chunks[1].record_count, 2);
  EXPECT_EQ(scan->chunks[2].record_count, 1);
  EXPECT_EQ(ReadAllChunks(path, *scan).size(), 5u);
  auto uncapped = ScanInput(path, RecordFormat::kCsv, 100, 0);
  ASSERT_TRUE(uncapped.ok());
  EXPECT_EQ(uncapped->chunks.size(), 1u);
}

TEST_F(RecordScanTest, QuotedNewlinesCrlfBomBlankLinesAndNoFinalNewline) {
  const std::string data =
      "\xEF\xBB\xBF"
      "id,\"na,me\",\"x\"\"y\"\r\n"       // line 1: header
      "1,\"two\nlines\",3\r\n"            // lines 2-3
      "\r\n"                              // line 4: blank
      "   \n"                             // line 5: blank
      "2,\"a \"\"quoted\"\" ,word\",4\n"  // line 6
      "3,\"\r\n\r\n\",5\r\n"              // lines 7-9, CRLFs inside quotes
      "\n"                                // line 10: blank
      "4,plain,6";                        // line 11, no newline
  const std::string path = Write("in.csv", data);
  const std::vector<Rec> expected = {
      {0, 2, "1,\"two\nlines\",3"},
      {1, 6, "2,\"a \"\"quoted\"\" ,word\",4"},
      {2, 7, "3,\"\r\n\r\n\",5"},
      {3, 11, "4,plain,6"},
  };
  EXPECT_EQ(ReferenceRecords(data, true, true), expected);
  auto scan = ScanInput(path, RecordFormat::kCsv, 100);
  ASSERT_TRUE(scan.ok()) << scan.status();
  EXPECT_THAT(scan->header, ElementsAre("id", "na,me", "x\"y"));
  ExpectChunksExact(path, RecordFormat::kCsv, expected);
}

TEST_F(RecordScanTest, QuoteInsideAnUnquotedFieldIsData) {
  // As in SplitCsvFields and Python's csv: only a field's first byte opens a
  // quote, so this row does not swallow the next line.
  const std::string data = "a,b\n5\",x\"y\n6,7\n";
  const std::string path = Write("in.csv", data);
  ExpectChunksExact(path, RecordFormat::kCsv,
                    {{0, 2, "5\",x\"y"}, {1, 3, "6,7"}});
}

TEST_F(RecordScanTest, JsonlOneRecordPerNonBlankLine) {
  const std::string data =
      "\xEF\xBB\xBF{\"custom_id\":\"a\"}\n\n{\"custom_id\":\"b,\\\"\"}\r\n  \n"
      "{\"custom_id\":\"c\"}";
  const std::string path = Write("in.jsonl", data);
  auto scan = ScanInput(path, RecordFormat::kJsonl, 10);
  ASSERT_TRUE(scan.ok()) << scan.status();
  EXPECT_TRUE(scan->header.empty());
  EXPECT_EQ(scan->records, 3);
  ExpectChunksExact(path, RecordFormat::kJsonl,
                    {{0, 1, "{\"custom_id\":\"a\"}"},
                     {1, 3, "{\"custom_id\":\"b,\\\"\"}"},
                     {2, 5, "{\"custom_id\":\"c\"}"}});
}

TEST_F(RecordScanTest, JsonlQuotesDoNotSpanLines) {
  // A JSON string cannot hold a raw newline, so a quote never joins lines.
  const std::string path = Write("in.jsonl", "\"open\n{}\n");
  ExpectChunksExact(path, RecordFormat::kJsonl,
                    {{0, 1, "\"open"}, {1, 2, "{}"}});
}

TEST_F(RecordScanTest, HeaderOnlyCsvHasNoRecordsAndNoChunks) {
  const std::string path = Write("in.csv", "\n\nid,a\n\n");
  auto scan = ScanInput(path, RecordFormat::kCsv, 10);
  ASSERT_TRUE(scan.ok()) << scan.status();
  EXPECT_THAT(scan->header, ElementsAre("id", "a"));
  EXPECT_EQ(scan->records, 0);
  EXPECT_TRUE(scan->chunks.empty());
}

TEST_F(RecordScanTest, HeaderNamesAreTrimmed) {
  const std::string path = Write("in.csv", "id , a,\tb\n1,2,3\n");
  auto scan = ScanInput(path, RecordFormat::kCsv, 10);
  ASSERT_TRUE(scan.ok()) << scan.status();
  EXPECT_THAT(scan->header, ElementsAre("id", "a", "b"));
}

TEST_F(RecordScanTest, Errors) {
  auto missing =
      ScanInput((dir_.path() / "nope.csv").string(), RecordFormat::kCsv, 10);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("nope.csv"));

  auto directory = ScanInput(dir_.path().string(), RecordFormat::kCsv, 10);
  EXPECT_EQ(directory.status().code(), absl::StatusCode::kInvalidArgument);

  for (const std::string contents : {"", "\n \r\n\n", "\xEF\xBB\xBF"}) {
    auto empty =
        ScanInput(Write("empty.csv", contents), RecordFormat::kCsv, 10);
    EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(empty.status().message(), HasSubstr("header"));
  }
  auto empty_jsonl =
      ScanInput(Write("empty.jsonl", ""), RecordFormat::kJsonl, 1);
  ASSERT_TRUE(empty_jsonl.ok()) << empty_jsonl.status();
  EXPECT_EQ(empty_jsonl->records, 0);

  auto duplicate =
      ScanInput(Write("dup.csv", "a,b,a\n1,2,3\n"), RecordFormat::kCsv, 10);
  EXPECT_EQ(duplicate.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(duplicate.status().message(),
              HasSubstr("column 'a' appears twice (columns 1 and 3)"));

  auto unnamed =
      ScanInput(Write("unnamed.csv", "a,,c\n1,2,3\n"), RecordFormat::kCsv, 10);
  EXPECT_EQ(unnamed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unnamed.status().message(),
              HasSubstr("column 2 has an empty name"));

  auto unterminated =
      ScanInput(Write("open.csv", "a,b\n1,2\n\n3,\"never\nclosed\n4,5\n"),
                RecordFormat::kCsv, 10);
  EXPECT_EQ(unterminated.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unterminated.status().message(), HasSubstr("line 4:"));
  EXPECT_THAT(unterminated.status().message(), HasSubstr("unterminated quote"));

  auto zero = ScanInput(Write("ok.csv", "a\n1\n"), RecordFormat::kCsv, 0);
  EXPECT_EQ(zero.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(zero.status().message(), HasSubstr("got 0"));

  auto reader = RecordReader::Open((dir_.path() / "nope.csv").string(),
                                   RecordFormat::kCsv, ChunkSpan{});
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kNotFound);
}

// A random CSV with everything that moves a record boundary: quoted commas,
// quotes, LF and CRLF inside quotes, CRLF and LF terminators, blank lines,
// records longer than the 1 MiB read block, and no newline at the end.
std::string RandomCsv(std::mt19937* rng, int records, bool huge) {
  auto pick = [&](int n) {
    return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(*rng));
  };
  std::string data = "id,text,value\n";
  for (int r = 0; r < records; ++r) {
    if (pick(8) == 0) data += pick(2) ? "\n" : "  \r\n";
    absl::StrAppend(&data, r, ",");
    switch (pick(5)) {
      case 0:
        data += "\"q,\"\"u\"\"\nline\r\nx\"";
        break;
      case 1:
        data += "plain";
        break;
      case 2:
        data += "\"\"";
        break;
      case 3: {
        const int len =
            huge && pick(12) == 0 ? 300000 + pick(1500000) : pick(400);
        data += '"';
        for (int i = 0; i < len; ++i) {
          const int c = pick(30);
          data += c == 0   ? '\n'
                  : c == 1 ? ','
                           : static_cast<char>('a' + c % 26);
        }
        data += '"';
        break;
      }
      default:
        data += "mid\"quote";
        break;
    }
    absl::StrAppend(&data, ",", pick(1000));
    if (r + 1 < records || pick(2) == 0) data += pick(2) ? "\n" : "\r\n";
  }
  return data;
}

TEST_F(RecordScanTest, RandomFilesMatchTheReferenceSplitter) {
  std::mt19937 rng(20240531);
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    const std::string data = RandomCsv(&rng, 1 + round * 3, false);
    const std::string path = Write("random.csv", data);
    ExpectChunksExact(path, RecordFormat::kCsv,
                      ReferenceRecords(data, true, true));
  }
}

TEST_F(RecordScanTest, RecordsAcrossReadBlocksAndLongerThanABlock) {
  std::mt19937 rng(7);
  std::string data = RandomCsv(&rng, 400, true);
  // One record of 2.5 MiB that has to grow the buffer twice.
  absl::StrAppend(&data, "\n999,\"", std::string(5 << 19, 'z'), "\n\",1\n");
  ASSERT_GT(data.size(), 3 * internal::RecordSplitter::kBlockBytes);
  const std::string path = Write("big.csv", data);
  const std::vector<Rec> expected = ReferenceRecords(data, true, true);
  for (int64_t size : {1, 7, 64, 100000}) {
    SCOPED_TRACE(absl::StrCat("chunk_records ", size));
    auto scan = ScanInput(path, RecordFormat::kCsv, size);
    ASSERT_TRUE(scan.ok()) << scan.status();
    EXPECT_EQ(scan->records, static_cast<int64_t>(expected.size()));
    EXPECT_TRUE(ReadAllChunks(path, *scan) == expected);
  }
}

}  // namespace
}  // namespace ferry
