// SPDX-License-Identifier: Apache-2.0
// Statistics of one model's DynamicBatcher, per priority level and model-wide,
// kept in the shape Prometheus wants: cumulative counters, gauges, and
// histograms with fixed bucket bounds. The metrics layer reads them with
// Snapshot(); tests and `ferry bench` read the same snapshot.
//
// Histogram: fixed upper bounds (ascending, +Inf implicit); Observe is
// lock-free. BatcherStats: the batcher thread records enqueues, rejections,
// dispatches and queue times; engine instance threads record compute times and
// completions. Every Record* call is lock-free (relaxed atomics) and safe for
// concurrent use. A snapshot taken while others record is not one consistent
// cut: counters read a moment apart may disagree by the records in between, as
// with any Prometheus scrape.
#ifndef FERRY_BATCHING_BATCH_STATS_H_
#define FERRY_BATCHING_BATCH_STATS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "batching/reasons.h"

namespace ferry {

// A histogram's state at one moment.
struct HistogramSnapshot {
  std::vector<double> bounds;  // upper bounds, ascending; +Inf implicit
  std::vector<uint64_t>
      counts;          // per bucket, not cumulative; size bounds.size() + 1,
                       // the last one the +Inf bucket
  uint64_t count = 0;  // always the sum of counts
  double sum = 0;      // sum of observed values

  // Running totals per bucket, as Prometheus exports them (`_bucket{le=...}`);
  // the last element equals count.
  std::vector<uint64_t> Cumulative() const;
  // The q-quantile (q clamped to [0, 1]) estimated as Prometheus'
  // histogram_quantile does: linear interpolation inside the bucket that holds
  // the rank, the first bucket starting at 0 (when its bound is positive), and
  // the highest finite bound for ranks that fall in the +Inf bucket. NaN when
  // empty. For display and tests.
  double Quantile(double q) const;
  // sum / count, or 0 when empty.
  double Mean() const;
};

class Histogram {
 public:
  // Latency buckets in microseconds, 10 us to 60 s in 1-2.5-5 steps: roughly
  // exponential (×2–2.5 per bucket), with round values a dashboard can label.
  static constexpr std::array<double, 21> kLatencyBucketsUs = {
      10,  25,  50,    100, 250, 500,   1e3, 2.5e3, 5e3,   1e4, 2.5e4,
      5e4, 1e5, 2.5e5, 5e5, 1e6, 2.5e6, 5e6, 1e7,   2.5e7, 6e7};

  // `count` bounds: start, start·factor, start·factor², ... Aborts unless start
  // > 0, factor > 1 and count >= 1 (bucket layouts come from code, not from
  // users).
  static std::vector<double> ExponentialBuckets(double start, double factor,
                                                int count);
  // Batch sizes in rows: 1, 2, 4, ... below max_batch_size, then max_batch_size
  // itself, so a full batch has its own bucket. {1} when max_batch_size <= 1 (a
  // model that does not batch).
  static std::vector<double> BatchSizeBuckets(int max_batch_size);

  // Aborts unless `bounds` are finite and strictly ascending. May be empty
  // (only the +Inf bucket).
  explicit Histogram(absl::Span<const double> bounds);

  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  // Counts `value` in the first bucket whose upper bound is >= value
  // (Prometheus' `le`), or in +Inf. NaN is ignored. Lock-free; safe for
  // concurrent use.
  void Observe(double value);

  HistogramSnapshot Snapshot() const;
  absl::Span<const double> bounds() const { return bounds_; }

 private:
  const std::vector<double> bounds_;
  const std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // bounds_.size() + 1
  std::atomic<double> sum_{0};
};

// One priority level's statistics. Level 0 is Triton's priority 1 (the
// highest).
struct LevelStatsSnapshot {
  uint64_t requests_enqueued = 0;
  uint64_t rows_enqueued = 0;
  uint64_t requests_succeeded = 0;
  uint64_t requests_failed = 0;
  uint64_t rows_succeeded = 0;
  uint64_t rows_failed = 0;
  std::array<uint64_t, kNumRejectReasons>
      rejections{};                  // requests, by RejectReason
  uint64_t rows_rejected = 0;        // all reasons together
  uint64_t timeouts = 0;             // queue timeouts
  int64_t queue_depth_requests = 0;  // gauge
  int64_t queue_depth_rows = 0;      // gauge
  HistogramSnapshot queue_time_us;   // enqueue → dispatch, per request
  HistogramSnapshot
      end_to_end_us;  // enqueue → response, per successful request

