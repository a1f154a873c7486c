// SPDX-License-Identifier: Apache-2.0
// ModelOptions: a model's configuration as plain structs with defaults and
// units in the names. Produced at the edge by ParseModelConfig() (config.pbtxt,
// Triton's format); nothing downstream (engines, batcher, repository) sees a
// proto. Plain values.
#ifndef FERRY_CONFIG_MODEL_OPTIONS_H_
#define FERRY_CONFIG_MODEL_OPTIONS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/data_type.h"

namespace ferry {

// One input or output tensor as the config declares it. `dims` excludes the
// batch dimension when the model batches (max_batch_size > 0); -1 marks a
// variable dimension.
struct TensorSpec {
  std::string name;
  DataType dtype = DataType::kFp32;
  std::vector<int64_t> dims;
  bool optional = false;  // inputs only
  // Inputs only: Triton's allow_ragged_batch, the config's permission to batch
  // requests whose shapes differ in this input. Carried as written; the batcher
  // decides its use.
  bool allow_ragged_batch = false;

  bool operator==(const TensorSpec&) const = default;
};

enum class TimeoutAction { kReject, kDelay };

struct QueuePolicyOptions {
  TimeoutAction timeout_action = TimeoutAction::kReject;
  uint64_t default_timeout_us = 0;  // 0: no timeout
  bool allow_timeout_override = false;
  // 0: unbounded (the batcher applies a safety cap).
  uint32_t max_queue_size = 0;

  bool operator==(const QueuePolicyOptions&) const = default;
};

struct DynamicBatchingOptions {
  bool enabled = false;  // dynamic_batching {} present in the config
  std::vector<int32_t> preferred_batch_sizes;
  uint64_t max_queue_delay_us = 0;
  bool preserve_ordering = false;
  uint32_t priority_levels = 0;  // 0: one level
  uint32_t default_priority_level = 0;
  QueuePolicyOptions default_queue_policy;
  std::map<uint32_t, QueuePolicyOptions> priority_queue_policies;

  bool operator==(const DynamicBatchingOptions&) const = default;
};

enum class DeviceKind { kAuto, kCpu, kGpu };

struct InstanceGroupOptions {
  std::string name;
  // 0 (or no instance_group at all): the repository picks when it loads the
  // model — one CPU instance per core, one intra-op thread each, which
  // measured 1.4-4.9x the throughput of one instance with every core
  // (bench/RESULTS.md, "engine choices"); one instance per GPU group.
  int32_t count = 1;
  DeviceKind kind = DeviceKind::kAuto;
  std::vector<int32_t> gpus;

  bool operator==(const InstanceGroupOptions&) const = default;
};

struct VersionPolicyOptions {
  enum class Kind { kLatest, kAll, kSpecific };
  Kind kind = Kind::kLatest;
  uint32_t num_versions = 1;      // kLatest
  std::vector<int64_t> versions;  // kSpecific

  bool operator==(const VersionPolicyOptions&) const = default;
};

struct WarmupInput {
  DataType dtype = DataType::kFp32;
  std::vector<int64_t> dims;  // without the batch dimension
  enum class Fill { kZero, kRandom, kFile };
  Fill fill = Fill::kZero;
  std::string file;  // kFile: path relative to <model>/warmup/

  bool operator==(const WarmupInput&) const = default;
};

struct WarmupOptions {
  std::string name;
  uint32_t batch_size = 1;
  uint32_t count = 1;
  std::map<std::string, WarmupInput> inputs;

  bool operator==(const WarmupOptions&) const = default;
};

struct ModelOptions {
  std::string name;
  // Canonical engine name: "pytorch_libtorch", "xgboost", "identity". A Triton
  // FIL config (backend: "fil") becomes "xgboost" with the FIL parameters kept.
  std::string platform;
  std::string backend;         // as written in the config, if any
  int32_t max_batch_size = 0;  // 0: the model does not batch
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  DynamicBatchingOptions dynamic_batching;
  // At least one after parsing.
  std::vector<InstanceGroupOptions> instance_groups;
  VersionPolicyOptions version_policy;
  std::vector<WarmupOptions> warmups;
  std::map<std::string, std::string> parameters;
  std::string default_model_filename;

  bool operator==(const ModelOptions&) const = default;

  // Total engine instances over all instance groups.
  int32_t instance_count() const {
    int32_t n = 0;
    for (const auto& g : instance_groups) n += g.count;
    return n;
  }
  // A parameter's value, if set.
  std::optional<std::string> parameter(const std::string& key) const {
    auto it = parameters.find(key);
    if (it == parameters.end()) return std::nullopt;
    return it->second;
  }
};

}  // namespace ferry

#endif  // FERRY_CONFIG_MODEL_OPTIONS_H_
