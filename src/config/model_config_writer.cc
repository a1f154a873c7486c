// SPDX-License-Identifier: Apache-2.0
// ModelOptions back to Triton's ModelConfig proto and config.pbtxt text.
#include <google/protobuf/text_format.h>

#include <string>

#include "config/model_config.h"

namespace ferry {
namespace {

// ----- options → proto
// ------------------------------------------------------------

inference::DataType ToProtoDataType(DataType type) {
  inference::DataType out = inference::TYPE_INVALID;
  inference::DataType_Parse(std::string(ToConfigString(type)), &out);
  return out;
}

void FillQueuePolicy(const QueuePolicyOptions& policy,
                     inference::ModelQueuePolicy* out) {
  out->set_timeout_action(policy.timeout_action == TimeoutAction::kDelay
                              ? inference::ModelQueuePolicy::DELAY
                              : inference::ModelQueuePolicy::REJECT);
  out->set_default_timeout_microseconds(policy.default_timeout_us);
  out->set_allow_timeout_override(policy.allow_timeout_override);
  out->set_max_queue_size(policy.max_queue_size);
}

void FillDynamicBatching(const DynamicBatchingOptions& db,
                         inference::ModelDynamicBatching* out) {
  for (int32_t size : db.preferred_batch_sizes)
    out->add_preferred_batch_size(size);
  out->set_max_queue_delay_microseconds(db.max_queue_delay_us);
  out->set_preserve_ordering(db.preserve_ordering);
  out->set_priority_levels(db.priority_levels);
  out->set_default_priority_level(db.default_priority_level);
  // Leave the default policy unset when it is all defaults, as a config would.
  if (!(db.default_queue_policy == QueuePolicyOptions{})) {
    FillQueuePolicy(db.default_queue_policy,
                    out->mutable_default_queue_policy());
  }
  for (const auto& [level, policy] : db.priority_queue_policies) {
    FillQueuePolicy(policy, &(*out->mutable_priority_queue_policy())[level]);
  }
}

void FillInstanceGroup(const InstanceGroupOptions& group,
                       inference::ModelInstanceGroup* out) {
  out->set_name(group.name);
  out->set_count(group.count);
  switch (group.kind) {
    case DeviceKind::kAuto:
      out->set_kind(inference::ModelInstanceGroup::KIND_AUTO);
      break;
    case DeviceKind::kCpu:
      out->set_kind(inference::ModelInstanceGroup::KIND_CPU);
      break;
    case DeviceKind::kGpu:
      out->set_kind(inference::ModelInstanceGroup::KIND_GPU);
      break;
  }
  for (int32_t gpu : group.gpus) out->add_gpus(gpu);
}

void FillVersionPolicy(const VersionPolicyOptions& policy,
                       inference::ModelVersionPolicy* out) {
  switch (policy.kind) {
    case VersionPolicyOptions::Kind::kLatest:
      out->mutable_latest()->set_num_versions(policy.num_versions);
      break;
    case VersionPolicyOptions::Kind::kAll:
      out->mutable_all();
      break;
    case VersionPolicyOptions::Kind::kSpecific:
      for (int64_t v : policy.versions)
        out->mutable_specific()->add_versions(v);
      out->mutable_specific();  // present even when empty, so the choice
                                // survives
      break;
  }
}

void FillWarmup(const WarmupOptions& warmup, inference::ModelWarmup* out) {
  out->set_name(warmup.name);
  out->set_batch_size(warmup.batch_size);
  out->set_count(warmup.count);
  for (const auto& [name, in] : warmup.inputs) {
    inference::ModelWarmup::Input& pin = (*out->mutable_inputs())[name];
    pin.set_data_type(ToProtoDataType(in.dtype));
    for (int64_t d : in.dims) pin.add_dims(d);
    switch (in.fill) {
      case WarmupInput::Fill::kZero:
        pin.set_zero_data(true);
        break;
      case WarmupInput::Fill::kRandom:
        pin.set_random_data(true);
        break;
      case WarmupInput::Fill::kFile:
        pin.set_input_data_file(in.file);
        break;
    }
  }
}

}  // namespace

inference::ModelConfig ToModelConfigProto(const ModelOptions& options) {
  inference::ModelConfig config;
  config.set_name(options.name);
  // Triton names an engine by platform or by backend; write the platform only
  // where the backend alone would not lead back to it.
  if (options.backend.empty() ||
      CanonicalEngineName(options.backend) != options.platform) {
    config.set_platform(options.platform);
  }
  config.set_backend(options.backend);
  config.set_max_batch_size(options.max_batch_size);
  for (const TensorSpec& spec : options.inputs) {
    inference::ModelInput* in = config.add_input();
    in->set_name(spec.name);
    in->set_data_type(ToProtoDataType(spec.dtype));
    for (int64_t d : spec.dims) in->add_dims(d);
    in->set_optional(spec.optional);
    in->set_allow_ragged_batch(spec.allow_ragged_batch);
  }
  for (const TensorSpec& spec : options.outputs) {
    inference::ModelOutput* out = config.add_output();
    out->set_name(spec.name);
    out->set_data_type(ToProtoDataType(spec.dtype));
    for (int64_t d : spec.dims) out->add_dims(d);
  }
  if (options.dynamic_batching.enabled) {
    FillDynamicBatching(options.dynamic_batching,
                        config.mutable_dynamic_batching());
  }
  for (const InstanceGroupOptions& group : options.instance_groups) {
    FillInstanceGroup(group, config.add_instance_group());
  }
  FillVersionPolicy(options.version_policy, config.mutable_version_policy());
  for (const WarmupOptions& warmup : options.warmups) {
    FillWarmup(warmup, config.add_model_warmup());
  }
  for (const auto& [key, value] : options.parameters) {
    (*config.mutable_parameters())[key].set_string_value(value);
  }
  config.set_default_model_filename(options.default_model_filename);
  return config;
}

std::string ToConfigText(const ModelOptions& options) {
  std::string text;
  google::protobuf::TextFormat::Printer printer;
  printer.PrintToString(ToModelConfigProto(options), &text);
  return text;
}

}  // namespace ferry
