// SPDX-License-Identifier: Apache-2.0
#include "api/http/multipart.h"

#include <algorithm>
#include <functional>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace ferry {
namespace {

// The longest header section of one part; more is not a form field.
constexpr size_t kMaxPartHeaderBytes = 16 << 10;

bool IsTokenChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         absl::string_view("!#$%&'*+-.^_`|~").find(c) !=
             absl::string_view::npos;
}

struct HeaderValue {
  std::string value;  // the part before the first ';', lower-cased
  std::vector<std::pair<std::string, std::string>> params;  // names lowered
};

// `value *( ";" name "=" ( token / quoted-string ) )`, spaces allowed around
// the separators.
absl::StatusOr<HeaderValue> ParseHeaderValue(absl::string_view header,
                                             absl::string_view text) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(header, " '", text, "': ", why));
  };
  HeaderValue out;
  size_t i = text.find(';');
  out.value = absl::AsciiStrToLower(
      absl::StripAsciiWhitespace(text.substr(0, std::min(i, text.size()))));
  while (i != absl::string_view::npos && i < text.size()) {
    ++i;  // past ';'
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i == text.size()) break;  // a trailing ';'
    const size_t name_begin = i;
    while (i < text.size() && IsTokenChar(text[i])) ++i;
    std::string name =
        absl::AsciiStrToLower(text.substr(name_begin, i - name_begin));
    if (name.empty()) return bad("a parameter has no name");
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i == text.size() || text[i] != '=') {
      return bad(absl::StrCat("parameter '", name, "' has no value"));
    }
    ++i;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    std::string value;
    if (i < text.size() && text[i] == '"') {
      ++i;
      bool closed = false;
      for (; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) {
          value.push_back(text[++i]);
        } else if (text[i] == '"') {
          closed = true;
          ++i;
          break;
        } else {
          value.push_back(text[i]);
        }
      }
      if (!closed) {
        return bad(absl::StrCat("parameter '", name, "' has an open quote"));
      }
    } else {
      const size_t begin = i;
      while (i < text.size() && IsTokenChar(text[i])) ++i;
      value = std::string(text.substr(begin, i - begin));
    }
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i < text.size() && text[i] != ';') {
      return bad(absl::StrCat("unexpected '", text.substr(i, 1),
                              "' after parameter '", name, "'"));
    }
    out.params.emplace_back(std::move(name), std::move(value));
  }
  return out;
}

const std::string* Param(const HeaderValue& h, absl::string_view name) {
  for (const auto& [k, v] : h.params) {
    if (k == name) return &v;
  }
  return nullptr;
}

