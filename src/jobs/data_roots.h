// SPDX-License-Identifier: Apache-2.0
// DataRoots: which local files a job submitted over the network may read and
// write. `ferry serve --data-root DIR` (repeatable) names the directories; a
// job's input and output must resolve, after symlinks and `..` are followed
// (std::filesystem::weakly_canonical), to a path strictly inside one of them
// and outside every excluded directory (the server's own state directory).
// With no roots, every local path is refused.
//
// Locations are absolute paths or file:// URLs (`file:///data/x.csv`,
// `file://localhost/data/x.csv`, %XX escapes decoded). Relative paths are
// refused: the client's working directory is not the server's.
//
// Resolution reads the file system (symlinks of the existing prefix), so a
// link created after the check is not seen; the roots are for keeping honest
// clients inside their area, with the server's user's file permissions as
// the real boundary.
//
// Immutable after Create(); safe for concurrent use.
#ifndef FERRY_JOBS_DATA_ROOTS_H_
#define FERRY_JOBS_DATA_ROOTS_H_

#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ferry {

// The path a location names, not yet checked against any root.
// INVALID_ARGUMENT naming `field` for an empty or relative path, a NUL byte,
// a malformed file:// URL, and any other scheme ("only local paths and
// file:// URLs are supported").
absl::StatusOr<std::filesystem::path> PathFromLocation(
    absl::string_view field, absl::string_view location);

class DataRoots {
 public:
  // Each root must be an existing directory (INVALID_ARGUMENT naming it).
  // Excluded directories need not exist.
  static absl::StatusOr<DataRoots> Create(
      const std::vector<std::string>& roots,
      const std::vector<std::filesystem::path>& excluded = {});

  DataRoots() = default;

  // The canonical path of `location` (see PathFromLocation for the
  // INVALID_ARGUMENT cases). PERMISSION_DENIED naming `field` and the path
  // when it resolves outside every root or inside an excluded directory, or
  // when no root is configured.
  absl::StatusOr<std::filesystem::path> Resolve(
      absl::string_view field, absl::string_view location) const;

  bool empty() const { return roots_.empty(); }
  const std::vector<std::filesystem::path>& roots() const { return roots_; }

 private:
  std::vector<std::filesystem::path> roots_;     // canonical
  std::vector<std::filesystem::path> excluded_;  // canonical
};

// Whether canonical `path` lies strictly inside canonical `dir`.
bool PathIsInside(const std::filesystem::path& path,
                  const std::filesystem::path& dir);

}  // namespace ferry

#endif  // FERRY_JOBS_DATA_ROOTS_H_
