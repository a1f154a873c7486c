// SPDX-License-Identifier: Apache-2.0
#include "jobs/formats/record_splitter.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace ferry::internal {
namespace {

// Where the record starting at the front of a buffer ends.
struct RecordEnd {
  enum Kind { kFound, kNeedMore, kUnterminatedQuote };
  Kind kind = kNeedMore;
  const char* text_end = nullptr;  // end of the text (terminator excluded)
  const char* next = nullptr;      // first byte after the terminator
  int64_t inner_newlines = 0;      // newlines inside quoted fields
};

RecordEnd Found(const char* newline, const char* begin, int64_t inner) {
  RecordEnd r;
  r.kind = RecordEnd::kFound;
  r.next = newline + 1;
  r.text_end = (newline > begin && newline[-1] == '\r') ? newline - 1 : newline;
  r.inner_newlines = inner;
  return r;
}

// The record runs to the end of the data (a last line without a newline).
RecordEnd FoundAtEnd(const char* begin, const char* end, int64_t inner) {
  RecordEnd r;
  r.kind = RecordEnd::kFound;
  r.next = end;
  r.text_end = (end > begin && end[-1] == '\r') ? end - 1 : end;
  r.inner_newlines = inner;
  return r;
}

RecordEnd NeedMore(bool at_eof) {
  RecordEnd r;
  // At the end of the data, more can never come: the quote stays open.
  r.kind = at_eof ? RecordEnd::kUnterminatedQuote : RecordEnd::kNeedMore;
  return r;
}

RecordEnd FindLineEnd(const char* begin, const char* end, bool at_eof) {
  const void* nl = std::memchr(begin, '\n', end - begin);
  if (nl != nullptr) return Found(static_cast<const char*>(nl), begin, 0);
  if (at_eof) return FoundAtEnd(begin, end, 0);
  return RecordEnd{};
}

// memchr-driven: rows without quotes cost two memchr calls. A quote opens a
// quoted field only as the field's first byte, exactly as SplitCsvFields reads
// it, so that the two agree on malformed rows too.
RecordEnd FindCsvEnd(const char* begin, const char* end, bool at_eof) {
  int64_t inner = 0;
  const char* cur = begin;
  const char* nl = nullptr;  // the first newline at or after cur, if known
  for (;;) {
    if (nl == nullptr || nl < cur) {
      nl = static_cast<const char*>(std::memchr(cur, '\n', end - cur));
    }
    const char* stop = nl != nullptr ? nl : end;
    const char* q = static_cast<const char*>(std::memchr(cur, '"', stop - cur));
    if (q == nullptr) {
      if (nl != nullptr) return Found(nl, begin, inner);
      if (at_eof) return FoundAtEnd(begin, end, inner);
      return RecordEnd{};
    }
    if (q != begin && q[-1] != ',') {  // a quote inside an unquoted field
      cur = q + 1;
      continue;
    }
    const char* c = q + 1;
    for (;;) {
      const char* close =
          static_cast<const char*>(std::memchr(c, '"', end - c));
      if (close == nullptr) return NeedMore(at_eof);
      inner += std::count(c, close, '\n');
      if (close + 1 == end) {
        // Is it a closing quote or the first half of ""? Only the next byte
        // tells.
        if (at_eof) return FoundAtEnd(begin, end, inner);
        return RecordEnd{};
      }
      if (close[1] == '"') {
        c = close + 2;
        continue;
      }
      cur = close + 1;
      break;
    }
  }
}

bool IsBlank(absl::string_view text) {
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\r') return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<RecordSplitter>> RecordSplitter::Open(
    const std::string& path, RecordFormat format, int64_t begin, int64_t end,
    int64_t first_line) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      return absl::NotFoundError(
          absl::StrCat("input file '", path, "' does not exist"));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot open input file '", path, "': ", std::strerror(err)));
  }
  // Readahead for one front-to-back pass; a hint, so its failure is ignored.
  (void)::posix_fadvise(fd, begin, end < 0 ? 0 : end - begin,
                        POSIX_FADV_SEQUENTIAL);
  std::unique_ptr<RecordSplitter> splitter(
      new RecordSplitter(path, fd, format, begin, end, first_line));
  RETURN_IF_ERROR(splitter->Fill());
  if (begin == 0 && splitter->len_ >= 3 &&
      std::memcmp(splitter->buffer_.get(), "\xEF\xBB\xBF", 3) == 0) {
    splitter->pos_ = 3;
  }
  return splitter;
}

