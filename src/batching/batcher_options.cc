// SPDX-License-Identifier: Apache-2.0
#include "batching/batcher_options.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace ferry {
namespace {

template <typename T>
absl::StatusOr<std::optional<T>> NumberParameter(const ModelOptions& model,
                                                 const char* key) {
  std::optional<std::string> text = model.parameter(key);
  if (!text) return std::nullopt;
  T value{};
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end || value < T{0}) {
    return absl::InvalidArgumentError(
        absl::StrCat("model '", model.name, "': parameters.", key, " is \"",
                     *text, "\"; expected a non-negative number"));
  }
  return value;
}

absl::StatusOr<std::optional<bool>> BoolParameter(const ModelOptions& model,
                                                  const char* key) {
  std::optional<std::string> text = model.parameter(key);
  if (!text) return std::nullopt;
  if (*text == "true" || *text == "1") return true;
  if (*text == "false" || *text == "0") return false;
  return absl::InvalidArgumentError(
      absl::StrCat("model '", model.name, "': parameters.", key, " is \"",
                   *text, "\"; expected true or false"));
}

LevelQueueOptions FromQueuePolicy(const QueuePolicyOptions& q,
                                  uint32_t default_max) {
  LevelQueueOptions out;
  out.timeout_action = q.timeout_action;
  out.default_timeout =
      absl::Microseconds(static_cast<int64_t>(q.default_timeout_us));
  out.allow_timeout_override = q.allow_timeout_override;
  out.max_queue_size = q.max_queue_size > 0 ? q.max_queue_size : default_max;
  return out;
}

// The fewest bytes one row of a request can hold: every required input's
// fixed-size elements (a -1 dim may be empty, so such an input counts 0; a
// BYTES element at least its 4-byte length prefix).
size_t MinRowBytes(const ModelOptions& model) {
  size_t total = 0;
  for (const TensorSpec& spec : model.inputs) {
    if (spec.optional) continue;
    size_t elements = 1;
    for (int64_t d : spec.dims) elements *= d < 0 ? 0 : static_cast<size_t>(d);
    total += elements * (IsFixedSize(spec.dtype) ? ByteSize(spec.dtype) : 4);
  }
  return total;
}

}  // namespace

absl::StatusOr<BatcherOptions> BatcherOptionsFromModel(
    const ModelOptions& model) {
  BatcherOptions out;
  const DynamicBatchingOptions& db = model.dynamic_batching;
  out.batched = model.max_batch_size > 0;
  BatchPolicyOptions& p = out.policy;
  p.max_batch_rows = std::max<int64_t>(1, model.max_batch_size);
  p.dynamic_batching = db.enabled && out.batched;
  p.preferred_batch_sizes.assign(db.preferred_batch_sizes.begin(),
                                 db.preferred_batch_sizes.end());
  std::sort(p.preferred_batch_sizes.begin(), p.preferred_batch_sizes.end());
  p.max_queue_delay =
      absl::Microseconds(static_cast<int64_t>(db.max_queue_delay_us));
  p.preserve_ordering = db.preserve_ordering;

  ASSIGN_OR_RETURN(std::optional<uint64_t> max_bytes,
                   NumberParameter<uint64_t>(model, "max_batch_bytes"));
  p.max_batch_bytes = max_bytes.value_or(0);
  if (out.batched && p.max_batch_bytes > 0) {
    const size_t row = MinRowBytes(model);
    if (p.max_batch_bytes < row) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model '", model.name, "': parameters.max_batch_bytes is ",
          p.max_batch_bytes, ", less than one row of input (", row,
          " bytes); no request could run"));
    }
  }
  ASSIGN_OR_RETURN(std::optional<int64_t> aging_us,
                   NumberParameter<int64_t>(model, "aging_interval_us"));
  if (aging_us) p.aging_interval = absl::Microseconds(*aging_us);
  ASSIGN_OR_RETURN(std::optional<int> aging_levels,
                   NumberParameter<int>(model, "max_aging_levels"));
  if (aging_levels) p.max_aging_levels = *aging_levels;
  ASSIGN_OR_RETURN(std::optional<bool> deadline_aware,
                   BoolParameter(model, "deadline_aware"));
  if (deadline_aware) p.deadline_aware = *deadline_aware;
  ASSIGN_OR_RETURN(std::optional<double> waste,
                   NumberParameter<double>(model, "max_padding_waste"));
  if (waste) p.max_padding_waste = *waste;
  ASSIGN_OR_RETURN(std::optional<uint32_t> default_max,
                   NumberParameter<uint32_t>(model, "max_queue_size_default"));

  out.priority_levels = std::max<int>(1, static_cast<int>(db.priority_levels));
  out.default_level = db.default_priority_level > 0
                          ? static_cast<int>(db.default_priority_level) - 1
                          : 0;
  const uint32_t queue_cap = default_max.value_or(65536);
  for (int level = 0; level < out.priority_levels; ++level) {
    auto it = db.priority_queue_policies.find(static_cast<uint32_t>(level + 1));
    out.levels.push_back(FromQueuePolicy(it != db.priority_queue_policies.end()
                                             ? it->second
                                             : db.default_queue_policy,
                                         queue_cap));
  }
  // The offline level: below every online level, no timeout, its own bound.
  out.offline_level = out.priority_levels;
  p.offline_level = out.offline_level;
  ASSIGN_OR_RETURN(std::optional<int64_t> offline_rows,
                   NumberParameter<int64_t>(model, "max_offline_batch_rows"));
  if (offline_rows && *offline_rows < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", model.name, "': parameters.max_offline_batch_rows ",
        *offline_rows, " must be >= 0 (0: no cap)"));
  }
  p.max_offline_rows =
      offline_rows.value_or(std::min<int64_t>(p.max_batch_rows, 256));
  ASSIGN_OR_RETURN(std::optional<int64_t> budget_us,
                   NumberParameter<int64_t>(model, "offline_batch_budget_us"));
  if (budget_us && *budget_us < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", model.name, "': parameters.offline_batch_budget_us ",
        *budget_us, " must be >= 0 (0: rows only)"));
  }
  p.offline_batch_budget = absl::Microseconds(budget_us.value_or(200));
  ASSIGN_OR_RETURN(
      std::optional<int64_t> reserved,
      NumberParameter<int64_t>(model, "online_reserved_instances"));
  if (reserved && (*reserved < 0 || *reserved > 1024)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", model.name, "': parameters.online_reserved_instances ",
        *reserved, " must be in [0, 1024] (0: off)"));
  }
  out.online_reserved_instances = static_cast<int>(reserved.value_or(1));
  LevelQueueOptions offline;
  offline.max_queue_size = queue_cap;
  out.levels.push_back(offline);
  ++out.priority_levels;
  ASSIGN_OR_RETURN(out.padding, PaddingOptions::FromModelOptions(model));
  return out;
}

}  // namespace ferry
