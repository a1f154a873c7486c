// SPDX-License-Identifier: Apache-2.0
#include "repository/model_repository.h"

#include <algorithm>
#include <charconv>
#include <system_error>
#include <thread>

#include "absl/strings/str_cat.h"
#include "config/model_config.h"
#include "core/logging.h"
#include "core/status_macros.h"
#include "repository/version_policy.h"
#include "repository/warmup.h"

namespace ferry {
namespace {

namespace fs = std::filesystem;

// File names that identify an engine when a model has no config.pbtxt.
struct PlatformHint {
  const char* file;
  const char* platform;
};
constexpr PlatformHint kPlatformHints[] = {
    {"model.pt", "pytorch_libtorch"}, {"model.json", "xgboost"},
    {"model.ubj", "xgboost"},         {"model.bin", "xgboost"},
    {"xgboost.json", "xgboost"},      {"xgboost.ubj", "xgboost"},
    {"xgboost.model", "xgboost"},
};

absl::StatusOr<std::string> GuessPlatform(
    const fs::path& model_dir, const std::vector<int64_t>& versions) {
  std::error_code ec;
  for (auto v = versions.rbegin(); v != versions.rend(); ++v) {
    for (const PlatformHint& hint : kPlatformHints) {
      if (fs::exists(model_dir / std::to_string(*v) / hint.file, ec))
        return hint.platform;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("no config.pbtxt, and no version directory holds a model "
                   "file whose engine can "
                   "derive a config (model.pt, model.json, model.ubj, "
                   "model.bin, xgboost.*) in ",
                   model_dir.string()));
}

std::optional<int> IntParameter(const ModelOptions& options, const char* key) {
  std::optional<std::string> text = options.parameter(key);
  if (!text) return std::nullopt;
  int v = 0;
  auto [ptr, ec] =
      std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || ptr != text->data() + text->size() || v <= 0)
    return std::nullopt;
  return v;
}

}  // namespace

absl::string_view ToString(ModelState state) {
  switch (state) {
    case ModelState::kLoading:
      return "LOADING";
    case ModelState::kReady:
      return "READY";
    case ModelState::kUnavailable:
      return "UNAVAILABLE";
    case ModelState::kUnloaded:
      return "UNLOADED";
  }
  return "UNKNOWN";
}

bool ModelStatus::ready() const {
  return std::any_of(versions.begin(), versions.end(),
                     [](const ModelVersionStatus& v) {
                       return v.state == ModelState::kReady;
                     });
}

LoadedModel::LoadedModel(ModelOptions options, int64_t version,
                         fs::path version_dir,
                         std::vector<std::unique_ptr<Engine>> instances)
    : options_(std::move(options)),
      version_(version),
      version_dir_(std::move(version_dir)),
      instances_(std::move(instances)) {}

ModelRepository::ModelRepository(fs::path root, const EngineRegistry* engines,
                                 RepositoryOptions options)
    : root_(std::move(root)), engines_(engines), options_(options) {}

absl::StatusOr<std::vector<std::string>> ModelRepository::ScanModelNames()
    const {
  std::error_code ec;
  fs::directory_iterator it(root_, ec);
  if (ec) {
    return absl::NotFoundError(absl::StrCat(
        "cannot read model repository ", root_.string(), ": ", ec.message()));
  }
  std::vector<std::string> names;
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.' || !entry.is_directory(ec)) continue;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

absl::Status ModelRepository::LoadAll() {
  ASSIGN_OR_RETURN(std::vector<std::string> names, ScanModelNames());
  for (const std::string& name : names) {
    absl::Status s = Load(name);
    if (!s.ok())
      FERRY_LOG(kWarning, "model '", name, "' is not available: ", s.message());
  }
  return absl::OkStatus();
}

absl::Status ModelRepository::Load(const std::string& name) {
  MutexLock load_lock(&load_mu_);
  std::error_code ec;
  if (name.empty() || name.find('/') != std::string::npos || name[0] == '.' ||
      !fs::is_directory(root_ / name, ec)) {
    return absl::NotFoundError(absl::StrCat(
        "model '", name, "' has no directory in ", root_.string()));
  }
  {
    MutexLock lock(&mu_);
    Entry& e = models_[name];
    e.status.name = name;
    for (ModelVersionStatus& v : e.status.versions)
      v.state = ModelState::kLoading;
  }
  Entry loaded = LoadFromDisk(name);
  const bool ready = loaded.status.ready();
  std::string why = loaded.status.reason;
  if (why.empty()) {
    for (const ModelVersionStatus& v : loaded.status.versions) {
      if (v.state != ModelState::kReady) {
        absl::StrAppend(&why, why.empty() ? "" : "; ", "version ", v.version,
                        ": ", v.reason);
      }
    }
  }
  {
    MutexLock lock(&mu_);
    models_[name] =
        std::move(loaded);  // old instances die when their last user lets go
  }
  if (!ready) {
    return absl::UnavailableError(
        absl::StrCat("model '", name, "' failed to load: ", why));
  }
  return absl::OkStatus();
}

absl::Status ModelRepository::Unload(const std::string& name) {
  MutexLock load_lock(&load_mu_);
  MutexLock lock(&mu_);
  auto it = models_.find(name);
  if (it == models_.end()) {
    return absl::NotFoundError(
        absl::StrCat("model '", name, "' is not loaded"));
  }
  it->second.ready.clear();
  for (ModelVersionStatus& v : it->second.status.versions) {
    v.state = ModelState::kUnloaded;
    v.reason = "unloaded";
  }
  return absl::OkStatus();
}

std::vector<ModelStatus> ModelRepository::List() const {
  MutexLock lock(&mu_);
  std::vector<ModelStatus> out;
  for (const auto& [name, entry] : models_) out.push_back(entry.status);
  return out;
}

absl::StatusOr<ModelStatus> ModelRepository::Status(
    const std::string& name) const {
  MutexLock lock(&mu_);
  auto it = models_.find(name);
  if (it == models_.end()) {
    return absl::NotFoundError(absl::StrCat("unknown model '", name, "'"));
  }
  return it->second.status;
}

absl::StatusOr<std::shared_ptr<const LoadedModel>> ModelRepository::Get(
    const std::string& name, std::optional<int64_t> version) const {
  MutexLock lock(&mu_);
  auto it = models_.find(name);
  if (it == models_.end()) {
    return absl::NotFoundError(absl::StrCat("unknown model '", name, "'"));
  }
  const Entry& e = it->second;
  if (!version) {
    if (e.ready.empty()) {
      return absl::UnavailableError(absl::StrCat(
          "model '", name, "' has no READY version",
          e.status.reason.empty() ? "" : absl::StrCat(": ", e.status.reason)));
    }
    return e.ready.rbegin()->second;
  }
  auto r = e.ready.find(*version);
  if (r != e.ready.end()) return r->second;
  for (const ModelVersionStatus& v : e.status.versions) {
    if (v.version == *version) {
      return absl::UnavailableError(absl::StrCat(
          "model '", name, "' version ", *version, " is ", ToString(v.state),
          v.reason.empty() ? "" : ": ", v.reason));
    }
  }
  return absl::NotFoundError(
      absl::StrCat("model '", name, "' has no version ", *version));
}

absl::StatusOr<ModelOptions> ModelRepository::ReadOptions(
    const std::string& name, ModelStatus* status) const {
  const fs::path model_dir = root_ / name;
  ASSIGN_OR_RETURN(std::vector<int64_t> versions,
                   ListVersionDirectories(model_dir));
  const fs::path config_path = model_dir / "config.pbtxt";
  std::error_code ec;
  ModelOptions options;
  if (fs::exists(config_path, ec)) {
    ASSIGN_OR_RETURN(ParsedModelConfig parsed,
                     LoadModelConfigFile(config_path, name));
    status->warnings = std::move(parsed.warnings);
    options = std::move(parsed.options);
  } else {
    options.name = name;
    ASSIGN_OR_RETURN(options.platform, GuessPlatform(model_dir, versions));
  }
  if (options.instance_groups.empty()) {
    InstanceGroupOptions any;
    any.count = 0;
    options.instance_groups.push_back(any);
  }
  ASSIGN_OR_RETURN(const EngineFactory* factory,
                   engines_->Find(options.platform));
  if (options.inputs.empty() || options.outputs.empty()) {
    if (versions.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the config lists no input or output, and there is no "
                       "version directory to "
                       "derive them from in ",
                       model_dir.string()));
    }
    RETURN_IF_ERROR(factory->AutoComplete(
        model_dir / std::to_string(versions.back()), &options));
  }
  RETURN_IF_ERROR(ValidateModelOptions(options));
  ResolveInstanceCounts(&options);
  return options;
}

