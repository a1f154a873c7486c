// SPDX-License-Identifier: Apache-2.0
#include "engines/plugin_engine.h"

#include <dlfcn.h>

#include <filesystem>
#include <memory>
#include <system_error>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "core/logging.h"
#include "core/mutex.h"

namespace ferry {
namespace {

class PluginEngineFactory final : public EngineFactory {
 public:
  PluginEngineFactory(std::string platform, std::string path, std::string entry)
      : platform_(std::move(platform)),
        path_(std::move(path)),
        entry_(std::move(entry)) {}

  // The plugin stays loaded for the life of the process: engines made by it
  // may outlive this factory.

  absl::StatusOr<std::unique_ptr<Engine>> Create(
      const EngineLoadContext& context) const override {
    absl::StatusOr<const EngineFactory*> real = Load();
    if (!real.ok()) return real.status();
    return (*real)->Create(context);
  }

  absl::Status AutoComplete(const std::filesystem::path& version_dir,
                            ModelOptions* options) const override {
    absl::StatusOr<const EngineFactory*> real = Load();
    if (!real.ok()) return real.status();
    return (*real)->AutoComplete(version_dir, options);
  }

 private:
  absl::StatusOr<const EngineFactory*> Load() const ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    if (loaded_ != nullptr) return loaded_.get();
    if (!error_.ok()) return error_;
    void* handle = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      error_ = absl::UnavailableError(absl::StrCat(
          "the ", platform_, " engine plugin '", path_,
          "' cannot be loaded: ", why != nullptr ? why : "unknown reason"));
      return error_;
    }
    using Entry = EngineFactory* (*)();
    auto make = reinterpret_cast<Entry>(dlsym(handle, entry_.c_str()));
    if (make == nullptr) {
      error_ = absl::UnavailableError(
          absl::StrCat("the ", platform_, " engine plugin '", path_,
                       "' has no entry point ", entry_));
      return error_;
    }
    loaded_.reset(make());
    FERRY_LOG(kInfo, "loaded the ", platform_, " engine from ", path_);
    return loaded_.get();
  }

  const std::string platform_;
  const std::string path_;
  const std::string entry_;
  mutable Mutex mu_;
  mutable std::unique_ptr<EngineFactory> loaded_ ABSL_GUARDED_BY(mu_);
  mutable absl::Status error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::Status RegisterPluginEngine(EngineRegistry* registry,
                                  const std::string& platform,
                                  const std::string& path,
                                  const std::string& entry) {
  return registry->Register(
      platform, std::make_unique<PluginEngineFactory>(platform, path, entry));
}

std::string ExecutableDirectory() {
  std::error_code ec;
  std::filesystem::path self =
      std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return ".";
  return self.parent_path().string();
}

}  // namespace ferry
