// SPDX-License-Identifier: Apache-2.0
#include "batching/batch_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/logging.h"

namespace ferry {
namespace {

constexpr std::memory_order kRelaxed = std::memory_order_relaxed;

uint64_t NonNegative(int64_t n) { return n < 0 ? 0 : static_cast<uint64_t>(n); }

double NonNegativeMicros(absl::Duration d) {
  return std::max(absl::ToDoubleMicroseconds(d), 0.0);
}

void Add(std::atomic<uint64_t>& counter, int64_t n) {
  counter.fetch_add(NonNegative(n), kRelaxed);
}

void Increment(std::atomic<uint64_t>& counter) {
  counter.fetch_add(1, kRelaxed);
}

}  // namespace

// --- HistogramSnapshot
// ---------------------------------------------------------------

std::vector<uint64_t> HistogramSnapshot::Cumulative() const {
  std::vector<uint64_t> cumulative(counts.size());
  uint64_t running = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    running += counts[i];
    cumulative[i] = running;
  }
  return cumulative;
}

double HistogramSnapshot::Quantile(double q) const {
  if (count == 0 || counts.size() != bounds.size() + 1) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  q = std::clamp(q, 0.0, 1.0);
  const double rank = q * static_cast<double>(count);
  // The first non-empty bucket whose running total reaches the rank; one exists
  // because count > 0 and the last running total is count.
  uint64_t below = 0;
  size_t b = 0;
  for (; b < counts.size(); ++b) {
    if (counts[b] > 0 && static_cast<double>(below + counts[b]) >= rank) break;
    below += counts[b];
  }
  if (b >= bounds.size()) {
    // The +Inf bucket has no upper end: answer its lower end, the highest
    // finite bound.
    return bounds.empty() ? std::numeric_limits<double>::quiet_NaN()
                          : bounds.back();
  }
  const double upper = bounds[b];
  double lower;
  if (b == 0) {
    if (upper <= 0) return upper;
    lower = 0;
  } else {
    lower = bounds[b - 1];
  }
  const double in_bucket = rank - static_cast<double>(below);
  return lower + (upper - lower) * in_bucket / static_cast<double>(counts[b]);
}

double HistogramSnapshot::Mean() const {
  return count == 0 ? 0.0 : sum / static_cast<double>(count);
}

// --- Histogram
// -----------------------------------------------------------------------

std::vector<double> Histogram::ExponentialBuckets(double start, double factor,
                                                  int count) {
  FERRY_CHECK(start > 0 && std::isfinite(start),
              "ExponentialBuckets start must be > 0, got ", start);
  FERRY_CHECK(factor > 1 && std::isfinite(factor),
              "ExponentialBuckets factor must be > 1, got ", factor);
  FERRY_CHECK(count >= 1, "ExponentialBuckets count must be >= 1, got ", count);
  std::vector<double> bounds;
  bounds.reserve(count);
  double bound = start;
  for (int i = 0; i < count; ++i) {
    bounds.push_back(bound);
    bound *= factor;
  }
  return bounds;
}

std::vector<double> Histogram::BatchSizeBuckets(int max_batch_size) {
  std::vector<double> bounds;
  int64_t size = 1;
  do {
    bounds.push_back(static_cast<double>(size));
    size *= 2;
  } while (size < max_batch_size);
  if (max_batch_size > bounds.back()) bounds.push_back(max_batch_size);
  return bounds;
}

Histogram::Histogram(absl::Span<const double> bounds)
    : bounds_(bounds.begin(), bounds.end()),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(bounds.size() + 1)) {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    FERRY_CHECK(std::isfinite(bounds_[i]), "histogram bound ", i,
                " is not finite: ", bounds_[i]);
    FERRY_CHECK(i == 0 || bounds_[i - 1] < bounds_[i],
                "histogram bounds must ascend: bound ", i, " is ", bounds_[i],
                " after ", i == 0 ? 0.0 : bounds_[i - 1]);
  }
}

void Histogram::Observe(double value) {
  if (std::isnan(value)) return;
  // First bound >= value: a value equal to a bound belongs to that bucket
  // (`le`).
  const size_t bucket =
      std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  counts_[bucket].fetch_add(1, kRelaxed);
  double sum = sum_.load(kRelaxed);
  while (!sum_.compare_exchange_weak(sum, sum + value, kRelaxed)) {
  }
}

HistogramSnapshot Histogram::Snapshot() const {
  HistogramSnapshot snapshot;
  snapshot.bounds = bounds_;
  snapshot.counts.resize(bounds_.size() + 1);
  for (size_t i = 0; i < snapshot.counts.size(); ++i) {
    snapshot.counts[i] = counts_[i].load(kRelaxed);
    snapshot.count += snapshot.counts[i];
  }
  snapshot.sum = sum_.load(kRelaxed);
  return snapshot;
}

// --- BatcherStats
// --------------------------------------------------------------------

BatcherStats::Level::Level()
    : queue_time_us(Histogram::kLatencyBucketsUs),
      end_to_end_us(Histogram::kLatencyBucketsUs) {}

