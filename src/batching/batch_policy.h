// SPDX-License-Identifier: Apache-2.0
// The batching decision as a pure function: given a snapshot of the queued
// requests, the options and the time, decide whether to dispatch a batch now
// (which requests, in which order, and why), which requests to turn away (queue
// timeout with REJECT, a deadline that cannot be met), which to move behind the
// others (queue timeout with DELAY), and otherwise when to look again.
// DynamicBatcher's thread only locks, snapshots, calls DecideBatch, acts on the
// decision and waits until `wake_at`.
//
// Rules, in Triton's terms where Triton has them:
// - Rows, not requests, count toward max_batch_size; a request is never split
// here
//   (the batcher splits oversized requests before they are queued).
// - Order: priority level (0 = highest) lowered by aging — a request gains one
// level per
//   `aging_interval` waited, at most `max_aging_levels` — then arrival. So a
//   flood at a high level delays, but cannot starve, a lower one. Requests
//   whose queue timeout passed with action DELAY go behind all others. With
//   preserve_ordering the order is arrival only, and the batch is a prefix of
//   it.
// - Dispatch at once when the batch is full (max rows, or the byte cap, or the
// next
//   request does not fit), when it reaches a preferred batch size (the largest
//   preferred size the queue can fill exactly), when its oldest request has
//   waited max_queue_delay, when waiting longer would make a member miss its
//   deadline (the latency model predicts compute time), when order must hold
//   and the next request's length would pad the batch beyond max_padding_waste
//   (shape break), or when draining.
// - Length bucketing: requests with variable-length inputs join a batch only
// while the
//   padding waste, 1 - Σ rows·length / (rows_total · max_length), stays within
//   max_padding_waste; the others wait for a batch of their own length.
// - Nothing is dispatched while no instance is free, so a batch stays open to
// new
//   requests until an instance can take it; timeouts still fire on time.
//
// Pure and thread-compatible: no clock reads, no allocation beyond the result.
#ifndef FERRY_BATCHING_BATCH_POLICY_H_
#define FERRY_BATCHING_BATCH_POLICY_H_

#include <climits>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "batching/reasons.h"
#include "config/model_options.h"

namespace ferry {

// What the policy sees of one queued request.
struct QueuedRequest {
  uint64_t seq = 0;  // arrival order; unique and increasing
  int level = 0;     // priority level, 0 = highest
  absl::Time enqueue_time;
  absl::Time timeout_at = absl::InfiniteFuture();  // queue timeout
  TimeoutAction timeout_action = TimeoutAction::kReject;
  bool delayed = false;  // its DELAY timeout already passed
  absl::Time deadline = absl::InfiniteFuture();  // end-to-end deadline
  int64_t rows = 1;
  int64_t length = 0;  // variable-length elements per row (0: fixed shapes)
  size_t bytes = 0;
  // Requests with different keys cannot share a batch (BatchKey: which
  // optional inputs they carry, the shapes of BYTES inputs, which are never
  // padded). A candidate with another key than the batch's first member is a
  // shape break, like one that would pad too much.
  uint64_t key = 0;
};

struct BatchPolicyOptions {
  int64_t max_batch_rows = 1;
  // Without dynamic batching each request runs alone, as soon as an instance is
  // free.
  bool dynamic_batching = true;
  std::vector<int64_t>
      preferred_batch_sizes;  // ascending, each <= max_batch_rows
  absl::Duration max_queue_delay = absl::ZeroDuration();
  size_t max_batch_bytes = 0;  // 0: no cap
  bool preserve_ordering = false;
  absl::Duration aging_interval =
      absl::Milliseconds(100);  // zero disables aging
  int max_aging_levels = INT_MAX;
  bool deadline_aware = true;
  double max_padding_waste = 0.25;
  // While online traffic is about (PolicyContext::online_active), requests
  // queued at `offline_level` (-1: none) put at most `max_offline_rows` rows
  // (0: no cap) into one batch, so an online request that arrives while
  // offline work runs waits for one small batch, not a huge one; a batch
  // whose offline share reached the cap dispatches as full. Without online
  // traffic offline batches grow to max_batch_rows.
  int offline_level = -1;
  int64_t max_offline_rows = 0;
  // With a latency model, the cap shrinks further to the rows the model
  // computes within this budget (at least 1): what an online arrival may have
  // to wait for. Zero: rows only.
  absl::Duration offline_batch_budget = absl::ZeroDuration();
};

// Predicted compute time for a batch of `rows`; nullopt while unknown.
using LatencyPredictor =
    absl::FunctionRef<std::optional<absl::Duration>(int64_t rows)>;

struct BatchDecision {
  // Indices into the snapshot, in batch order. Empty: dispatch nothing now.
  std::vector<size_t> dispatch;
  DispatchReason reason = DispatchReason::kFull;
  std::vector<size_t> timed_out;  // queue timeout passed, action REJECT
  std::vector<size_t>
      infeasible;               // deadline passed, or cannot be met even alone
  std::vector<size_t> delayed;  // queue timeout just passed, action DELAY
  // When nothing is dispatched: decide again no later than this.
  absl::Time wake_at = absl::InfiniteFuture();
};

struct PolicyContext {
  absl::Time now;
  bool instance_free = true;
  bool draining = false;
  // An online request arrived recently (the batcher's call): offline rows
  // are capped per batch.
  bool online_active = true;
  // Whether a batch of offline records alone may start now. The batcher says
  // no while online requests are about and taking an instance would leave
  // none free for them; such a batch waits for an instance to finish.
  bool offline_only_allowed = true;
};

BatchDecision DecideBatch(absl::Span<const QueuedRequest> queue,
                          const BatchPolicyOptions& options,
                          const PolicyContext& context,
                          LatencyPredictor predict);

// Effective level of a request after aging (exposed for tests and stats).
int EffectiveLevel(const QueuedRequest& request,
                   const BatchPolicyOptions& options, absl::Time now);

}  // namespace ferry

#endif  // FERRY_BATCHING_BATCH_POLICY_H_