  uint64_t rejected(RejectReason reason) const {
    return rejections[static_cast<size_t>(reason)];
  }
};

struct BatcherStatsSnapshot {
  std::vector<LevelStatsSnapshot> levels;  // index = 0-based priority level
  // Index in `levels` of the offline (job) level, or -1 (see BatcherOptions).
  int offline_level = -1;

  uint64_t batches = 0;  // batches dispatched to the engine (execution count)
  uint64_t rows_executed = 0;  // rows in them (inference count)
  std::array<uint64_t, kNumDispatchReasons>
      dispatch_reasons{};             // by DispatchReason
  HistogramSnapshot batch_size_rows;  // per batch
  HistogramSnapshot compute_time_us;  // engine time per batch
  uint64_t compute_rows = 0;  // rows in the batches counted in compute_time_us
  uint64_t padded_elements = 0;  // padding added to batches, in tensor elements
  uint64_t total_elements = 0;   // all elements of batches, padding included

  uint64_t dispatched(DispatchReason reason) const {
    return dispatch_reasons[static_cast<size_t>(reason)];
  }
  // The share of batch elements that were padding; 0 before any batch.
  double padding_waste() const {
    return total_elements == 0 ? 0.0
                               : static_cast<double>(padded_elements) /
                                     static_cast<double>(total_elements);
  }
  // Mean rows per batch; 0 before any batch.
  double average_batch_rows() const {
    return batches == 0 ? 0.0
                        : static_cast<double>(rows_executed) /
                              static_cast<double>(batches);
  }
};

// The counters are independent: BatcherStats derives none from another.
// Intended use: RecordEnqueued when Enqueue accepts a request; RecordRejected
// when a request is turned away, at Enqueue or later (a kTimeout rejection also
// counts in `timeouts`); RecordCompleted when the batcher answers a request it
// accepted, ok or not. `level` is 0-based and must be < priority_levels
// (checked: a bad level is a bug). Negative row or element counts are counted
// as 0; negative durations as 0.
class BatcherStats {
 public:
  // Aborts unless priority_levels >= 1. max_batch_size only shapes the batch
  // size histogram's buckets.
  BatcherStats(int priority_levels, int max_batch_size);

  BatcherStats(const BatcherStats&) = delete;
  BatcherStats& operator=(const BatcherStats&) = delete;

  void RecordEnqueued(int level, int64_t rows);
  void RecordRejected(int level, RejectReason reason, int64_t rows);
  // One batch handed to an instance. padded_elements counts the elements added
  // as padding, total_elements all elements of the batch's inputs, padding
  // included.
  void RecordDispatched(DispatchReason reason, int64_t batch_rows,
                        int64_t padded_elements, int64_t total_elements);
  // Per request, when its batch is dispatched.
  void RecordQueueTime(int level, absl::Duration waited);
  // Per batch, from the instance thread after the engine ran it.
  void RecordComputeTime(absl::Duration compute, int64_t batch_rows);
  // Per request, when its callback is called. end_to_end is recorded for
  // successes.
  void RecordCompleted(int level, int64_t rows, bool ok,
                       absl::Duration end_to_end);
  // Gauges: what is queued at `level` now.
  void SetQueueDepth(int level, int64_t requests, int64_t rows);

  BatcherStatsSnapshot Snapshot() const;

  int priority_levels() const { return priority_levels_; }

 private:
  struct Level {
    Level();
    std::atomic<uint64_t> requests_enqueued{0};
    std::atomic<uint64_t> rows_enqueued{0};
    std::atomic<uint64_t> requests_succeeded{0};
    std::atomic<uint64_t> requests_failed{0};
    std::atomic<uint64_t> rows_succeeded{0};
    std::atomic<uint64_t> rows_failed{0};
    std::array<std::atomic<uint64_t>, kNumRejectReasons> rejections{};
    std::atomic<uint64_t> rows_rejected{0};
    std::atomic<uint64_t> timeouts{0};
    std::atomic<int64_t> queue_depth_requests{0};
    std::atomic<int64_t> queue_depth_rows{0};
    Histogram queue_time_us;
    Histogram end_to_end_us;
  };

  Level& LevelAt(int level);

  const int priority_levels_;
  const std::unique_ptr<Level[]> levels_;
  std::atomic<uint64_t> batches_{0};
  std::atomic<uint64_t> rows_executed_{0};
  std::array<std::atomic<uint64_t>, kNumDispatchReasons> dispatch_reasons_{};
  Histogram batch_size_rows_;
  Histogram compute_time_us_;
  std::atomic<uint64_t> compute_rows_{0};
  std::atomic<uint64_t> padded_elements_{0};
  std::atomic<uint64_t> total_elements_{0};
};

}  // namespace ferry

#endif  // FERRY_BATCHING_BATCH_STATS_H_