BatcherStats::BatcherStats(int priority_levels, int max_batch_size)
    : priority_levels_(priority_levels),
      levels_(priority_levels >= 1 ? std::make_unique<Level[]>(priority_levels)
                                   : nullptr),
      batch_size_rows_(Histogram::BatchSizeBuckets(max_batch_size)),
      compute_time_us_(Histogram::kLatencyBucketsUs) {
  FERRY_CHECK(priority_levels >= 1,
              "BatcherStats needs priority_levels >= 1, got ", priority_levels);
}

BatcherStats::Level& BatcherStats::LevelAt(int level) {
  FERRY_CHECK(level >= 0 && level < priority_levels_, "priority level index ",
              level, " out of range [0, ", priority_levels_, ")");
  return levels_[level];
}

void BatcherStats::RecordEnqueued(int level, int64_t rows) {
  Level& l = LevelAt(level);
  Increment(l.requests_enqueued);
  Add(l.rows_enqueued, rows);
}

void BatcherStats::RecordRejected(int level, RejectReason reason,
                                  int64_t rows) {
  const auto index = static_cast<size_t>(reason);
  FERRY_CHECK(index < kNumRejectReasons, "bad RejectReason ", index);
  Level& l = LevelAt(level);
  Increment(l.rejections[index]);
  Add(l.rows_rejected, rows);
  if (reason == RejectReason::kTimeout) Increment(l.timeouts);
}

void BatcherStats::RecordDispatched(DispatchReason reason, int64_t batch_rows,
                                    int64_t padded_elements,
                                    int64_t total_elements) {
  const auto index = static_cast<size_t>(reason);
  FERRY_CHECK(index < kNumDispatchReasons, "bad DispatchReason ", index);
  Increment(batches_);
  Add(rows_executed_, batch_rows);
  Increment(dispatch_reasons_[index]);
  batch_size_rows_.Observe(static_cast<double>(NonNegative(batch_rows)));
  Add(padded_elements_, padded_elements);
  Add(total_elements_, total_elements);
}

void BatcherStats::RecordQueueTime(int level, absl::Duration waited) {
  LevelAt(level).queue_time_us.Observe(NonNegativeMicros(waited));
}

void BatcherStats::RecordComputeTime(absl::Duration compute,
                                     int64_t batch_rows) {
  compute_time_us_.Observe(NonNegativeMicros(compute));
  Add(compute_rows_, batch_rows);
}

void BatcherStats::RecordCompleted(int level, int64_t rows, bool ok,
                                   absl::Duration end_to_end) {
  Level& l = LevelAt(level);
  if (ok) {
    Increment(l.requests_succeeded);
    Add(l.rows_succeeded, rows);
    l.end_to_end_us.Observe(NonNegativeMicros(end_to_end));
  } else {
    Increment(l.requests_failed);
    Add(l.rows_failed, rows);
  }
}

void BatcherStats::SetQueueDepth(int level, int64_t requests, int64_t rows) {
  Level& l = LevelAt(level);
  l.queue_depth_requests.store(requests, kRelaxed);
  l.queue_depth_rows.store(rows, kRelaxed);
}

BatcherStatsSnapshot BatcherStats::Snapshot() const {
  BatcherStatsSnapshot s;
  s.levels.resize(priority_levels_);
  for (int i = 0; i < priority_levels_; ++i) {
    const Level& l = levels_[i];
    LevelStatsSnapshot& out = s.levels[i];
    out.requests_enqueued = l.requests_enqueued.load(kRelaxed);
    out.rows_enqueued = l.rows_enqueued.load(kRelaxed);
    out.requests_succeeded = l.requests_succeeded.load(kRelaxed);
    out.requests_failed = l.requests_failed.load(kRelaxed);
    out.rows_succeeded = l.rows_succeeded.load(kRelaxed);
    out.rows_failed = l.rows_failed.load(kRelaxed);
    for (int r = 0; r < kNumRejectReasons; ++r) {
      out.rejections[r] = l.rejections[r].load(kRelaxed);
    }
    out.rows_rejected = l.rows_rejected.load(kRelaxed);
    out.timeouts = l.timeouts.load(kRelaxed);
    out.queue_depth_requests = l.queue_depth_requests.load(kRelaxed);
    out.queue_depth_rows = l.queue_depth_rows.load(kRelaxed);
    out.queue_time_us = l.queue_time_us.Snapshot();
    out.end_to_end_us = l.end_to_end_us.Snapshot();
  }
  s.batches = batches_.load(kRelaxed);
  s.rows_executed = rows_executed_.load(kRelaxed);
  for (int r = 0; r < kNumDispatchReasons; ++r) {
    s.dispatch_reasons[r] = dispatch_reasons_[r].load(kRelaxed);
  }
  s.batch_size_rows = batch_size_rows_.Snapshot();
  s.compute_time_us = compute_time_us_.Snapshot();
  s.compute_rows = compute_rows_.load(kRelaxed);
  s.padded_elements = padded_elements_.load(kRelaxed);
  s.total_elements = total_elements_.load(kRelaxed);
  return s;
}

}  // namespace ferry
