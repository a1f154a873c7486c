// SPDX-License-Identifier: Apache-2.0
#include "repository/model_manager.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "batching/batcher_options.h"
#include "core/logging.h"
#include "core/status_macros.h"

namespace ferry {

struct ModelManager::Served {
  std::shared_ptr<const LoadedModel> model;
  std::unique_ptr<DynamicBatcher> batcher;
  std::atomic<int64_t> last_inference_ns{std::numeric_limits<int64_t>::min()};
};

namespace {

// Keeps the requested outputs, in the order asked; all of them when none was
// named. The names were checked against the config before the request was
// queued, and the batcher checked the engine's outputs against the config.
std::vector<Tensor> SelectOutputs(std::vector<Tensor> outputs,
                                  const std::vector<RequestedOutput>& wanted) {
  if (wanted.empty()) return outputs;
  std::vector<Tensor> selected;
  selected.reserve(wanted.size());
  for (const RequestedOutput& r : wanted) {
    auto it = std::find_if(outputs.begin(), outputs.end(),
                           [&](const Tensor& t) { return t.name() == r.name; });
    if (it != outputs.end()) selected.push_back(std::move(*it));
  }
  return selected;
}

absl::Status CheckRequestedOutputs(const ModelOptions& options,
                                   const std::vector<RequestedOutput>& wanted) {
  for (const RequestedOutput& r : wanted) {
    const bool known =
        std::any_of(options.outputs.begin(), options.outputs.end(),
                    [&](const TensorSpec& s) { return s.name == r.name; });
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("requested output '", r.name,
                       "' is not an output of model '", options.name, "'"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

ModelManager::ModelManager(std::filesystem::path root,
                           const EngineRegistry* engines, Options options)
    : repository_(std::move(root), engines, options.repository),
      options_(options) {}

ModelManager::~ModelManager() { Shutdown(absl::ZeroDuration()); }

absl::Status ModelManager::LoadAll() {
  ASSIGN_OR_RETURN(std::vector<std::string> names,
                   repository_.ScanModelNames());
  for (const std::string& name : names) {
    absl::Status s = Load(name);
    if (!s.ok()) FERRY_LOG(kWarning, s.message());
  }
  MutexLock lock(&mu_);
  loaded_all_ = true;
  return absl::OkStatus();
}

absl::Status ModelManager::Load(const std::string& name) {
  std::vector<std::shared_ptr<Served>> retired;
  absl::Status status;
  {
    MutexLock load_lock(&load_mu_);
    {
      MutexLock lock(&mu_);
      if (shutting_down_)
        return absl::UnavailableError("the server is shutting down");
    }
    status = repository_.Load(name);
    retired = Install(name);
  }
  for (auto& old : retired) old->batcher->Shutdown(options_.unload_grace);
  return status;
}

absl::Status ModelManager::Unload(const std::string& name) {
  std::vector<std::shared_ptr<Served>> retired;
  {
    MutexLock load_lock(&load_mu_);
    RETURN_IF_ERROR(repository_.Unload(name));
    MutexLock lock(&mu_);
    auto it = served_.find(name);
    if (it != served_.end()) {
      for (auto& [version, served] : it->second) retired.push_back(served);
      served_.erase(it);
    }
  }
  for (auto& old : retired) old->batcher->Shutdown(options_.unload_grace);
  return absl::OkStatus();
}

std::vector<std::shared_ptr<ModelManager::Served>> ModelManager::Install(
    const std::string& name) {
  std::map<int64_t, std::shared_ptr<Served>> fresh;
  absl::StatusOr<ModelStatus> status = repository_.Status(name);
  if (status.ok()) {
    for (const ModelVersionStatus& v : status->versions) {
      if (v.state != ModelState::kReady) continue;
      absl::StatusOr<std::shared_ptr<const LoadedModel>> model =
          repository_.Get(name, v.version);
      if (!model.ok()) continue;
      absl::StatusOr<BatcherOptions> batcher_options =
          BatcherOptionsFromModel((*model)->options());
      if (!batcher_options.ok()) {
        FERRY_LOG(kError, "model '", name, "' version ", v.version, ": ",
                  batcher_options.status().message());
        continue;
      }
      batcher_options->offline_background = options_.offline_background;
      std::vector<Engine*> instances;
      for (int i = 0; i < (*model)->instance_count(); ++i)
        instances.push_back(&(*model)->instance(i));
      absl::StatusOr<std::unique_ptr<DynamicBatcher>> batcher =
          DynamicBatcher::Create(*model, (*model)->options(),
                                 std::move(instances),
                                 *std::move(batcher_options), options_.clock);
      if (!batcher.ok()) {
        FERRY_LOG(kError, "model '", name, "' version ", v.version, ": ",
                  batcher.status().message());
        continue;
      }
      auto served = std::make_shared<Served>();
      served->model = *model;
      served->batcher = *std::move(batcher);
      fresh.emplace(v.version, std::move(served));
    }
  }
  std::vector<std::shared_ptr<Served>> retired;
  MutexLock lock(&mu_);
  auto it = served_.find(name);
  if (it != served_.end()) {
    for (auto& [version, served] : it->second) retired.push_back(served);
  }
  if (fresh.empty()) {
    served_.erase(name);
  } else {
    served_[name] = std::move(fresh);
  }
  return retired;
}

bool ModelManager::Live() const {
  MutexLock lock(&mu_);
  return !shutting_down_;
}

bool ModelManager::Ready() const {
  {
    MutexLock lock(&mu_);
    if (!loaded_all_ || shutting_down_) return false;
  }
  for (const ModelStatus& m : repository_.List()) {
    if (!m.ready()) return false;
  }
  return true;
}

absl::StatusOr<bool> ModelManager::ModelReady(
    const std::string& name, std::optional<int64_t> version) const {
  absl::StatusOr<std::shared_ptr<Served>> served = Route(name, version);
  if (served.ok()) return true;
  if (served.status().code() == absl::StatusCode::kNotFound)
    return served.status();
  return false;
}

absl::StatusOr<std::shared_ptr<ModelManager::Served>> ModelManager::Route(
    const std::string& name, std::optional<int64_t> version) const {
  {
    MutexLock lock(&mu_);
    if (shutting_down_)
      return absl::UnavailableError("the server is shutting down");
    auto it = served_.find(name);
    if (it != served_.end() && !it->second.empty()) {
      if (!version) return it->second.rbegin()->second;
      auto v = it->second.find(*version);
      if (v != it->second.end()) return v->second;
    }
  }
  // Not served: let the repository say why (unknown, or not READY and the
  // reason).
  ASSIGN_OR_RETURN(std::shared_ptr<const LoadedModel> model,
                   repository_.Get(name, version));
  return absl::UnavailableError(absl::StrCat(
      "model '", name, "' version ", model->version(), " is not serving"));
}

absl::StatusOr<ModelVersionInfo> ModelManager::Find(
    const std::string& name, std::optional<int64_t> version) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Served> served, Route(name, version));
  return ModelVersionInfo{served->model->options(), served->model->version()};
}

void ModelManager::Infer(const std::string& name,
                         std::optional<int64_t> version,
                         InferenceRequest request, InferCallback done) {
  absl::StatusOr<std::shared_ptr<Served>> routed = Route(name, version);
  if (!routed.ok()) {
    done(routed.status());
    return;
  }
  std::shared_ptr<Served> served = *std::move(routed);
  const ModelOptions& options = served->model->options();
  if (absl::Status s = CheckRequestedOutputs(options, request.outputs);
      !s.ok()) {
    done(s);
    return;
  }
  auto r = std::make_unique<Request>();
  r->id = request.id;
  r->inputs = std::move(request.inputs);
  if (request.priority) {
    if (*request.priority > std::numeric_limits<uint32_t>::max()) {
      done(absl::InvalidArgumentError(absl::StrCat(
          "parameters.priority ", *request.priority, " is out of range")));
      return;
    }
    r->priority = static_cast<uint32_t>(*request.priority);
  }
  if (request.timeout_us) {
    r->timeout = absl::Microseconds(static_cast<int64_t>(std::min<uint64_t>(
        *request.timeout_us, std::numeric_limits<int64_t>::max())));
  }
  r->deadline = request.deadline;
  r->offline = request.offline;
  r->done = [served, clock = options_.clock, done = std::move(done),
             id = std::move(request.id), wanted = std::move(request.outputs)](
                absl::StatusOr<std::vector<Tensor>> outputs) mutable {
    served->last_inference_ns.store(absl::ToUnixNanos(clock->Now()),
                                    std::memory_order_relaxed);
    if (!outputs.ok()) {
      done(outputs.status());
      return;
    }
    InferenceResponse response;
    response.model_name = served->model->name();
    response.model_version = std::to_string(served->model->version());
    response.id = std::move(id);
    response.outputs = SelectOutputs(*std::move(outputs), wanted);
    done(std::move(response));
  };
  // On failure the request, callback included, is still ours: answer through
  // it.
  if (absl::Status enqueued = served->batcher->Enqueue(&r); !enqueued.ok()) {
    r->done(enqueued);
  }
}

absl::StatusOr<std::vector<ModelVersionStatistics>> ModelManager::Statistics(
    std::optional<std::string> name, std::optional<int64_t> version) const {
  std::vector<std::pair<std::string, std::shared_ptr<Served>>> selected;
  {
    MutexLock lock(&mu_);
    for (const auto& [model, versions] : served_) {
      if (name && model != *name) continue;
      for (const auto& [v, served] : versions) {
        if (version && v != *version) continue;
        selected.emplace_back(model, served);
      }
    }
  }
  if (name && selected.empty()) {
    // Known but not serving: no statistics; unknown: NOT_FOUND.
    RETURN_IF_ERROR(repository_.Status(*name).status());
    if (version) {
      return absl::NotFoundError(absl::StrCat(
          "model '", *name, "' has no serving version ", *version));
    }
  }
  std::vector<ModelVersionStatistics> out;
  for (const auto& [model, served] : selected) {
    ModelVersionStatistics s;
    s.name = model;
    s.version = served->model->version();
    s.stats = served->batcher->stats();
    const int64_t last =
        served->last_inference_ns.load(std::memory_order_relaxed);
    if (last != std::numeric_limits<int64_t>::min())
      s.last_inference = absl::FromUnixNanos(last);
    out.push_back(std::move(s));
  }
  return out;
}

void ModelManager::Shutdown(absl::Duration grace) {
  std::vector<std::shared_ptr<Served>> all;
  {
    MutexLock load_lock(&load_mu_);
    MutexLock lock(&mu_);
    if (shutting_down_ && served_.empty()) return;
    shutting_down_ = true;
    for (auto& [name, versions] : served_) {
      for (auto& [v, served] : versions) all.push_back(served);
    }
    served_.clear();
  }
  // Every batcher drains at the same time, within the one grace period.
  std::vector<std::thread> drains;
  for (auto& served : all) {
    drains.emplace_back([served, grace] { served->batcher->Shutdown(grace); });
  }
  for (std::thread& t : drains) t.join();
}

}  // namespace ferry
