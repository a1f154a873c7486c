// SPDX-License-Identifier: Apache-2.0
#include "batching/batch_policy.h"

#include <algorithm>
#include <tuple>

namespace ferry {
namespace {

struct Fill {
  std::vector<size_t> members;  // indices into the snapshot, batch order
  int64_t rows = 0;
  int64_t offline_rows = 0;
  size_t bytes = 0;
  int64_t max_length = 0;
  int64_t row_length_sum = 0;     // Σ rows·length
  bool capacity_blocked = false;  // a candidate did not fit by rows or bytes
  bool length_blocked = false;    // a candidate did not fit by padding waste or
                                  // could not share the batch (another key)
};

double WasteWith(const Fill& fill, const QueuedRequest& r) {
  const int64_t rows = fill.rows + r.rows;
  const int64_t max_length = std::max(fill.max_length, r.length);
  if (rows == 0 || max_length == 0) return 0;
  const double used =
      static_cast<double>(fill.row_length_sum + r.rows * r.length);
  return 1.0 -
         used / (static_cast<double>(rows) * static_cast<double>(max_length));
}

bool IsOffline(const QueuedRequest& r, const BatchPolicyOptions& options) {
  return options.offline_level >= 0 && r.level == options.offline_level;
}

void Add(Fill* fill, size_t index, const QueuedRequest& r,
         const BatchPolicyOptions& options) {
  fill->members.push_back(index);
  fill->rows += r.rows;
  if (IsOffline(r, options)) fill->offline_rows += r.rows;
  fill->bytes += r.bytes;
  fill->max_length = std::max(fill->max_length, r.length);
  fill->row_length_sum += r.rows * r.length;
}

// Greedy fill from the head of `order`.
// Offline rows one batch may carry now (0: no cap).
int64_t OfflineCap(const BatchPolicyOptions& options, bool online_active,
                   LatencyPredictor predict) {
  if (!online_active || options.offline_level < 0) return 0;
  int64_t cap = options.max_offline_rows > 0 ? options.max_offline_rows
                                             : options.max_batch_rows;
  if (options.offline_batch_budget > absl::ZeroDuration()) {
    // The largest n <= cap the engine computes within the budget (the model
    // is monotone in rows), found by bisection.
    int64_t lo = 1;
    int64_t hi = cap;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      const std::optional<absl::Duration> t = predict(mid);
      if (!t) return options.max_offline_rows;  // no model yet
      if (*t <= options.offline_batch_budget) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    cap = lo;
  }
  return options.max_offline_rows > 0 ||
                 options.offline_batch_budget > absl::ZeroDuration()
             ? cap
             : 0;
}

Fill FillBatch(absl::Span<const QueuedRequest> queue,
               const std::vector<size_t>& order,
               const BatchPolicyOptions& options, int64_t offline_cap) {
  Fill fill;
  for (size_t index : order) {
    const QueuedRequest& r = queue[index];
    if (fill.members.empty()) {
      Add(&fill, index, r, options);
      if (!options.dynamic_batching) break;
      continue;
    }
    if (fill.rows >= options.max_batch_rows) {
      fill.capacity_blocked = true;
      break;
    }
    if (offline_cap > 0 && IsOffline(r, options) &&
        fill.offline_rows + r.rows > offline_cap) {
      fill.capacity_blocked = true;
      if (options.preserve_ordering) break;
      continue;
    }
    const bool rows_fit = fill.rows + r.rows <= options.max_batch_rows;
    const bool bytes_fit = options.max_batch_bytes == 0 ||
                           fill.bytes + r.bytes <= options.max_batch_bytes;
    if (!rows_fit || !bytes_fit) {
      fill.capacity_blocked = true;
      if (options.preserve_ordering) break;
      continue;
    }
    if (r.key != queue[fill.members.front()].key ||
        WasteWith(fill, r) > options.max_padding_waste) {
      fill.length_blocked = true;
      if (options.preserve_ordering) break;
      continue;
    }
    Add(&fill, index, r, options);
  }
  return fill;
}

// Trims the batch to the largest preferred size it can hit exactly with a
// prefix. Returns true when the (possibly trimmed) batch has a preferred size.
bool TrimToPreferred(absl::Span<const QueuedRequest> queue,
                     const BatchPolicyOptions& options, Fill* fill) {
  const auto& preferred = options.preferred_batch_sizes;
  for (auto p = preferred.rbegin(); p != preferred.rend(); ++p) {
    if (*p > fill->rows) continue;
    int64_t rows = 0;
    size_t n = 0;
    while (n < fill->members.size() &&
           rows + queue[fill->members[n]].rows <= *p) {
      rows += queue[fill->members[n]].rows;
      ++n;
    }
    if (rows != *p) continue;
    if (n < fill->members.size()) {
      Fill trimmed;
      for (size_t i = 0; i < n; ++i)
        Add(&trimmed, fill->members[i], queue[fill->members[i]], options);
      *fill = trimmed;
    }
    return true;
  }
  return false;
}

}  // namespace

int EffectiveLevel(const QueuedRequest& request,
                   const BatchPolicyOptions& options, absl::Time now) {
  if (options.aging_interval <= absl::ZeroDuration() ||
      now <= request.enqueue_time) {
    return request.level;
  }
  const int64_t steps = (now - request.enqueue_time) / options.aging_interval;
  const int64_t gained = std::min<int64_t>(steps, options.max_aging_levels);
  return static_cast<int>(std::max<int64_t>(0, request.level - gained));
}

BatchDecision DecideBatch(absl::Span<const QueuedRequest> queue,
                          const BatchPolicyOptions& options,
                          const PolicyContext& context,
                          LatencyPredictor predict) {
  const absl::Time now = context.now;
  BatchDecision decision;
  auto wake = [&decision](absl::Time t) {
    decision.wake_at = std::min(decision.wake_at, t);
  };

  // 1. Expiries: they apply whether or not an instance is free.
  std::vector<size_t> candidates;
  std::vector<bool> delayed(queue.size(), false);
  for (size_t i = 0; i < queue.size(); ++i) {
    const QueuedRequest& r = queue[i];
    if (r.deadline <= now) {
      decision.infeasible.push_back(i);
      continue;
    }
    if (options.deadline_aware && r.deadline != absl::InfiniteFuture()) {
      if (std::optional<absl::Duration> alone = predict(r.rows)) {
        if (now + *alone > r.deadline) {
          decision.infeasible.push_back(i);
          continue;
        }
        wake(r.deadline - *alone);
      }
      wake(r.deadline);
    }
    delayed[i] = r.delayed;
    if (!r.delayed && r.timeout_at <= now) {
      if (r.timeout_action == TimeoutAction::kReject) {
        decision.timed_out.push_back(i);
        continue;
      }
      decision.delayed.push_back(i);
      delayed[i] = true;
    } else if (!r.delayed) {
      wake(r.timeout_at);
    }
    candidates.push_back(i);
  }
  if (candidates.empty() || !context.instance_free) return decision;

  // 2. Order the candidates.
  if (options.preserve_ordering) {
    std::sort(candidates.begin(), candidates.end(),
              [&](size_t a, size_t b) { return queue[a].seq < queue[b].seq; });
  } else {
    std::vector<std::tuple<bool, int, uint64_t, size_t>> keys;
    keys.reserve(candidates.size());
    for (size_t i : candidates) {
      // A request whose DELAY timeout passed goes behind the others for one
      // aging interval, then competes by age again (its early arrival puts it
      // first at its level): DELAY must not turn into starvation. Without
      // aging it stays behind, as in Triton.
      const bool behind =
          delayed[i] && (options.aging_interval <= absl::ZeroDuration() ||
                         now < queue[i].timeout_at + options.aging_interval);
      keys.emplace_back(behind, EffectiveLevel(queue[i], options, now),
                        queue[i].seq, i);
    }
    // The snapshot usually arrives in order already (one level, arrival order).
    if (!std::is_sorted(keys.begin(), keys.end()))
      std::sort(keys.begin(), keys.end());
    for (size_t k = 0; k < keys.size(); ++k)
      candidates[k] = std::get<3>(keys[k]);
  }

  // 3. Fill a batch and decide whether it goes now.
  Fill fill = FillBatch(queue, candidates, options,
                        OfflineCap(options, context.online_active, predict));
  std::optional<DispatchReason> reason;
  if (context.draining) {
    reason = DispatchReason::kDrain;
  } else if (!options.dynamic_batching || fill.rows >= options.max_batch_rows ||
             fill.capacity_blocked) {
    reason = DispatchReason::kFull;
  } else if (TrimToPreferred(queue, options, &fill)) {
    reason = DispatchReason::kPreferredSize;
  } else if (options.preserve_ordering && fill.length_blocked) {
    reason = DispatchReason::kShapeBreak;
  } else {
    absl::Time oldest = absl::InfiniteFuture();
    absl::Time latest_start = absl::InfiniteFuture();
    const std::optional<absl::Duration> compute =
        options.deadline_aware ? predict(fill.rows) : std::nullopt;
    for (size_t i : fill.members) {
      oldest = std::min(oldest, queue[i].enqueue_time);
      if (compute && queue[i].deadline != absl::InfiniteFuture()) {
        latest_start = std::min(latest_start, queue[i].deadline - *compute);
      }
    }
    if (now >= oldest + options.max_queue_delay) {
      reason = DispatchReason::kDelayExpired;
    } else if (now >= latest_start) {
      reason = DispatchReason::kDeadline;
    } else {
      wake(oldest + options.max_queue_delay);
      wake(latest_start);
    }
  }
  if (reason && !context.draining && !context.offline_only_allowed &&
      fill.offline_rows == fill.rows) {
    reason.reset();  // an instance finishing decides again
  }
  if (reason) {
    decision.dispatch = std::move(fill.members);
    decision.reason = *reason;
  }
  return decision;
}

}  // namespace ferry
