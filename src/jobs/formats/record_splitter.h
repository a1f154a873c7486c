// SPDX-License-Identifier: Apache-2.0
// RecordSplitter: cuts a byte range of an input file into records, the one
// piece both ScanInput (validation pass) and RecordReader (chunk workers) run,
// so that the two can never disagree about where a record ends.
//
// Reads in 1 MiB blocks with read(); memory is one block plus the longest
// record. A CSV record ends at a newline outside quotes (RFC 4180: a quote
// opens a quoted field only as a field's first byte; "" inside is a quote); a
// JSONL record ends at any newline. Line terminators (LF or CRLF) are not part
// of the text. Blank lines (only spaces, tabs, CR) are skipped but counted. A
// UTF-8 byte-order mark at offset 0 is skipped.
//
// Internal to jobs/formats. One owner thread.
#ifndef FERRY_JOBS_FORMATS_RECORD_SPLITTER_H_
#define FERRY_JOBS_FORMATS_RECORD_SPLITTER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jobs/formats/record_format.h"

namespace ferry::internal {

struct SplitRecord {
  absl::string_view text;    // valid until the next Next()
  int64_t begin_offset = 0;  // file offset of the first byte
  int64_t end_offset = 0;    // file offset just past the line terminator
  int64_t line = 1;          // physical line where the record starts
};

class RecordSplitter {
 public:
  static constexpr size_t kBlockBytes = size_t{1} << 20;
  // The longest record read (the buffer doubles up to this).
  static constexpr size_t kMaxRecordBytes = size_t{256} << 20;

  // Splits [begin, end) of `path`; end < 0 means to the end of the file.
  // `first_line` is the physical line number at `begin`. NOT_FOUND for a
  // missing file, INVALID_ARGUMENT for one that cannot be opened.
  static absl::StatusOr<std::unique_ptr<RecordSplitter>> Open(
      const std::string& path, RecordFormat format, int64_t begin, int64_t end,
      int64_t first_line);
  ~RecordSplitter();
  RecordSplitter(const RecordSplitter&) = delete;
  RecordSplitter& operator=(const RecordSplitter&) = delete;

  // The next non-blank record; false at the end of the range. INVALID_ARGUMENT
  // for a quote still open at the end, naming the record's line; I/O errors
  // are INVALID_ARGUMENT too (the file is unreadable).
  absl::StatusOr<bool> Next(SplitRecord* record);

  // Bytes the buffer holds now (for tests of bounded memory).
  size_t buffer_capacity() const { return capacity_; }

 private:
  RecordSplitter(std::string path, int fd, RecordFormat format, int64_t begin,
                 int64_t end, int64_t first_line);
  // Keeps the unconsumed bytes, reads the next block after them (growing the
  // buffer when one record fills it). Sets eof_ when the range is exhausted.
  absl::Status Fill();

  std::string path_;
  int fd_;
  RecordFormat format_;
  std::unique_ptr<char[]> buffer_;
  size_t capacity_ = 0;
  size_t pos_ = 0;         // first unconsumed byte
  size_t len_ = 0;         // bytes of buffer_ holding data
  int64_t buffer_offset_;  // file offset of buffer_[0]
  int64_t remaining_;      // bytes of the range not yet read; < 0: to EOF
  bool eof_ = false;
  int64_t line_;
};

}  // namespace ferry::internal

#endif  // FERRY_JOBS_FORMATS_RECORD_SPLITTER_H_