RecordSplitter::RecordSplitter(std::string path, int fd, RecordFormat format,
                               int64_t begin, int64_t end, int64_t first_line)
    : path_(std::move(path)),
      fd_(fd),
      format_(format),
      buffer_(new char[kBlockBytes]),
      capacity_(kBlockBytes),
      buffer_offset_(begin),
      remaining_(end < 0 ? -1 : std::max<int64_t>(0, end - begin)),
      line_(first_line) {}

RecordSplitter::~RecordSplitter() { ::close(fd_); }

absl::Status RecordSplitter::Fill() {
  if (pos_ > 0) {
    std::memmove(buffer_.get(), buffer_.get() + pos_, len_ - pos_);
    buffer_offset_ += static_cast<int64_t>(pos_);
    len_ -= pos_;
    pos_ = 0;
  }
  if (len_ == capacity_) {
    // One record fills the buffer: it is longer than a block. Grow, up to a
    // bound: an unterminated quote or a file without line breaks must not
    // pull the whole file into memory.
    if (capacity_ >= kMaxRecordBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input file '", path_, "': the record starting at byte ",
          buffer_offset_, " is longer than ", kMaxRecordBytes >> 20,
          " MiB (an unterminated quote, or no line breaks?)"));
    }
    std::unique_ptr<char[]> bigger(new char[capacity_ * 2]);
    std::memcpy(bigger.get(), buffer_.get(), len_);
    buffer_ = std::move(bigger);
    capacity_ *= 2;
  }
  size_t want = capacity_ - len_;
  if (remaining_ >= 0) want = std::min<size_t>(want, remaining_);
  if (want == 0) {
    eof_ = true;
    return absl::OkStatus();
  }
  ssize_t n;
  do {
    n = ::pread(fd_, buffer_.get() + len_, want,
                buffer_offset_ + static_cast<int64_t>(len_));
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot read input file '", path_, "': ", std::strerror(errno)));
  }
  if (n == 0) {
    eof_ = true;
    return absl::OkStatus();
  }
  len_ += static_cast<size_t>(n);
  if (remaining_ >= 0) {
    remaining_ -= n;
    if (remaining_ == 0) eof_ = true;
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> RecordSplitter::Next(SplitRecord* record) {
  for (;;) {
    if (pos_ == len_) {
      if (eof_) return false;
      RETURN_IF_ERROR(Fill());
      continue;
    }
    const char* begin = buffer_.get() + pos_;
    const char* end = buffer_.get() + len_;
    const RecordEnd found = format_ == RecordFormat::kCsv
                                ? FindCsvEnd(begin, end, eof_)
                                : FindLineEnd(begin, end, eof_);
    if (found.kind == RecordEnd::kNeedMore) {
      RETURN_IF_ERROR(Fill());
      continue;
    }
    if (found.kind == RecordEnd::kUnterminatedQuote) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line_,
                       ": quoted field is not closed before the end of the "
                       "input (unterminated quote)"));
    }
    record->text = absl::string_view(begin, found.text_end - begin);
    record->begin_offset = buffer_offset_ + static_cast<int64_t>(pos_);
    record->line = line_;
    pos_ = static_cast<size_t>(found.next - buffer_.get());
    record->end_offset = buffer_offset_ + static_cast<int64_t>(pos_);
    line_ += 1 + found.inner_newlines;
    if (IsBlank(record->text)) continue;
    return true;
  }
}

}  // namespace ferry::internal
