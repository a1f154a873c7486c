// SPDX-License-Identifier: Apache-2.0
// ModelManager: the serving side of a model repository. It loads models through
// ModelRepository and puts a DynamicBatcher in front of every READY version,
// routes inference requests to the right batcher, reloads and unloads models
// without dropping requests in flight, and reports readiness and statistics.
// The HTTP and gRPC front-ends and the offline job runner all go through it.
//
// Thread-safety: safe for concurrent use. Infer() never blocks: it enqueues and
// returns; the callback runs later on an engine instance thread or the
// batcher's scheduler thread (or at once, on the calling thread, for an
// immediate error). Callbacks must be cheap (post back to the caller's
// executor).
#ifndef FERRY_REPOSITORY_MODEL_MANAGER_H_
#define FERRY_REPOSITORY_MODEL_MANAGER_H_

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "batching/batch_stats.h"
#include "batching/dynamic_batcher.h"
#include "core/clock.h"
#include "core/inference.h"
#include "core/mutex.h"
#include "repository/model_repository.h"

namespace ferry {

// One READY model version as the front-ends see it.
struct ModelVersionInfo {
  ModelOptions options;
  int64_t version = 0;
};

struct ModelVersionStatistics {
  std::string name;
  int64_t version = 0;
  BatcherStatsSnapshot stats;
  absl::Time last_inference = absl::InfinitePast();  // InfinitePast: never
};

class ModelManager {
 public:
  struct Options {
    RepositoryOptions repository;
    Clock* clock = RealClock::Get();
    // How long an unload or reload lets queued requests of the old version
    // finish.
    absl::Duration unload_grace = absl::Seconds(30);
    // BatcherOptions::offline_background for every model.
    bool offline_background = true;
  };

  ModelManager(std::filesystem::path root, const EngineRegistry* engines,
               Options options);
  ~ModelManager();  // Shutdown(absl::ZeroDuration()) if not done

  ModelManager(const ModelManager&) = delete;
  ModelManager& operator=(const ModelManager&) = delete;

  // Loads every model in the repository; failures stay in each model's status.
  // Error only for an unreadable repository.
  absl::Status LoadAll() ABSL_LOCKS_EXCLUDED(mu_);
  // (Re)loads one model: new versions start serving, then the old batchers
  // drain.
  absl::Status Load(const std::string& name) ABSL_LOCKS_EXCLUDED(mu_);
  // Stops serving a model; queued requests finish (up to unload_grace).
  absl::Status Unload(const std::string& name) ABSL_LOCKS_EXCLUDED(mu_);

  // Live: the process serves requests (false once Shutdown began).
  bool Live() const ABSL_LOCKS_EXCLUDED(mu_);
  // Ready: LoadAll finished, every model has a READY version, not shutting
  // down.
  bool Ready() const ABSL_LOCKS_EXCLUDED(mu_);
  // Whether a model (version) can serve: NOT_FOUND for an unknown one.
  absl::StatusOr<bool> ModelReady(const std::string& name,
                                  std::optional<int64_t> version) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // The version that serves `name` (the given one, or the highest READY):
  // NOT_FOUND for an unknown model or version, UNAVAILABLE with the reason for
  // one not READY.
  absl::StatusOr<ModelVersionInfo> Find(const std::string& name,
                                        std::optional<int64_t> version) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // Every known model's status (repository index); ScanModelNames adds the ones
  // on disk that were never loaded.
  std::vector<ModelStatus> List() const { return repository_.List(); }
  absl::StatusOr<std::vector<std::string>> ScanModelNames() const {
    return repository_.ScanModelNames();
  }

  using InferCallback =
      absl::AnyInvocable<void(absl::StatusOr<InferenceResponse>)>;
  // Validates `request` against the model, enqueues it with its priority and
  // timeout, and calls `done` exactly once with the response (the requested
  // outputs, or all) or the error: NOT_FOUND (model/version), INVALID_ARGUMENT
  // (inputs, outputs, priority), UNAVAILABLE (queue full, not ready, shutting
  // down), DEADLINE_EXCEEDED (queue timeout), or the engine's error.
  void Infer(const std::string& name, std::optional<int64_t> version,
             InferenceRequest request, InferCallback done)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Statistics of every serving version, or of one model (and version).
  // NOT_FOUND for an unknown model.
  absl::StatusOr<std::vector<ModelVersionStatistics>> Statistics(
      std::optional<std::string> name = std::nullopt,
      std::optional<int64_t> version = std::nullopt) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // Stops accepting (Infer answers UNAVAILABLE), lets queued and running
  // requests finish for up to `grace`, rejects the rest with UNAVAILABLE, and
  // stops every batcher.
  void Shutdown(absl::Duration grace) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Served;  // a READY version and its batcher

  // Builds batchers for the READY versions of `name` and swaps them in; returns
  // the batchers they replace, for the caller to drain outside the lock.
  std::vector<std::shared_ptr<Served>> Install(const std::string& name)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::shared_ptr<Served>> Route(
      const std::string& name, std::optional<int64_t> version) const
      ABSL_LOCKS_EXCLUDED(mu_);

  ModelRepository repository_;
  const Options options_;

  Mutex load_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // serialises Load/Unload/LoadAll
  mutable Mutex mu_;
  // model name → version → served version.
  std::map<std::string, std::map<int64_t, std::shared_ptr<Served>>> served_
      ABSL_GUARDED_BY(mu_);
  bool loaded_all_ ABSL_GUARDED_BY(mu_) = false;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace ferry

#endif  // FERRY_REPOSITORY_MODEL_MANAGER_H_
