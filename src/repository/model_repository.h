// SPDX-License-Identifier: Apache-2.0
// ModelRepository: the models of one directory laid out as Triton does,
//   <root>/<model>/config.pbtxt
//   <root>/<model>/<version>/model.{pt,json,ubj,...}
// It parses each config (or derives it from the model file through the engine's
// AutoComplete when config.pbtxt is missing), selects versions by version
// policy, creates instance_group.count engine instances per version, warms them
// up, and keeps each model version's state: READY, or UNAVAILABLE with the
// reason. A model that fails never stops the others.
//
// Thread-safety: safe for concurrent use. Loads and unloads are serialised;
// readers see either the old or the new version set. A LoadedModel stays valid
// while someone holds its shared_ptr, even after an unload or reload.
#ifndef FERRY_REPOSITORY_MODEL_REPOSITORY_H_
#define FERRY_REPOSITORY_MODEL_REPOSITORY_H_

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "config/model_options.h"
#include "core/mutex.h"
#include "engines/engine.h"
#include "engines/engine_registry.h"

namespace ferry {

enum class ModelState { kLoading, kReady, kUnavailable, kUnloaded };
absl::string_view ToString(ModelState state);  // "LOADING", "READY", ...

struct ModelVersionStatus {
  int64_t version = 0;
  ModelState state = ModelState::kUnavailable;
  std::string reason;  // why UNAVAILABLE
};

struct ModelStatus {
  std::string name;
  // Set when the config parsed; the platform and tensors to show even if no
  // version loaded.
  std::optional<ModelOptions> options;
  // Model-level failure (bad config, unknown platform, no versions): the model
  // has no READY version and this says why.
  std::string reason;
  std::vector<std::string> warnings;
  std::vector<ModelVersionStatus> versions;  // ascending

  bool ready() const;  // at least one version READY
};

// One READY model version with its engine instances. Instances are handed to
// exactly one caller at a time (the batcher's instance threads); the repository
// never runs them after loading.
class LoadedModel {
 public:
  LoadedModel(ModelOptions options, int64_t version,
              std::filesystem::path version_dir,
              std::vector<std::unique_ptr<Engine>> instances);

  const ModelOptions& options() const { return options_; }
  const std::string& name() const { return options_.name; }
  int64_t version() const { return version_; }
  const std::filesystem::path& version_dir() const { return version_dir_; }
  int instance_count() const { return static_cast<int>(instances_.size()); }
  Engine& instance(int i) const { return *instances_[i]; }

 private:
  const ModelOptions options_;
  const int64_t version_;
  const std::filesystem::path version_dir_;
  const std::vector<std::unique_ptr<Engine>> instances_;
};

struct RepositoryOptions {
  // Threads all instances of one model may use together; each instance gets
  // max(1, total / instance_count) unless the config's parameters set
  // "intra_op_threads" (or Triton's "INTRA_OP_THREAD_COUNT"). 0: the machine's
  // cores.
  int total_threads = 0;
  bool warmup = true;
};

class ModelRepository {
 public:
  ModelRepository(std::filesystem::path root, const EngineRegistry* engines,
                  RepositoryOptions options = {});

  const std::filesystem::path& root() const { return root_; }

  // Names of the model directories under root (whether loaded or not), sorted.
  absl::StatusOr<std::vector<std::string>> ScanModelNames() const;

  // Loads every model under root. Individual failures are recorded in each
  // model's status; the returned error is only for an unreadable root.
  absl::Status LoadAll() ABSL_LOCKS_EXCLUDED(load_mu_, mu_);

  // (Re)loads one model from disk. Returns the model's failure if no version
  // became READY (the status is recorded either way). NOT_FOUND if there is no
  // such directory.
  absl::Status Load(const std::string& name) ABSL_LOCKS_EXCLUDED(load_mu_, mu_);

  // Unloads every version of a model. NOT_FOUND if it is not known.
  absl::Status Unload(const std::string& name)
      ABSL_LOCKS_EXCLUDED(load_mu_, mu_);

  std::vector<ModelStatus> List() const ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<ModelStatus> Status(const std::string& name) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // A READY version: the given one, or the highest READY one. NOT_FOUND for an
  // unknown model or version; UNAVAILABLE (with the reason) for one that is not
  // READY.
  absl::StatusOr<std::shared_ptr<const LoadedModel>> Get(
      const std::string& name,
      std::optional<int64_t> version = std::nullopt) const
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Entry {
    ModelStatus status;
    std::map<int64_t, std::shared_ptr<const LoadedModel>> ready;
  };

  Entry LoadFromDisk(const std::string& name) const;
  absl::StatusOr<ModelOptions> ReadOptions(const std::string& name,
                                           ModelStatus* status) const;
  absl::StatusOr<std::shared_ptr<const LoadedModel>> LoadVersion(
      const ModelOptions& options, int64_t version) const;
  int ThreadsPerInstance(const ModelOptions& options) const;
  int TotalThreads() const;
  // Gives every instance group with count 0 its count (see
  // InstanceGroupOptions::count).
  void ResolveInstanceCounts(ModelOptions* options) const;

  const std::filesystem::path root_;
  const EngineRegistry* const engines_;
  const RepositoryOptions options_;

  Mutex load_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // serialises loads and unloads
  mutable Mutex mu_;
  std::map<std::string, Entry> models_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ferry

#endif  // FERRY_REPOSITORY_MODEL_REPOSITORY_H_
