// SPDX-License-Identifier: Apache-2.0
#include "jobs/file_store.h"

#include <openssl/sha.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/json_writer.h"
#include "core/status_macros.h"
#include "jobs/files.h"
#include "simdjson.h"

namespace ferry {
namespace {

namespace fs = std::filesystem;

constexpr absl::string_view kIdPrefix = "file-";
constexpr size_t kIdHexDigits = 24;
constexpr absl::string_view kMetadataSuffix = ".json";

std::string NewFileId() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return absl::StrFormat("%s%016x%08x", kIdPrefix, rng(),
                         static_cast<uint32_t>(rng()));
}

absl::StatusOr<std::string> ReadSmallFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot read '", path.string(), "'"));
  }
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string MetadataJson(const StoredFile& f, const fs::path& dir) {
  // Content in the store's directory is named relative to it, so the state
  // directory can be moved as a whole.
  const std::string path = f.path.parent_path() == dir
                               ? f.path.filename().string()
                               : f.path.string();
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("id").String(f.id);
  w.Key("bytes").Int(f.bytes);
  w.Key("created_at_us").Int(absl::ToUnixMicros(f.created_at));
  w.Key("filename").String(f.filename);
  w.Key("purpose").String(f.purpose);
  w.Key("path").String(path);
  w.EndObject();
  out.push_back('\n');
  return out;
}

absl::StatusOr<StoredFile> ParseMetadata(const std::string& text,
                                         const fs::path& dir,
                                         const fs::path& where) {
  auto bad = [&](absl::string_view why) {
    return absl::DataLossError(
        absl::StrCat("file metadata '", where.string(), "': ", why));
  };
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  if (parser.parse(text).get_object().get(obj) != simdjson::SUCCESS) {
    return bad("not a JSON object");
  }
  StoredFile f;
  std::string_view s;
  int64_t i = 0;
  if (obj["id"].get_string().get(s) != simdjson::SUCCESS) return bad("id");
  f.id = std::string(s);
  if (obj["bytes"].get_int64().get(i) != simdjson::SUCCESS) {
    return bad("bytes");
  }
  f.bytes = i;
  if (obj["created_at_us"].get_int64().get(i) != simdjson::SUCCESS) {
    return bad("created_at_us");
  }
  f.created_at = absl::FromUnixMicros(i);
  if (obj["filename"].get_string().get(s) != simdjson::SUCCESS) {
    return bad("filename");
  }
  f.filename = std::string(s);
  if (obj["purpose"].get_string().get(s) != simdjson::SUCCESS) {
    return bad("purpose");
  }
  f.purpose = std::string(s);
  if (obj["path"].get_string().get(s) != simdjson::SUCCESS) {
    return bad("path");
  }
  const fs::path p(std::string{s});
  f.path = p.is_absolute() ? p : dir / p;
  return f;
}

}  // namespace

absl::StatusOr<std::unique_ptr<FileStore>> FileStore::Open(fs::path dir,
                                                           Clock* clock) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("cannot create files directory '",
                                            dir.string(), "': ", ec.message()));
  }
  dir = fs::weakly_canonical(dir, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("cannot resolve files directory '",
                                            dir.string(), "': ", ec.message()));
  }
  // Upload bodies a stopped server was still receiving (the server streams
  // them here as ".upload-*"; the state directory's lock says it is gone).
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (absl::StartsWith(it->path().filename().string(), ".upload-")) {
      std::error_code ignored;
      fs::remove(it->path(), ignored);
    }
  }
  return std::unique_ptr<FileStore>(new FileStore(std::move(dir), clock));
}

FileStore::FileStore(fs::path dir, Clock* clock)
    : dir_(std::move(dir)), clock_(clock) {}

bool FileStore::IsValidId(absl::string_view id) {
  if (!absl::StartsWith(id, kIdPrefix)) return false;
  id.remove_prefix(kIdPrefix.size());
  return id.size() == kIdHexDigits &&
         std::all_of(id.begin(), id.end(), [](char c) {
           return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'f');
         });
}

std::string FileStore::IdForKey(absl::string_view key) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(),
         digest);
  return absl::StrCat(
      kIdPrefix, absl::BytesToHexString(absl::string_view(
                     reinterpret_cast<const char*>(digest), kIdHexDigits / 2)));
}

fs::path FileStore::MetadataPath(absl::string_view id) const {
  return dir_ / absl::StrCat(id, kMetadataSuffix);
}

absl::Status FileStore::WriteMetadata(const StoredFile& file) {
  return WriteFileAtomically(MetadataPath(file.id), MetadataJson(file, dir_));
}

absl::StatusOr<StoredFile> FileStore::Create(absl::string_view contents,
                                             absl::string_view filename,
                                             absl::string_view purpose) {
  StoredFile f;
  f.id = NewFileId();
  f.bytes = static_cast<int64_t>(contents.size());
  f.created_at = clock_->Now();
  f.filename = std::string(filename);
  f.purpose = std::string(purpose);
  f.path = dir_ / f.id;
  // The content is written outside the lock: uploads are large, and a fresh
  // id is nobody else's.
  RETURN_IF_ERROR(WriteFileAtomically(f.path, contents));
  MutexLock lock(&mu_);
  if (absl::Status s = WriteMetadata(f); !s.ok()) {
    std::error_code ec;
    fs::remove(f.path, ec);
    return s;
  }
  return f;
}