// RFC 5987 `charset'lang'pct-encoded` (filename*); nullopt if malformed.
std::optional<std::string> DecodeExtValue(absl::string_view v) {
  const size_t q1 = v.find('\'');
  const size_t q2 = q1 == absl::string_view::npos ? q1 : v.find('\'', q1 + 1);
  if (q2 == absl::string_view::npos) return std::nullopt;
  const absl::string_view enc = v.substr(q2 + 1);
  std::string out;
  for (size_t i = 0; i < enc.size(); ++i) {
    if (enc[i] != '%') {
      out.push_back(enc[i]);
      continue;
    }
    if (i + 2 >= enc.size() || !absl::ascii_isxdigit(enc[i + 1]) ||
        !absl::ascii_isxdigit(enc[i + 2])) {
      return std::nullopt;
    }
    auto hex = [](char c) {
      return absl::ascii_isdigit(c) ? c - '0'
                                    : absl::ascii_tolower(c) - 'a' + 10;
    };
    out.push_back(static_cast<char>(hex(enc[i + 1]) * 16 + hex(enc[i + 2])));
    i += 2;
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> MultipartBoundary(absl::string_view content_type) {
  absl::StatusOr<HeaderValue> h =
      ParseHeaderValue("Content-Type", content_type);
  if (!h.ok()) return h.status();
  if (h->value != "multipart/form-data") {
    return absl::InvalidArgumentError(
        absl::StrCat("Content-Type is '", content_type,
                     "'; an upload must be multipart/form-data"));
  }
  const std::string* boundary = Param(*h, "boundary");
  if (boundary == nullptr || boundary->empty()) {
    return absl::InvalidArgumentError(
        "Content-Type multipart/form-data has no boundary parameter");
  }
  if (boundary->size() > 70 || absl::EndsWith(*boundary, " ")) {
    return absl::InvalidArgumentError(
        absl::StrCat("multipart boundary '", *boundary,
                     "' must be 1..70 characters, not ending in a space"));
  }
  return *boundary;
}

absl::StatusOr<std::vector<MultipartPart>> ParseMultipartFormData(
    absl::string_view body, absl::string_view boundary) {
  if (boundary.empty()) {
    return absl::InvalidArgumentError("multipart boundary is empty");
  }
  const std::string delimiter = absl::StrCat("--", boundary);
  const std::string separator = absl::StrCat("\n", delimiter);
  const std::boyer_moore_horspool_searcher searcher(separator.begin(),
                                                    separator.end());
  auto find_separator = [&](size_t from) -> size_t {
    const char* it =
        std::search(body.data() + from, body.data() + body.size(), searcher);
    return it == body.data() + body.size()
               ? absl::string_view::npos
               : static_cast<size_t>(it - body.data());
  };

  // The first delimiter opens the body or follows the preamble's last line.
  size_t pos = 0;
  if (!absl::StartsWith(body, delimiter)) {
    const size_t found = find_separator(0);
    if (found == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("multipart body has no '", delimiter,
                       "' line: the boundary of the Content-Type does not "
                       "match the body"));
    }
    pos = found + 1;
  }

  std::vector<MultipartPart> parts;
  std::set<std::string> names;
  while (true) {
    const std::string where = absl::StrCat("multipart part ", parts.size() + 1);
    pos += delimiter.size();
    if (body.substr(pos, 2) == "--") break;  // the closing delimiter
    while (pos < body.size() && (body[pos] == ' ' || body[pos] == '\t')) ++pos;
    if (body.substr(pos, 2) == "\r\n") {
      pos += 2;
    } else if (body.substr(pos, 1) == "\n") {
      pos += 1;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": the boundary line is not followed by a line break (",
          pos >= body.size() ? "the body ends there" : "other text", ")"));
    }

    MultipartPart part;
    bool has_disposition = false;
    const size_t headers_begin = pos;
    while (true) {
      const size_t eol = body.find('\n', pos);
      if (eol == absl::string_view::npos ||
          eol - headers_begin > kMaxPartHeaderBytes) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": its headers do not end with an empty line within ",
            kMaxPartHeaderBytes, " bytes"));
      }
      absl::string_view line = body.substr(pos, eol - pos);
      absl::ConsumeSuffix(&line, "\r");
      pos = eol + 1;
      if (line.empty()) break;
      const size_t colon = line.find(':');
      if (colon == absl::string_view::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": header line '", line, "' has no ':'"));
      }
      const std::string name = absl::AsciiStrToLower(
          absl::StripAsciiWhitespace(line.substr(0, colon)));
      const absl::string_view value =
          absl::StripAsciiWhitespace(line.substr(colon + 1));
      if (name == "content-disposition") {
        absl::StatusOr<HeaderValue> h =
            ParseHeaderValue("Content-Disposition", value);
        if (!h.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": ", h.status().message()));
        }
        if (h->value != "form-data") {
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": Content-Disposition is '", h->value,
                           "', not form-data"));
        }
        const std::string* field = Param(*h, "name");
        if (field == nullptr || field->empty()) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": Content-Disposition has no name"));
        }
        part.name = *field;
        if (const std::string* f = Param(*h, "filename*")) {
          part.filename = DecodeExtValue(*f);
        }
        if (!part.filename) {
          if (const std::string* f = Param(*h, "filename")) part.filename = *f;
        }
        has_disposition = true;
      } else if (name == "content-type") {
        part.content_type = std::string(value);
      } else if (name == "content-transfer-encoding") {
        const std::string enc = absl::AsciiStrToLower(value);
        if (enc != "binary" && enc != "8bit" && enc != "7bit") {
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": Content-Transfer-Encoding '", value,
                           "' is not supported; send the bytes as they are"));
        }
      }
    }
    if (!has_disposition) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, " has no Content-Disposition: form-data; name=..."));
    }
    const size_t next = find_separator(pos == 0 ? 0 : pos - 1);
    if (next == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, " ('", part.name, "') does not end with the boundary '",
          delimiter, "' (a truncated upload?)"));
    }
    size_t data_end = std::max(next, pos);
    if (data_end > pos && body[data_end - 1] == '\r') --data_end;
    part.data = body.substr(pos, data_end - pos);
    if (!names.insert(part.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("multipart field '", part.name, "' appears twice"));
    }
    parts.push_back(std::move(part));
    pos = next + 1;
  }
  if (parts.empty()) {
    return absl::InvalidArgumentError("multipart body has no parts");
  }
  return parts;
}

}  // namespace ferry