ModelRepository::Entry ModelRepository::LoadFromDisk(
    const std::string& name) const {
  Entry entry;
  entry.status.name = name;
  absl::StatusOr<ModelOptions> options = ReadOptions(name, &entry.status);
  for (const std::string& w : entry.status.warnings) {
    FERRY_LOG(kWarning, "model '", name, "': ", w);
  }
  if (!options.ok()) {
    entry.status.reason = std::string(options.status().message());
    return entry;
  }
  entry.status.options = *options;
  absl::StatusOr<std::vector<int64_t>> available =
      ListVersionDirectories(root_ / name);
  if (!available.ok()) {
    entry.status.reason = std::string(available.status().message());
    return entry;
  }
  VersionSelection selection =
      SelectVersions(options->version_policy, *available);
  if (selection.selected.empty() && selection.missing.empty()) {
    entry.status.reason =
        absl::StrCat("no version directory (a positive integer) in ",
                     (root_ / name).string());
    return entry;
  }
  for (int64_t v : selection.missing) {
    entry.status.versions.push_back(
        {v, ModelState::kUnavailable,
         "version_policy names it but its directory is missing"});
  }
  for (int64_t v : selection.selected) {
    absl::StatusOr<std::shared_ptr<const LoadedModel>> loaded =
        LoadVersion(*options, v);
    if (loaded.ok()) {
      entry.ready.emplace(v, *std::move(loaded));
      entry.status.versions.push_back({v, ModelState::kReady, ""});
    } else {
      entry.status.versions.push_back({v, ModelState::kUnavailable,
                                       std::string(loaded.status().message())});
    }
  }
  std::sort(entry.status.versions.begin(), entry.status.versions.end(),
            [](const auto& a, const auto& b) { return a.version < b.version; });
  return entry;
}