absl::StatusOr<StoredFile> FileStore::Register(const fs::path& path,
                                               absl::string_view filename,
                                               absl::string_view purpose,
                                               absl::string_view key) {
  const std::string id = IdForKey(key);
  MutexLock lock(&mu_);
  if (absl::StatusOr<StoredFile> existing = Get(id); existing.ok()) {
    return existing;
  }
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    return absl::NotFoundError(
        absl::StrCat("'", path.string(), "' is not a regular file"));
  }
  StoredFile f;
  f.id = id;
  f.bytes = static_cast<int64_t>(fs::file_size(path, ec));
  if (ec) {
    return absl::InternalError(absl::StrCat(
        "cannot read the size of '", path.string(), "': ", ec.message()));
  }
  f.created_at = clock_->Now();
  f.filename = std::string(filename);
  f.purpose = std::string(purpose);
  f.path = path;
  RETURN_IF_ERROR(WriteMetadata(f));
  return f;
}

absl::StatusOr<StoredFile> FileStore::Get(absl::string_view id) const {
  auto not_found = [&] {
    return absl::NotFoundError(absl::StrCat("no file '", id, "'"));
  };
  if (!IsValidId(id)) return not_found();
  const fs::path meta = MetadataPath(id);
  absl::StatusOr<std::string> text = ReadSmallFile(meta);
  if (!text.ok()) return not_found();
  ASSIGN_OR_RETURN(StoredFile f, ParseMetadata(*text, dir_, meta));
  if (f.id != id) {
    return absl::DataLossError(absl::StrCat("file metadata '", meta.string(),
                                            "' holds id '", f.id, "'"));
  }
  return f;
}

absl::StatusOr<std::vector<StoredFile>> FileStore::List(
    absl::string_view purpose) const {
  std::vector<StoredFile> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!absl::EndsWith(name, kMetadataSuffix)) continue;
    const absl::string_view id =
        absl::string_view(name).substr(0, name.size() - kMetadataSuffix.size());
    if (!IsValidId(id)) continue;
    absl::StatusOr<StoredFile> f = Get(id);
    if (!f.ok()) continue;  // deleted meanwhile
    if (!purpose.empty() && f->purpose != purpose) continue;
    files.push_back(*std::move(f));
  }
  if (ec) {
    return absl::InternalError(absl::StrCat(
        "cannot list files directory '", dir_.string(), "': ", ec.message()));
  }
  std::sort(files.begin(), files.end(),
            [](const StoredFile& a, const StoredFile& b) {
              if (a.created_at != b.created_at) {
                return a.created_at > b.created_at;
              }
              return a.id > b.id;
            });
  return files;
}

absl::Status FileStore::Delete(absl::string_view id) {
  MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(StoredFile f, Get(id));
  std::error_code ec;
  // Content first: a crash in between leaves metadata whose content is gone,
  // which Delete removes again, rather than content nobody can name.
  fs::remove(f.path, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot remove '", f.path.string(), "': ", ec.message()));
  }
  fs::remove(MetadataPath(id), ec);
  if (ec) {
    return absl::InternalError(absl::StrCat(
        "cannot remove '", MetadataPath(id).string(), "': ", ec.message()));
  }
  return absl::OkStatus();
}

std::optional<std::string> FileStore::UploadedIdOf(const fs::path& path) const {
  if (path.parent_path() != dir_) return std::nullopt;
  std::string name = path.filename().string();
  if (!IsValidId(name)) return std::nullopt;
  return name;
}

JobResultFiles RegisterJobResults(FileStore& files, const JobRecord& job) {
  JobResultFiles out;
  if (!IsTerminal(job.state)) return out;
  auto one = [&](const std::string& path, absl::string_view role,
                 absl::string_view purpose) {
    std::error_code ec;
    if (path.empty() || !fs::is_regular_file(path, ec) ||
        fs::file_size(path, ec) == 0 || ec) {
      return std::string();
    }
    absl::StatusOr<StoredFile> f =
        files.Register(path, fs::path(path).filename().string(), purpose,
                       absl::StrCat(job.id, "/", role));
    return f.ok() ? f->id : std::string();
  };
  // An input the server downloaded (`<job id>-input.<format>` in the files
  // directory) becomes a file too, so that it can be listed and deleted.
  const fs::path input(job.input_path);
  if (input.parent_path() == files.dir() &&
      absl::StartsWith(input.filename().string(), job.id + "-input.")) {
    one(job.input_path, "input", kFilePurposeBatch);
  }
  if (fs::path(job.output_path).parent_path() != files.dir()) return out;
  out.output_file_id = one(job.output_path, "output", kFilePurposeBatchOutput);
  out.error_file_id = one(job.error_path, "errors", kFilePurposeBatchOutput);
  return out;
}

}  // namespace ferry
