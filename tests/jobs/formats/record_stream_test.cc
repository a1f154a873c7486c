// SPDX-License-Identifier: Apache-2.0
// Large inputs: reading streams in bounded memory, and a speed printout (not
// an assertion; speed goals belong in bench/). Rows default to 200k so the
// test stays short; FERRY_FORMATS_BENCH_ROWS=1000000 gives the 1M-row figure.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "jobs/formats/record_format.h"
#include "jobs/formats/record_splitter.h"
#include "test_util/temp_dir.h"

namespace ferry {
namespace {

constexpr int kFeatures = 32;

// Sanitizers hold freed memory in quarantine (so RSS says nothing about the
// reader) and run many times slower.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

int64_t Rows() {
  const char* env = std::getenv("FERRY_FORMATS_BENCH_ROWS");
  if (env != nullptr) return std::atoll(env);
  return kSanitized ? 20000 : 200000;
}

// Resident set size in bytes, from /proc/self/statm.
int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0;
  int64_t resident = 0;
  statm >> pages >> resident;
  return resident * 4096;
}

// id,f0..f31 with values like 0.1234 (about 224 bytes a row).
std::string WriteFeatureCsv(const std::filesystem::path& path, int64_t rows) {
  std::ofstream out(path, std::ios::binary);
  std::string block = "id";
  for (int f = 0; f < kFeatures; ++f) absl::StrAppend(&block, ",f", f);
  block += '\n';
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> digits(0, 9999);  // 0.0000-0.9999
  for (int64_t r = 0; r < rows; ++r) {
    absl::StrAppend(&block, "r", r);
    for (int f = 0; f < kFeatures; ++f) {
      const int d = digits(rng);
      const char value[7] = {',',
                             '0',
                             '.',
                             static_cast<char>('0' + d / 1000),
                             static_cast<char>('0' + d / 100 % 10),
                             static_cast<char>('0' + d / 10 % 10),
                             static_cast<char>('0' + d % 10)};
      block.append(value, sizeof value);
    }
    block += '\n';
    if (block.size() > (1 << 20)) {
      out << block;
      block.clear();
    }
  }
  out << block;
  return path.string();
}

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// A file without line breaks (here a sparse one: no disk, all zero bytes)
// must not be pulled into memory whole: the record cap stops it with an error
// naming the file, the offset and the cap, and the scan refuses the file.
TEST(RecordStreamTest, ARecordLongerThanTheCapIsRefused) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "no-newlines.csv").string();
  { std::ofstream create(path); }
  std::filesystem::resize_file(
      path, internal::RecordSplitter::kMaxRecordBytes + (1 << 20));
  auto splitter =
      internal::RecordSplitter::Open(path, RecordFormat::kCsv, 0, -1, 1);
  ASSERT_TRUE(splitter.ok()) << splitter.status();
  internal::SplitRecord split;
  absl::StatusOr<bool> next = (*splitter)->Next(&split);
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(next.status().message().find("no-newlines.csv"),
            absl::string_view::npos);
  EXPECT_NE(next.status().message().find("starting at byte 0 is longer than "
                                         "256 MiB"),
            absl::string_view::npos)
      << next.status();
  EXPECT_LE((*splitter)->buffer_capacity(),
            internal::RecordSplitter::kMaxRecordBytes);
  auto scan = ScanInput(path, RecordFormat::kCsv, 10000);
  EXPECT_EQ(scan.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RecordStreamTest, LargeFileStreamsInBoundedMemory) {
  testing::TempDir dir;
  const int64_t rows = Rows();
  const std::string path = WriteFeatureCsv(dir.path() / "big.csv", rows);
  const int64_t file_bytes =
      static_cast<int64_t>(std::filesystem::file_size(path));

  const double scan_start = CpuSeconds();
  auto scan = ScanInput(path, RecordFormat::kCsv, 10000);
  const double scan_s = CpuSeconds() - scan_start;
  ASSERT_TRUE(scan.ok()) << scan.status();
  EXPECT_EQ(scan->records, rows);
  EXPECT_EQ(static_cast<int64_t>(scan->chunks.size()), (rows + 9999) / 10000);

  // The splitter never holds more than one block for rows this short.
  auto splitter =
      internal::RecordSplitter::Open(path, RecordFormat::kCsv, 0, -1, 1);
  ASSERT_TRUE(splitter.ok()) << splitter.status();
  internal::SplitRecord split;
  int64_t split_count = 0;
  while ((*splitter)->Next(&split).value()) ++split_count;
  EXPECT_EQ(split_count, rows + 1);  // and the header
  EXPECT_EQ((*splitter)->buffer_capacity(),
            internal::RecordSplitter::kBlockBytes);

  ModelOptions model;
  model.name = "m";
  model.max_batch_size = 64;
  model.inputs.emplace_back();
  model.inputs[0].name = "x";
  model.inputs[0].dims = {kFeatures};
  model.outputs.emplace_back();
  model.outputs[0].name = "y";
  model.outputs[0].dims = {1};
  CsvOptions csv;
  csv.id_column = "id";
  auto codec = RecordCodec::Create(RecordFormat::kCsv, model, *scan, csv);
  ASSERT_TRUE(codec.ok()) << codec.status();

  // One reader over the whole file, as if it were one chunk.
  ChunkSpan all = scan->chunks.front();
  all.end_offset = scan->chunks.back().end_offset;
  all.record_count = rows;
  auto reader = RecordReader::Open(path, RecordFormat::kCsv, all);
  ASSERT_TRUE(reader.ok()) << reader.status();
  const int64_t rss_before = ResidentBytes();
  int64_t rss_peak = rss_before;
  // Per batch of 64 rows, on this thread's CPU clock: the machine may be
  // shared, and reading the clock per row would cost more than a row.
  std::vector<RawRecord> raws;
  std::vector<ParsedRecord> batch;
  std::vector<const ParsedRecord*> pointers;
  int64_t read = 0;
  double read_s = 0;
  double parse_s = 0;
  double build_s = 0;
  for (bool done = false; !done;) {
    raws.clear();
    double t = CpuSeconds();
    while (raws.size() < 64) {
      auto next = (*reader)->Next();
      ASSERT_TRUE(next.ok()) << next.status();
      if (!next->has_value()) {
        done = true;
        break;
      }
      raws.push_back(std::move(**next));
    }
    read_s += CpuSeconds() - t;
    if (raws.empty()) break;
    read += static_cast<int64_t>(raws.size());
    batch.clear();
    t = CpuSeconds();
    for (RawRecord& raw : raws) {
      auto parsed = (*codec)->Parse(std::move(raw));
      ASSERT_TRUE(parsed.ok()) << parsed.status();
      batch.push_back(std::move(*parsed));
    }
    parse_s += CpuSeconds() - t;
    pointers.clear();
    for (const ParsedRecord& p : batch) pointers.push_back(&p);
    t = CpuSeconds();
    auto request = (*codec)->BuildRequest(pointers);
    build_s += CpuSeconds() - t;
    ASSERT_TRUE(request.ok()) << request.status();
    if (read % 6400 == 0) rss_peak = std::max(rss_peak, ResidentBytes());
  }
  EXPECT_EQ(read, rows);
  // Reading the whole file into memory would add its size.
  if (!kSanitized) {
    EXPECT_LT(rss_peak - rss_before, int64_t{16} << 20)
        << "file is " << file_bytes << " bytes";
  }

  const double n = static_cast<double>(rows);
  std::printf(
      "[ speed    ] %lld rows x %d floats, %.1f MB, CPU time: scan %.0f "
      "ns/row (%.0f MB/s); read %.0f, parse %.0f, build %.0f ns/row\n",
      static_cast<long long>(rows), kFeatures, file_bytes / 1e6,
      scan_s * 1e9 / n, file_bytes / 1e6 / scan_s, read_s * 1e9 / n,
      parse_s * 1e9 / n, build_s * 1e9 / n);
}

}  // namespace
}  // namespace ferry