absl::StatusOr<std::shared_ptr<const LoadedModel>> ModelRepository::LoadVersion(
    const ModelOptions& options, int64_t version) const {
  ASSIGN_OR_RETURN(const EngineFactory* factory,
                   engines_->Find(options.platform));
  const fs::path model_dir = root_ / options.name;
  EngineLoadContext context;
  context.version_dir = model_dir / std::to_string(version);
  context.options = options;
  context.intra_op_threads = ThreadsPerInstance(options);
  // Instances load and warm up side by side (EngineFactory::Create may be
  // called from several threads): with one core per instance, N instances of
  // a deep model are ready in the time of one.
  const int n = options.instance_count();
  std::vector<absl::StatusOr<std::unique_ptr<Engine>>> made;
  for (int i = 0; i < n; ++i)
    made.emplace_back(absl::UnknownError("not loaded"));
  auto load_one = [&](int i) {
    EngineLoadContext c = context;
    c.instance_index = i;
    absl::StatusOr<std::unique_ptr<Engine>> engine = factory->Create(c);
    if (engine.ok() && options_.warmup) {
      if (absl::Status w = WarmUp(**engine, options, model_dir); !w.ok()) {
        engine = w;
      }
    }
    made[i] = std::move(engine);
  };
  if (n == 1) {
    load_one(0);
  } else {
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) threads.emplace_back(load_one, i);
    for (std::thread& t : threads) t.join();
  }
  std::vector<std::unique_ptr<Engine>> instances;
  for (int i = 0; i < n; ++i) {
    if (!made[i].ok()) return made[i].status();
    instances.push_back(*std::move(made[i]));
  }
  FERRY_LOG(kInfo, "model '", options.name, "' version ", version, " READY (",
            instances.size(), " instance(s) x ", context.intra_op_threads,
            " thread(s))");
  return std::make_shared<const LoadedModel>(
      options, version, context.version_dir, std::move(instances));
}

int ModelRepository::TotalThreads() const {
  if (options_.total_threads > 0) return options_.total_threads;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int ModelRepository::ThreadsPerInstance(const ModelOptions& options) const {
  if (auto n = IntParameter(options, "intra_op_threads")) return *n;
  if (auto n = IntParameter(options, "INTRA_OP_THREAD_COUNT")) return *n;
  return std::max(1, TotalThreads() / std::max(1, options.instance_count()));
}

void ModelRepository::ResolveInstanceCounts(ModelOptions* options) const {
  // Threads one instance asks for: the config's, else one.
  int per_instance = 1;
  if (auto n = IntParameter(*options, "intra_op_threads")) {
    per_instance = *n;
  } else if (auto m = IntParameter(*options, "INTRA_OP_THREAD_COUNT")) {
    per_instance = *m;
  }
  int open_cpu_groups = 0;
  for (const InstanceGroupOptions& g : options->instance_groups) {
    if (g.count == 0 && g.kind != DeviceKind::kGpu) ++open_cpu_groups;
  }
  for (InstanceGroupOptions& g : options->instance_groups) {
    if (g.count != 0) continue;
    g.count = g.kind == DeviceKind::kGpu
                  ? 1
                  : std::max(1, TotalThreads() / per_instance /
                                    std::max(1, open_cpu_groups));
  }
}

}  // namespace ferry
