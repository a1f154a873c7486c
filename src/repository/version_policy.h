// SPDX-License-Identifier: Apache-2.0
// Version selection: which of a model's version directories to serve, per the
// config's version_policy (Triton semantics: latest N by number, all, or a
// specific list). Pure functions; thread-safe.
#ifndef FERRY_REPOSITORY_VERSION_POLICY_H_
#define FERRY_REPOSITORY_VERSION_POLICY_H_

#include <cstdint>
#include <filesystem>
#include <vector>

#include "absl/status/statusor.h"
#include "config/model_options.h"

namespace ferry {

struct VersionSelection {
  std::vector<int64_t> selected;  // ascending
  std::vector<int64_t>
      missing;  // kSpecific versions with no directory, ascending
};

// `available` need not be sorted or unique.
VersionSelection SelectVersions(const VersionPolicyOptions& policy,
                                std::vector<int64_t> available);

// Version directories of a model: subdirectories whose name is a positive
// integer. Other entries (config.pbtxt, a "warmup" folder,
// ".ipynb_checkpoints") are ignored.
absl::StatusOr<std::vector<int64_t>> ListVersionDirectories(
    const std::filesystem::path& model_dir);

}  // namespace ferry

#endif  // FERRY_REPOSITORY_VERSION_POLICY_H_
