// SPDX-License-Identifier: Apache-2.0
#include "jobs/formats/csv_fields.h"

#include <cstring>

namespace ferry::internal {
namespace {

// The common row: no quotes at all, every field a view.
void SplitUnquoted(absl::string_view text, CsvFields* fields) {
  const char* p = text.data();
  const char* end = p + text.size();
  for (;;) {
    const char* comma = static_cast<const char*>(std::memchr(p, ',', end - p));
    if (comma == nullptr) {
      fields->emplace_back(p, end - p);
      return;
    }
    fields->emplace_back(p, comma - p);
    p = comma + 1;
  }
}

}  // namespace

absl::Status SplitCsvFields(absl::string_view text, std::string* storage,
                            CsvFields* fields) {
  fields->clear();
  if (text.find('"') == absl::string_view::npos) {
    SplitUnquoted(text, fields);
    return absl::OkStatus();
  }
  storage->clear();
  // Unescaped fields are never longer than the text, so views into *storage
  // stay valid: it never reallocates.
  storage->reserve(text.size());
  size_t i = 0;
  const size_t n = text.size();
  for (;;) {
    if (i < n && text[i] == '"') {
      const size_t start = storage->size();
      ++i;
      bool closed = false;
      while (i < n) {
        const char c = text[i];
        if (c == '"') {
          if (i + 1 < n && text[i + 1] == '"') {
            storage->push_back('"');
            i += 2;
            continue;
          }
          ++i;
          closed = true;
          break;
        }
        storage->push_back(c);
        ++i;
      }
      if (!closed) {
        return absl::InvalidArgumentError("quoted field is not closed");
      }
      while (i < n && text[i] != ',') storage->push_back(text[i++]);
      fields->emplace_back(storage->data() + start, storage->size() - start);
    } else {
      const size_t comma = text.find(',', i);
      const size_t stop = comma == absl::string_view::npos ? n : comma;
      fields->push_back(text.substr(i, stop - i));
      i = stop;
    }
    if (i >= n) return absl::OkStatus();
    ++i;  // the comma
    if (i == n) {
      fields->emplace_back();  // a trailing comma: one more empty field
      return absl::OkStatus();
    }
  }
}

void AppendCsvField(std::string* out, absl::string_view field) {
  const bool needs_quotes =
      field.find_first_of(",\"\r\n") != absl::string_view::npos ||
      (!field.empty() && (field.front() == ' ' || field.back() == ' '));
  if (!needs_quotes) {
    out->append(field.data(), field.size());
    return;
  }
  out->push_back('"');
  for (char c : field) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

absl::string_view TrimSpaces(absl::string_view s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return s.substr(b, e - b);
}

}  // namespace ferry::internal
