// SPDX-License-Identifier: Apache-2.0
// FileStore: the files of the Batch API (`/v1/files`) in one directory,
// <state-dir>/files/.
//
// A file is its content and a metadata file `<id>.json` (id, bytes,
// created_at, filename, purpose, content path), both written atomically
// (temporary name, fsync, rename), content first: a crash leaves a file whole
// or absent, at worst an unlisted content file. Uploaded content lives at
// `<dir>/<id>`. A job's output or error file is not copied: Register() records
// where it already lies, under an id derived from a caller's key (the job id
// and the file's role), so registering twice gives the same file.
//
// Ids are "file-" and 24 lowercase hex digits; anything else is NOT_FOUND
// before the file system is touched, so an id can never name a path.
//
// Thread-safety: safe for concurrent use (one mutex around metadata changes);
// one FileStore per directory per process.
#ifndef FERRY_JOBS_FILE_STORE_H_
#define FERRY_JOBS_FILE_STORE_H_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "storage/job_store.h"

namespace ferry {

// Purposes the server writes and accepts.
inline constexpr absl::string_view kFilePurposeBatch = "batch";
inline constexpr absl::string_view kFilePurposeBatchOutput = "batch_output";

struct StoredFile {
  std::string id;
  int64_t bytes = 0;
  absl::Time created_at = absl::InfinitePast();
  std::string filename;  // as uploaded, or the result file's name
  std::string purpose;
  std::filesystem::path path;  // where the content is
};

class FileStore {
 public:
  // Creates `dir` if missing. INTERNAL when it cannot. Removes upload bodies
  // a stopped server left there (".upload-*", see HttpServerOptions).
  static absl::StatusOr<std::unique_ptr<FileStore>> Open(
      std::filesystem::path dir, Clock* clock = RealClock::Get());

  FileStore(const FileStore&) = delete;
  FileStore& operator=(const FileStore&) = delete;

  // Stores uploaded content under a fresh id.
  absl::StatusOr<StoredFile> Create(absl::string_view contents,
                                    absl::string_view filename,
                                    absl::string_view purpose)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Records an existing file (a job's result) under the id derived from
  // `key`; the same key gives the same id, and a file already registered is
  // returned as it is. NOT_FOUND if `path` is not a regular file.
  absl::StatusOr<StoredFile> Register(const std::filesystem::path& path,
                                      absl::string_view filename,
                                      absl::string_view purpose,
                                      absl::string_view key)
      ABSL_LOCKS_EXCLUDED(mu_);

  // NOT_FOUND naming the id for an unknown or malformed id.
  absl::StatusOr<StoredFile> Get(absl::string_view id) const;

  // Every file, newest first (ties by id); `purpose` not empty filters.
  absl::StatusOr<std::vector<StoredFile>> List(
      absl::string_view purpose = "") const;

  // Removes the content and then the metadata. NOT_FOUND for an unknown id.
  absl::Status Delete(absl::string_view id) ABSL_LOCKS_EXCLUDED(mu_);

  // The id Register() gives `key`; whether it is registered is another
  // matter.
  static std::string IdForKey(absl::string_view key);
  // Whether `id` has the shape of a file id.
  static bool IsValidId(absl::string_view id);
  // The id of an uploaded file whose content lies at `path`, if it is one of
  // this store's (a job's input path gives back its input_file_id).
  std::optional<std::string> UploadedIdOf(
      const std::filesystem::path& path) const;

  const std::filesystem::path& dir() const { return dir_; }

 private:
  FileStore(std::filesystem::path dir, Clock* clock);

  std::filesystem::path MetadataPath(absl::string_view id) const;
  absl::Status WriteMetadata(const StoredFile& file)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::filesystem::path dir_;
  Clock* const clock_;
  Mutex mu_;
};

// The files a job's results are known by.
struct JobResultFiles {
  std::string output_file_id;  // empty: none
  std::string error_file_id;   // empty: none
};

// For a terminal job whose output lies in `files`' directory (every Batch API
// job, and native jobs submitted without an output path): registers its
// output and error files (those that exist and are not empty) as
// "batch_output" files and returns their ids. An input the server downloaded
// for the job (`<job id>-input.<format>` there) becomes a "batch" file, so it
// can be listed and deleted. Idempotent: the ids derive from the job id.
// Nothing while the job runs.
JobResultFiles RegisterJobResults(FileStore& files, const JobRecord& job);

}  // namespace ferry

#endif  // FERRY_JOBS_FILE_STORE_H_
