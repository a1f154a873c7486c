// SPDX-License-Identifier: Apache-2.0
#include "jobs/data_roots.h"

#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ferry {
namespace {

namespace fs = std::filesystem;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

absl::StatusOr<std::string> DecodeUrlPath(absl::string_view field,
                                          absl::string_view url,
                                          absl::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '%') {
      out.push_back(path[i]);
      continue;
    }
    const int hi = i + 2 < path.size() ? HexDigit(path[i + 1]) : -1;
    const int lo = i + 2 < path.size() ? HexDigit(path[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": '", url, "' has a malformed % escape at offset ", i));
    }
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

fs::path Canonical(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : c;
}

}  // namespace

bool PathIsInside(const fs::path& path, const fs::path& dir) {
  const fs::path rel = path.lexically_relative(dir);
  if (rel.empty() || rel == ".") return false;
  return *rel.begin() != "..";
}

absl::StatusOr<fs::path> PathFromLocation(absl::string_view field,
                                          absl::string_view location) {
  if (location.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(field, " is empty"));
  }
  if (location.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(field, " holds a NUL byte"));
  }
  std::string path;
  const size_t scheme_end = location.find("://");
  const bool has_scheme =
      scheme_end != absl::string_view::npos && scheme_end > 0 &&
      location.substr(0, scheme_end).find('/') == absl::string_view::npos;
  if (has_scheme) {
    const std::string scheme =
        absl::AsciiStrToLower(location.substr(0, scheme_end));
    if (scheme != "file") {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " '", location,
                       "': only local paths and file:// URLs are supported"));
    }
    absl::string_view rest = location.substr(scheme_end + 3);
    if (absl::StartsWithIgnoreCase(rest, "localhost/")) {
      rest.remove_prefix(std::string_view("localhost").size());
    }
    if (!absl::StartsWith(rest, "/")) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, " '", location,
          "': a file:// URL names a local absolute path, as file:///data/x"));
    }
    if (rest.find_first_of("?#") != absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " '", location,
                       "': a file:// URL may not have a query or fragment"));
    }
    auto decoded = DecodeUrlPath(field, location, rest);
    if (!decoded.ok()) return decoded.status();
    path = *std::move(decoded);
    if (path.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " '", location, "' decodes to a NUL byte"));
    }
  } else {
    path = std::string(location);
  }
  fs::path p(path);
  if (!p.is_absolute()) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, " '", location, "' is not an absolute path or a file:// URL"));
  }
  return p;
}

absl::StatusOr<DataRoots> DataRoots::Create(
    const std::vector<std::string>& roots,
    const std::vector<fs::path>& excluded) {
  DataRoots out;
  for (const std::string& r : roots) {
    std::error_code ec;
    const fs::path p = fs::absolute(r, ec);
    if (ec || !fs::is_directory(p, ec)) {
      return absl::InvalidArgumentError(
          absl::StrCat("data root '", r, "' is not a directory"));
    }
    out.roots_.push_back(Canonical(p));
  }
  for (const fs::path& e : excluded) {
    std::error_code ec;
    out.excluded_.push_back(Canonical(fs::absolute(e, ec)));
  }
  return out;
}

absl::StatusOr<fs::path> DataRoots::Resolve(absl::string_view field,
                                            absl::string_view location) const {
  auto path = PathFromLocation(field, location);
  if (!path.ok()) return path.status();
  const fs::path canonical = Canonical(*path);
  if (roots_.empty()) {
    return absl::PermissionDeniedError(absl::StrCat(
        field, " '", location,
        "': this server lets jobs read and write no local paths; start "
        "ferry serve with --data-root DIR, or upload the file (POST "
        "/v1/files)"));
  }
  for (const fs::path& e : excluded_) {
    if (canonical == e || PathIsInside(canonical, e)) {
      return absl::PermissionDeniedError(
          absl::StrCat(field, " '", location, "' (", canonical.string(),
                       ") is inside the server's state directory"));
    }
  }
  for (const fs::path& r : roots_) {
    if (PathIsInside(canonical, r)) return canonical;
  }
  std::vector<std::string> names;
  for (const fs::path& r : roots_) names.push_back(r.string());
  return absl::PermissionDeniedError(absl::StrCat(
      field, " '", location, "' resolves to '", canonical.string(),
      "', outside the data roots (", absl::StrJoin(names, ", "), ")"));
}

}  // namespace ferry
