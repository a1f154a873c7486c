// SPDX-License-Identifier: Apache-2.0
#include "repository/version_policy.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace ferry {

VersionSelection SelectVersions(const VersionPolicyOptions& policy,
                                std::vector<int64_t> available) {
  std::sort(available.begin(), available.end());
  available.erase(std::unique(available.begin(), available.end()),
                  available.end());
  VersionSelection out;
  switch (policy.kind) {
    case VersionPolicyOptions::Kind::kAll:
      out.selected = available;
      break;
    case VersionPolicyOptions::Kind::kLatest: {
      const size_t n = std::min<size_t>(policy.num_versions, available.size());
      out.selected.assign(available.end() - n, available.end());
      break;
    }
    case VersionPolicyOptions::Kind::kSpecific: {
      std::vector<int64_t> wanted = policy.versions;
      std::sort(wanted.begin(), wanted.end());
      wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
      for (int64_t v : wanted) {
        if (std::binary_search(available.begin(), available.end(), v)) {
          out.selected.push_back(v);
        } else {
          out.missing.push_back(v);
        }
      }
      break;
    }
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> ListVersionDirectories(
    const std::filesystem::path& model_dir) {
  std::error_code ec;
  std::filesystem::directory_iterator it(model_dir, ec);
  if (ec) {
    return absl::NotFoundError(absl::StrCat("cannot read model directory ",
                                            model_dir.string(), ": ",
                                            ec.message()));
  }
  std::vector<int64_t> versions;
  for (const auto& entry : it) {
    if (!entry.is_directory(ec)) continue;
    const std::string name = entry.path().filename().string();
    int64_t v = 0;
    auto [ptr, err] =
        std::from_chars(name.data(), name.data() + name.size(), v);
    if (err == std::errc() && ptr == name.data() + name.size() && v > 0) {
      versions.push_back(v);
    }
  }
  std::sort(versions.begin(), versions.end());
  return versions;
}

}  // namespace ferry
