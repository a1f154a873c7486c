// SPDX-License-Identifier: Apache-2.0
// BatcherOptions: everything a DynamicBatcher is configured with, converted
// from a model's ModelOptions (config.pbtxt's dynamic_batching plus Ferry's
// parameters) at the edge. Plain values.
//
// Ferry's parameters beyond Triton's knobs (all optional, in config.pbtxt
// `parameters`):
//   max_batch_bytes       cap on a batch's input bytes (0: none)
//   aging_interval_us     a waiting request rises one priority level per
//   interval
//                         (default 100000; 0 disables aging)
//   max_aging_levels      how many levels aging may lift a request (default:
//   all) deadline_aware        "false" turns off dispatch-for-deadline and
//   early rejection max_padding_waste     padding bound for length bucketing
//   (default 0.25; 1 disables) max_queue_size_default  queue bound per level
//   when max_queue_size is 0
//                         (default 65536 requests: memory stays bounded)
//   pad_value, attention_mask_input  see batch_assembly.h
//   max_offline_batch_rows  rows of offline (job) records one batch may carry
//                         (default min(max_batch_size, 256); 0: no cap), so
//                         online requests never wait behind a huge offline
//                         batch; both apply only while online traffic is
//                         about (an online request in the last second)
//   offline_batch_budget_us  and at most the rows the latency model computes
//                         in this time (default 200; 0: rows only)
//   online_reserved_instances  while online traffic is about, a batch of
//                         offline records alone never takes the last this
//                         many free instances (default 1; 0: off), so an
//                         online request finds one free instead of waiting
//                         for an offline batch; offline rows still fill
//                         the online batches
#ifndef FERRY_BATCHING_BATCHER_OPTIONS_H_
#define FERRY_BATCHING_BATCHER_OPTIONS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "batching/batch_assembly.h"
#include "batching/batch_policy.h"
#include "config/model_options.h"

namespace ferry {

struct LevelQueueOptions {
  TimeoutAction timeout_action = TimeoutAction::kReject;
  absl::Duration default_timeout = absl::ZeroDuration();  // zero: none
  bool allow_timeout_override = false;
  uint32_t max_queue_size = 65536;  // requests waiting at this level
};

struct BatcherOptions {
  BatchPolicyOptions policy;
  // Levels are 0-based here (0 = highest); Triton's config counts from 1.
  int priority_levels = 1;
  int default_level = 0;
  std::vector<LevelQueueOptions> levels;  // one per priority level
  // The level of offline (job) requests, below every online level, or -1: none
  // (offline requests then go to the lowest level). BatcherOptionsFromModel
  // appends it after the config's levels, so online requests may name levels
  // 1..offline_level only, and offline records fill what online traffic
  // leaves (aging still lifts a waiting one, so they never starve).
  int offline_level = -1;
  PaddingOptions padding;
  // Whether the model batches at all (max_batch_size > 0). When not, requests
  // carry no batch dimension and each runs alone.
  bool batched = true;
  // While online requests are about, batches of offline records only run the
  // engine under SCHED_IDLE (core/thread_priority.h).
  bool offline_background = true;
  // While online requests are about, a batch of offline records alone may
  // start only if this many instances stay free after it (parameter
  // online_reserved_instances; ignored when the model has no more instances
  // than this).
  int online_reserved_instances = 1;
};

// INVALID_ARGUMENT naming the parameter for a malformed Ferry parameter.
absl::StatusOr<BatcherOptions> BatcherOptionsFromModel(
    const ModelOptions& model);

}  // namespace ferry

#endif  // FERRY_BATCHING_BATCHER_OPTIONS_H_
