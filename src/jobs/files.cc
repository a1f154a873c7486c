// SPDX-License-Identifier: Apache-2.0
#include "jobs/files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace ferry {
namespace {

absl::Status Errno(absl::string_view what, const std::filesystem::path& path) {
  const int e = errno;
  return absl::InternalError(
      absl::StrCat(what, " '", path.string(), "': ", std::strerror(e)));
}

// Renames `from` over `to`, then fsyncs the directory (best effort: the
// rename is done either way). `from` is removed if the rename fails.
absl::Status RenameAndSyncDirectory(const std::filesystem::path& from,
                                    const std::filesystem::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    absl::Status s = Errno("cannot rename into", to);
    std::error_code ec;
    std::filesystem::remove(from, ec);
    return s;
  }
  const std::filesystem::path dir =
      to.has_parent_path() ? to.parent_path() : ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return absl::OkStatus();
}

absl::Status WriteAll(int fd, const char* data, size_t size,
                      const std::filesystem::path& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot write", path);
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status AtomicFile::Open(const std::filesystem::path& path,
                              AtomicFile* out) {
  out->Abandon();
  std::error_code ec;
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) {
      return absl::InternalError(absl::StrCat("cannot create directory '",
                                              path.parent_path().string(),
                                              "': ", ec.message()));
    }
  }
  out->path_ = path;
  out->tmp_ = path;
  out->tmp_ += absl::StrCat(".tmp-", ::getpid());
  out->fd_ =
      ::open(out->tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out->fd_ < 0) return Errno("cannot create", out->tmp_);
  return absl::OkStatus();
}

AtomicFile::~AtomicFile() { Abandon(); }

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      tmp_(std::move(other.tmp_)) {}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    Abandon();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    tmp_ = std::move(other.tmp_);
  }
  return *this;
}

void AtomicFile::Abandon() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
  }
}

absl::Status AtomicFile::Append(absl::string_view data) {
  if (fd_ < 0) return absl::FailedPreconditionError("file is not open");
  return WriteAll(fd_, data.data(), data.size(), tmp_);
}

absl::Status AtomicFile::AppendFile(const std::filesystem::path& path) {
  if (fd_ < 0) return absl::FailedPreconditionError("file is not open");
  const int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return Errno("cannot open", path);
  std::vector<char> buffer(1 << 20);
  absl::Status status;
  while (true) {
    const ssize_t n = ::read(in, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      status = Errno("cannot read", path);
      break;
    }
    if (n == 0) break;
    status = WriteAll(fd_, buffer.data(), static_cast<size_t>(n), tmp_);
    if (!status.ok()) break;
  }
  ::close(in);
  return status;
}

absl::Status AtomicFile::Commit() {
  if (fd_ < 0) return absl::FailedPreconditionError("file is not open");
  if (::fsync(fd_) != 0) return Errno("cannot fsync", tmp_);
  if (::close(fd_) != 0) {
    fd_ = -1;
    return Errno("cannot close", tmp_);
  }
  fd_ = -1;
  return RenameAndSyncDirectory(tmp_, path_);
}

absl::Status RenameDurably(const std::filesystem::path& from,
                           const std::filesystem::path& to) {
  const int fd = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    return absl::NotFoundError(
        absl::StrCat("cannot open '", from.string(), "': no such file"));
  }
  if (fd < 0) return Errno("cannot open", from);
  const bool synced = ::fsync(fd) == 0;
  absl::Status s = synced ? absl::OkStatus() : Errno("cannot fsync", from);
  ::close(fd);
  if (!s.ok()) return s;
  return RenameAndSyncDirectory(from, to);
}

absl::Status WriteFileAtomically(const std::filesystem::path& path,
                                 absl::string_view contents) {
  AtomicFile file;
  RETURN_IF_ERROR(AtomicFile::Open(path, &file));
  RETURN_IF_ERROR(file.Append(contents));
  return file.Commit();
}

absl::StatusOr<DirectoryLock> DirectoryLock::Acquire(
    const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path path = dir / "LOCK";
  DirectoryLock lock;
  lock.fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock.fd_ < 0) return Errno("cannot open", path);
  if (::flock(lock.fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return absl::FailedPreconditionError(
          absl::StrCat("state directory '", dir.string(),
                       "' is in use by another Ferry process (", path.string(),
                       " is locked)"));
    }
    return Errno("cannot lock", path);
  }
  return lock;
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

DirectoryLock::DirectoryLock(DirectoryLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)) {}

DirectoryLock& DirectoryLock::operator=(DirectoryLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

absl::StatusOr<MappedFile> MappedFile::Open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string message =
        absl::StrCat("cannot open '", path.string(), "': ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(message)
                         : absl::InternalError(message);
  }
  struct stat st {};
  MappedFile out;
  absl::Status status;
  if (::fstat(fd, &st) != 0) {
    status = absl::InternalError(absl::StrCat("cannot stat '", path.string(),
                                              "': ", std::strerror(errno)));
  } else if (st.st_size > 0) {
    void* addr = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ,
                        MAP_PRIVATE, fd, 0);
    if (addr == MAP_FAILED) {
      status = absl::InternalError(absl::StrCat("cannot map '", path.string(),
                                                "': ", std::strerror(errno)));
    } else {
      // Read front to back once.
      ::madvise(addr, static_cast<size_t>(st.st_size), MADV_SEQUENTIAL);
      out.addr_ = addr;
      out.size_ = static_cast<size_t>(st.st_size);
    }
  }
  ::close(fd);  // the mapping keeps the file
  if (!status.ok()) return status;
  return out;
}

MappedFile::~MappedFile() {
  if (addr_ != nullptr) ::munmap(addr_, size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : addr_(std::exchange(other.addr_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (addr_ != nullptr) ::munmap(addr_, size_);
    addr_ = std::exchange(other.addr_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

}  // namespace ferry
