// SPDX-License-Identifier: Apache-2.0
// Durable file writes for job parts and results: a file appears under its name
// whole or not at all. AtomicFile writes to a temporary name in the same
// directory, fsyncs, renames over the final name and fsyncs the directory, so
// a crash leaves either the old file or the new one, never a torn one.
#ifndef FERRY_JOBS_FILES_H_
#define FERRY_JOBS_FILES_H_

#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ferry {

class AtomicFile {
 public:
  // Creates the temporary file (and missing parent directories).
  static absl::Status Open(const std::filesystem::path& path, AtomicFile* out);
  AtomicFile() = default;
  ~AtomicFile();  // removes the temporary file unless committed
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;

  absl::Status Append(absl::string_view data);
  // Appends the whole contents of another file (streamed).
  absl::Status AppendFile(const std::filesystem::path& path);
  // fsync, rename into place, fsync the directory.
  absl::Status Commit();

 private:
  void Abandon();

  int fd_ = -1;
  std::filesystem::path path_;
  std::filesystem::path tmp_;
};

absl::Status WriteFileAtomically(const std::filesystem::path& path,
                                 absl::string_view contents);

// Makes a file written elsewhere (a download) durable under its final name:
// fsyncs `from`, renames it to `to` and fsyncs the directory. After a crash
// `to` is either absent or whole, never empty or torn.
absl::Status RenameDurably(const std::filesystem::path& from,
                           const std::filesystem::path& to);

// A whole file mapped read-only: its bytes as a view, backed by the page
// cache rather than the heap (a large upload is parsed in place). The view
// lives as long as the object.
class MappedFile {
 public:
  // NOT_FOUND / INTERNAL naming the path when it cannot be opened or mapped.
  static absl::StatusOr<MappedFile> Open(const std::filesystem::path& path);
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;

  absl::string_view data() const {
    return absl::string_view(static_cast<const char*>(addr_), size_);
  }

 private:
  void* addr_ = nullptr;
  size_t size_ = 0;
};

// An exclusive lock on a state directory (flock on <dir>/LOCK), held while
// the object lives and released by the kernel when the process dies, even by
// SIGKILL. While it is held no other process runs jobs from that directory,
// so leases left by a dead holder may be reclaimed at once.
class DirectoryLock {
 public:
  // FAILED_PRECONDITION naming the directory if another process holds it.
  static absl::StatusOr<DirectoryLock> Acquire(
      const std::filesystem::path& dir);
  DirectoryLock() = default;
  ~DirectoryLock();
  DirectoryLock(DirectoryLock&& other) noexcept;
  DirectoryLock& operator=(DirectoryLock&& other) noexcept;

 private:
  int fd_ = -1;
};

}  // namespace ferry

#endif  // FERRY_JOBS_FILES_H_
