// SPDX-License-Identifier: Apache-2.0
#include "batching/dynamic_batcher.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"
#include "batching/batch_assembly.h"
#include "batching/split_rows.h"
#include "core/logging.h"
#include "core/status_macros.h"
#include "core/thread_priority.h"
#include "engines/input_validation.h"

namespace ferry {

using Result = absl::StatusOr<std::vector<Tensor>>;

// A request split into parts because it has more rows than a batch may hold;
// the parts are queued as separate entries and their outputs joined in order at
// the end.
struct DynamicBatcher::SplitState {
  Mutex mu;
  std::unique_ptr<Request> request ABSL_GUARDED_BY(mu);
  std::vector<std::vector<Tensor>> outputs ABSL_GUARDED_BY(mu);
  size_t remaining ABSL_GUARDED_BY(mu) = 0;
  absl::Status error ABSL_GUARDED_BY(mu);
  int64_t rows = 0;
  // The first part to be rejected counts the request once, with all its rows.
  std::atomic<bool> rejection_counted{false};
};

struct DynamicBatcher::Entry {
  QueuedRequest view;
  std::vector<Tensor> inputs;        // config order
  std::unique_ptr<Request> request;  // a whole request; null for a part
  std::shared_ptr<SplitState> split;
  size_t part = 0;
  bool has_expiry = false;
  std::multimap<absl::Time, Entry*>::iterator expiry;
  uint64_t epoch = 0;
};

struct DynamicBatcher::Batch {
  uint64_t seq = 0;
  DispatchReason reason = DispatchReason::kFull;
  // Offline records only, dispatched while online requests are about: the
  // engine computes it under SCHED_IDLE.
  bool background = false;
  std::vector<std::unique_ptr<Entry>> entries;
};

namespace {

constexpr size_t kMaxWindow = 8192;
// Batches of at most this many requests are delivered on the instance thread
// when the completion thread is idle (see Deliver).
constexpr size_t kInlineDeliveryMax = 4;

absl::Time ExpiryOf(const QueuedRequest& v) {
  return v.delayed ? v.deadline : std::min(v.timeout_at, v.deadline);
}

}  // namespace

absl::StatusOr<std::unique_ptr<DynamicBatcher>> DynamicBatcher::Create(
    std::shared_ptr<const void> owner, ModelOptions model,
    std::vector<Engine*> instances, BatcherOptions options, Clock* clock) {
  if (instances.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("model '", model.name,
                     "': a batcher needs at least one engine instance"));
  }
  if (options.priority_levels < 1 ||
      static_cast<int>(options.levels.size()) != options.priority_levels ||
      options.default_level < 0 ||
      options.default_level >= options.priority_levels ||
      options.offline_level >= options.priority_levels ||
      (options.offline_level >= 0 &&
       options.default_level >= options.offline_level)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", model.name, "': inconsistent priority level options"));
  }
  std::unique_ptr<DynamicBatcher> batcher(
      new DynamicBatcher(std::move(owner), std::move(model),
                         std::move(instances), std::move(options), clock));
  batcher->scheduler_ = std::thread([b = batcher.get()] {
    SetThreadName(absl::StrCat("sched:", b->model_.name));
    b->SchedulerLoop();
  });
  batcher->completer_ = std::thread([b = batcher.get()] {
    SetThreadName(absl::StrCat("done:", b->model_.name));
    b->CompleterLoop();
  });
  for (size_t i = 0; i < batcher->engines_.size(); ++i) {
    batcher->instances_.emplace_back([b = batcher.get(), i] {
      SetThreadName(absl::StrCat("i", i, ":", b->model_.name));
      b->InstanceLoop(static_cast<int>(i));
    });
  }
  return batcher;
}

DynamicBatcher::DynamicBatcher(std::shared_ptr<const void> owner,
                               ModelOptions model,
                               std::vector<Engine*> instances,
                               BatcherOptions options, Clock* clock)
    : owner_(std::move(owner)),
      model_(std::move(model)),
      engines_(std::move(instances)),
      options_(std::move(options)),
      clock_(clock),
      stats_(options_.priority_levels,
             static_cast<int>(options_.policy.max_batch_rows)) {
  queues_.resize(options_.priority_levels);
  live_.assign(options_.priority_levels, 0);
  live_rows_.assign(options_.priority_levels, 0);
  slots_.resize(engines_.size());
  instance_cv_ = std::make_unique<CondVar[]>(engines_.size());
  for (int i = static_cast<int>(engines_.size()) - 1; i >= 0; --i)
    idle_.push_back(i);
}

DynamicBatcher::~DynamicBatcher() { Shutdown(absl::InfiniteDuration()); }

absl::Status DynamicBatcher::Enqueue(std::unique_ptr<Request>* request) {
  if (request == nullptr || *request == nullptr) {
    return absl::InvalidArgumentError("Enqueue: no request");
  }
  Request& r = **request;
  if (!r.done)
    return absl::InvalidArgumentError("Enqueue: the request has no callback");
  int level = options_.default_level;
  const int online_levels = options_.offline_level >= 0
                                ? options_.offline_level
                                : options_.priority_levels;
  if (r.offline) {
    level = options_.offline_level >= 0 ? options_.offline_level
                                        : options_.priority_levels - 1;
  } else if (r.priority > 0) {
    if (r.priority > static_cast<uint32_t>(online_levels)) {
      stats_.RecordRejected(level, RejectReason::kInvalidInput, 0);
      return absl::InvalidArgumentError(
          absl::StrCat("priority ", r.priority, " is out of range; model '",
                       model_.name, "' has levels 1..", online_levels));
    }
    level = static_cast<int>(r.priority) - 1;
  }
  absl::StatusOr<std::vector<size_t>> order =
      CheckInputs(model_, r.inputs, /*check_batch_limit=*/false);
  if (!order.ok()) {
    stats_.RecordRejected(level, RejectReason::kInvalidInput, 0);
    return order.status();
  }
  const int64_t rows = options_.batched && !r.inputs.empty()
                           ? r.inputs[(*order)[0]].shape()[0]
                           : 1;
  // Parts of at most max_batch_size rows and max_batch_bytes bytes; decided
  // before the request is taken, so that one row over the byte cap is the
  // caller's error.
  size_t bytes = 0;
  for (const Tensor& t : r.inputs) bytes += t.byte_size();
  std::vector<int64_t> boundaries;  // empty: one part
  if (options_.batched) {
    const size_t max_bytes = options_.policy.max_batch_bytes;
    if (rows > options_.policy.max_batch_rows ||
        (max_bytes > 0 && bytes > max_bytes)) {
      absl::StatusOr<std::vector<int64_t>> cut =
          PartBoundaries(r.inputs, options_.policy.max_batch_rows, max_bytes);
      if (!cut.ok()) {
        stats_.RecordRejected(level, RejectReason::kInvalidInput, rows);
        return absl::InvalidArgumentError(absl::StrCat(
            "model '", model_.name, "': ", cut.status().message()));
      }
      boundaries = *std::move(cut);
    }
  }
  const size_t parts = boundaries.empty() ? 1 : boundaries.size() - 1;
  const int64_t first_part_rows = boundaries.empty() ? rows : boundaries[1];
  const absl::Time now = clock_->Now();
  if (r.deadline && *r.deadline <= now) {
    stats_.RecordRejected(level, RejectReason::kDeadlineInfeasible, rows);
    return absl::DeadlineExceededError(
        absl::StrCat("request '", r.id, "' arrived after its deadline"));
  }
  if (r.deadline && options_.policy.deadline_aware) {
    // Even alone it would finish late: say so now, while the caller still
    // holds the request, instead of spending compute on it. A split request
    // runs its parts in waves over the instances, each as long as the first.
    const int64_t instances =
        std::max<int64_t>(1, static_cast<int64_t>(engines_.size()));
    const int64_t waves =
        (static_cast<int64_t>(parts) + instances - 1) / instances;
    std::optional<absl::Duration> alone = latency_.Predict(first_part_rows);
    if (alone) *alone *= waves;
    if (alone && now + *alone > *r.deadline) {
      stats_.RecordRejected(level, RejectReason::kDeadlineInfeasible, rows);
      return absl::DeadlineExceededError(absl::StrCat(
          "request '", r.id, "' cannot finish by its deadline: model '",
          model_.name, "' needs about ", absl::FormatDuration(*alone), " and ",
          absl::FormatDuration(*r.deadline - now), " remain"));
    }
  }
  const LevelQueueOptions& queue = options_.levels[level];
  absl::Duration timeout = queue.default_timeout;
  if (r.timeout && queue.allow_timeout_override) timeout = *r.timeout;

  Failed failed;  // rejections by a Pump below, delivered after the lock
  absl::Status status = [&]() -> absl::Status {
    MutexLock lock(&mu_);
    if (!accepting_) {
      stats_.RecordRejected(level, RejectReason::kShuttingDown, rows);
      return absl::UnavailableError(
          absl::StrCat("model '", model_.name, "' is shutting down"));
    }
    // The bound counts requests waiting, as Triton's does: a request split
    // into more parts than the bound still gets in when the queue has room.
    if (live_[level] + 1 > queue.max_queue_size) {
      stats_.RecordRejected(level, RejectReason::kQueueFull, rows);
      return absl::UnavailableError(absl::StrCat(
          "model '", model_.name, "': the queue of priority level ", level + 1,
          " is full (", queue.max_queue_size, " requests); retry later"));
    }
    if (!r.offline) last_online_enqueue_ = now;
    // Committed: from here the request is ours.
    std::vector<Tensor> inputs;
    inputs.reserve(order->size());
    for (size_t k : *order) inputs.push_back(std::move(r.inputs[k]));
    const uint64_t key = BatchKey(model_, inputs);
    std::vector<std::vector<Tensor>> part_inputs;
    if (parts > 1) {
      absl::StatusOr<std::vector<std::vector<Tensor>>> split =
          SplitRows(std::move(inputs), boundaries);
      FERRY_CHECK(split.ok(),
                  split.status().ToString());  // inputs were validated above
      part_inputs = *std::move(split);
    } else {
      part_inputs.push_back(std::move(inputs));
    }
    std::shared_ptr<SplitState> split_state;
    if (parts > 1) {
      split_state = std::make_shared<SplitState>();
      MutexLock split_lock(&split_state->mu);
      split_state->request = std::move(*request);
      split_state->outputs.resize(parts);
      split_state->remaining = parts;
      split_state->rows = rows;
    }
    for (size_t p = 0; p < part_inputs.size(); ++p) {
      auto entry = std::make_unique<Entry>();
      QueuedRequest& v = entry->view;
      v.seq = next_seq_++;
      v.level = level;
      v.enqueue_time = now;
      if (timeout > absl::ZeroDuration()) v.timeout_at = now + timeout;
      v.timeout_action = queue.timeout_action;
      if (r.deadline) v.deadline = *r.deadline;
      v.rows = options_.batched ? part_inputs[p][0].shape()[0] : 1;
      v.length = VariableLength(model_, part_inputs[p]);
      v.key = key;
      if (parts == 1) {
        v.bytes = bytes;
      } else {
        for (const Tensor& t : part_inputs[p]) v.bytes += t.byte_size();
      }
      entry->inputs = std::move(part_inputs[p]);
      if (split_state) {
        entry->split = split_state;
        entry->part = p;
      } else {
        entry->request = std::move(*request);
      }
      Push(std::move(entry));
    }
    stats_.RecordEnqueued(level, rows);
    UpdateDepth(level);
    if (ShouldWakeScheduler(queued_rows_ - rows, r.deadline.has_value(),
                            timeout > absl::ZeroDuration()
                                ? now + timeout
                                : absl::InfiniteFuture())) {
      // Decide here rather than wake the scheduler to decide: a batch that can
      // go now goes to an idle instance straight from this thread. The parked
      // scheduler is woken only if its timer must move earlier.
      if (Pump(/*self=*/-1, &failed) < scheduler_wake_at_) cv_.Signal();
    }
    return absl::OkStatus();
  }();
  if (!failed.empty()) {
    // Never run callbacks inside Enqueue (the caller may hold its own locks):
    // the completion thread delivers these rejections.
    Results results;
    results.reserve(failed.size());
    for (auto& [entry, error] : failed)
      results.emplace_back(std::move(entry), std::move(error));
    Deliver(std::move(results), kUnordered);
  }
  return status;
}

bool DynamicBatcher::ShouldWakeScheduler(int64_t rows_before, bool has_deadline,
                                         absl::Time expiry) const {
  // A scheduler that is not parked will look at the queue again anyway.
  if (!scheduler_parked_) return false;
  // A deadline may need an earlier dispatch than the parked scheduler plans
  // (the new request's, or a queued one's: a batch that grows computes
  // longer); a timeout must fire on time.
  if (has_deadline || queued_deadlines_ > 0 || expiry < scheduler_wake_at_)
    return true;
  if (idle_.empty())
    return false;  // nothing can be dispatched until an instance frees
  if (next_look_at_ == absl::InfiniteFuture())
    return true;  // nothing in the queue was waiting for a time
  const BatchPolicyOptions& p = options_.policy;
  if (!p.dynamic_batching || p.max_queue_delay <= absl::ZeroDuration())
    return true;
  if (queued_rows_ >= p.max_batch_rows) return true;
  // A batch full by bytes, or one that ends at a shape break (ordering kept,
  // another length or key), goes at once too; those need the policy to tell.
  if (p.max_batch_bytes > 0 || p.preserve_ordering) return true;
  for (int64_t preferred : p.preferred_batch_sizes) {
    if (rows_before < preferred && queued_rows_ >= preferred) return true;
  }
  // Otherwise the batch can only be dispatched at the next look the queue
  // already needs (its oldest request's delay, which ends before this one's),
  // and the parked scheduler wakes by then: deciding now for every request
  // would cost a snapshot per request.
  return false;
}

void DynamicBatcher::RecordRejection(const Entry& e, RejectReason reason) {
  if (e.split == nullptr) {
    stats_.RecordRejected(e.view.level, reason, e.view.rows);
  } else if (!e.split->rejection_counted.exchange(true)) {
    stats_.RecordRejected(e.view.level, reason, e.split->rows);
  }
}

void DynamicBatcher::Push(std::unique_ptr<Entry> entry) {
  Entry* e = entry.get();
  const absl::Time expiry = ExpiryOf(e->view);
  if (expiry != absl::InfiniteFuture()) {
    e->expiry = expiries_.emplace(expiry, e);
    e->has_expiry = true;
  }
  ++live_[e->view.level];
  live_rows_[e->view.level] += e->view.rows;
  queued_rows_ += e->view.rows;
  if (e->view.deadline != absl::InfiniteFuture()) ++queued_deadlines_;
  (e->view.delayed ? delayed_ : queues_[e->view.level]).push_back(e->view.seq);
  entries_.emplace(e->view.seq, std::move(entry));
}

std::unique_ptr<DynamicBatcher::Entry> DynamicBatcher::Take(Entry* entry) {
  if (entry->has_expiry) {
    expiries_.erase(entry->expiry);
    entry->has_expiry = false;
  }
  --live_[entry->view.level];
  live_rows_[entry->view.level] -= entry->view.rows;
  queued_rows_ -= entry->view.rows;
  if (entry->view.deadline != absl::InfiniteFuture()) --queued_deadlines_;
  auto it = entries_.find(entry->view.seq);
  std::unique_ptr<Entry> out = std::move(it->second);
  entries_.erase(it);
  return out;
}

void DynamicBatcher::UpdateDepth(int level) {
  stats_.SetQueueDepth(level, live_[level], live_rows_[level]);
}

bool DynamicBatcher::Idle() const {
  return entries_.empty() && idle_.size() == engines_.size();
}

void DynamicBatcher::AddToSnapshot(Entry* entry) {
  if (entry->epoch == epoch_) return;
  entry->epoch = epoch_;
  snapshot_.push_back(entry->view);
  snapshot_entries_.push_back(entry);
}

void DynamicBatcher::AddWindow(std::deque<uint64_t>& queue, bool delayed,
                               size_t limit) {
  // Lambdas are analysed on their own; the lock is held by the enclosing
  // function.
  auto live = [&](uint64_t seq) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> Entry* {
    auto it = entries_.find(seq);
    if (it == entries_.end() || it->second->view.delayed != delayed)
      return nullptr;
    return it->second.get();
  };
  while (!queue.empty() && live(queue.front()) == nullptr) queue.pop_front();
  size_t added = 0;
  for (auto it = queue.begin(); it != queue.end() && added < limit; ++it) {
    if (Entry* e = live(*it)) {
      AddToSnapshot(e);
      ++added;
    }
  }
}

absl::Time DynamicBatcher::Pump(int self, Failed* failed) {
  while (true) {
    bool progress = false;
    const absl::Time wake = Step(self, failed, &progress);
    if (!progress) return wake;
  }
}

absl::Time DynamicBatcher::Step(int self, Failed* failed, bool* progress) {
  const absl::Time now = clock_->Now();
  if (draining_ && now >= drain_deadline_) {
    std::vector<Entry*> all;
    for (auto& [seq, entry] : entries_) all.push_back(entry.get());
    for (Entry* e : all) {
      RecordRejection(*e, RejectReason::kShuttingDown);
      failed->emplace_back(Take(e),
                           absl::UnavailableError(absl::StrCat(
                               "model '", model_.name,
                               "' shut down before the request could run")));
    }
    for (int level = 0; level < options_.priority_levels; ++level)
      UpdateDepth(level);
    *progress = !all.empty();
    next_look_at_ = absl::InfiniteFuture();
    return absl::InfiniteFuture();
  }

  // Snapshot: the head of every queue (a batch never needs more requests than
  // rows) and every entry whose timeout or deadline is due.
  ++epoch_;
  snapshot_.clear();
  snapshot_entries_.clear();
  const size_t window =
      options_.policy.dynamic_batching
          ? static_cast<size_t>(std::min<int64_t>(
                options_.policy.max_batch_rows + 1, kMaxWindow))
          : 1;
  for (auto& queue : queues_) AddWindow(queue, /*delayed=*/false, window);
  AddWindow(delayed_, /*delayed=*/true, window);
  for (auto it = expiries_.begin(); it != expiries_.end() && it->first <= now;
       ++it) {
    AddToSnapshot(it->second);
  }

  const bool online_active = now - last_online_enqueue_ < kOnlineActiveWindow;
  // Instances kept free for online requests while they are about.
  const size_t reserved =
      static_cast<size_t>(std::max(0, options_.online_reserved_instances));
  const PolicyContext context{
      now, !idle_.empty(), draining_, online_active,
      !online_active || idle_.size() > reserved || engines_.size() <= reserved};
  auto predict = [this](int64_t rows) { return latency_.Predict(rows); };
  BatchDecision decision =
      DecideBatch(snapshot_, options_.policy, context, predict);

  for (size_t i : decision.timed_out) {
    Entry* e = snapshot_entries_[i];
    RecordRejection(*e, RejectReason::kTimeout);
    failed->emplace_back(Take(e),
                         absl::DeadlineExceededError(absl::StrCat(
                             "request timed out after ",
                             absl::FormatDuration(now - e->view.enqueue_time),
                             " in the queue of model '", model_.name, "'")));
    *progress = true;
  }
  for (size_t i : decision.infeasible) {
    Entry* e = snapshot_entries_[i];
    RecordRejection(*e, RejectReason::kDeadlineInfeasible);
    failed->emplace_back(
        Take(e),
        absl::DeadlineExceededError(absl::StrCat(
            e->view.deadline <= now
                ? "the request's deadline passed in the queue of model '"
                : "the request cannot finish by its deadline on model '",
            model_.name, "'")));
    *progress = true;
  }
  for (size_t i : decision.delayed) {
    Entry* e = snapshot_entries_[i];
    std::unique_ptr<Entry> moved = Take(e);
    moved->view.delayed = true;
    Push(std::move(moved));
    *progress = true;
  }
  if (!decision.dispatch.empty()) {
    const int instance = idle_.back();
    idle_.pop_back();
    auto batch = std::make_unique<Batch>();
    batch->seq = next_batch_seq_++;
    batch->reason = decision.reason;
    batch->background = options_.offline_background && context.online_active &&
                        options_.offline_level >= 0;
    for (size_t i : decision.dispatch) {
      Entry* e = snapshot_entries_[i];
      stats_.RecordQueueTime(e->view.level, now - e->view.enqueue_time);
      batch->background =
          batch->background && e->view.level == options_.offline_level;
      batch->entries.push_back(Take(e));
    }
    slots_[instance] = std::move(batch);
    if (instance != self) instance_cv_[instance].Signal();
    *progress = true;
  }
  if (*progress) {
    for (int level = 0; level < options_.priority_levels; ++level)
      UpdateDepth(level);
    return now;  // look again at once: more may be ready
  }
  absl::Time wake = decision.wake_at;
  if (!expiries_.empty()) wake = std::min(wake, expiries_.begin()->first);
  // Offline records held back while online requests are about (reserved
  // instance, row cap) may go once online traffic stops counting as recent.
  if (online_active && options_.offline_level >= 0 &&
      live_[options_.offline_level] > 0) {
    wake = std::min(wake, last_online_enqueue_ + kOnlineActiveWindow);
  }
  if (draining_) wake = std::min(wake, drain_deadline_);
  // Every due expiry was acted on above; never spin on a time already past.
  if (wake <= now) wake = now + absl::Microseconds(100);
  next_look_at_ = wake;
  return wake;
}

void DynamicBatcher::SchedulerLoop() {
  Failed failed;
  mu_.Lock();
  while (true) {
    bool progress = false;
    const absl::Time wake = Step(/*self=*/-1, &failed, &progress);
    if (!failed.empty()) {
      mu_.Unlock();
      for (auto& [entry, status] : failed) Complete(std::move(entry), status);
      failed.clear();
      mu_.Lock();
      continue;
    }
    if (draining_ && Idle()) break;
    if (wake <= clock_->Now()) continue;
    scheduler_parked_ = true;
    scheduler_wake_at_ = wake;
    clock_->WaitUntil(&mu_, &cv_, wake);
    scheduler_parked_ = false;
  }
  stopping_ = true;
  for (size_t i = 0; i < engines_.size(); ++i) instance_cv_[i].Signal();
  mu_.Unlock();
}

void DynamicBatcher::InstanceLoop(int instance) {
  Failed failed;
  mu_.Lock();
  while (true) {
    while (slots_[instance] == nullptr && !stopping_)
      instance_cv_[instance].Wait(&mu_);
    if (slots_[instance] == nullptr) break;
    std::unique_ptr<Batch> batch = std::move(slots_[instance]);
    mu_.Unlock();
    Execute(instance, *batch);
    batch.reset();
    mu_.Lock();
    idle_.push_back(instance);
    if (draining_ || !scheduler_parked_) {
      // The scheduler decides: it is running anyway, or drains (and watches
      // for the moment everything is idle).
      cv_.Signal();
      continue;
    }
    // Take the next batch (usually into this instance's own slot) without a
    // hand-off through the scheduler thread.
    if (Pump(instance, &failed) < scheduler_wake_at_) cv_.Signal();
    if (!failed.empty()) {
      mu_.Unlock();
      for (auto& [entry, status] : failed) Complete(std::move(entry), status);
      failed.clear();
      mu_.Lock();
    }
  }
  mu_.Unlock();
}

void DynamicBatcher::Execute(int instance, Batch& batch) {
  std::vector<const std::vector<Tensor>*> requests;
  requests.reserve(batch.entries.size());
  int64_t rows = 0;
  for (const auto& e : batch.entries) {
    requests.push_back(&e->inputs);
    rows += e->view.rows;
  }
  std::vector<std::pair<std::unique_ptr<Entry>, Result>> results;
  results.reserve(batch.entries.size());
  auto fail_all = [&](const absl::Status& status) {
    const RejectReason reason =
        status.code() == absl::StatusCode::kInvalidArgument
            ? RejectReason::kInvalidInput
            : RejectReason::kEngineError;
    for (auto& e : batch.entries) {
      RecordRejection(*e, reason);
      results.emplace_back(std::move(e), status);
    }
  };

  absl::StatusOr<AssembledBatch> assembled =
      AssembleBatch(model_, options_.padding, requests);
  if (!assembled.ok()) {
    stats_.RecordDispatched(batch.reason, rows, 0, 0);
    fail_all(assembled.status());
  } else {
    stats_.RecordDispatched(batch.reason, rows, assembled->padded_elements,
                            assembled->total_elements);
    const absl::Time start = clock_->Now();
    // Offline work takes only CPU time the online path does not want: the
    // engine call alone, never while holding a lock the online path needs.
    if (batch.background) SetThreadBackground(true);
    Result outputs = engines_[instance]->Run(assembled->inputs);
    if (batch.background) SetThreadBackground(false);
    const absl::Duration compute = clock_->Now() - start;
    stats_.RecordComputeTime(compute, rows);
    if (!outputs.ok()) {
      fail_all(absl::Status(outputs.status().code(),
                            absl::StrCat("model '", model_.name,
                                         "': ", outputs.status().message())));
    } else {
      // An offline batch run in the background while online requests were
      // about took longer than the engine needs: keep it out of the model
      // that online deadlines are judged by.
      if (!batch.background) latency_.Observe(rows, compute);
      absl::StatusOr<std::vector<std::vector<Tensor>>> split =
          SplitOutputs(model_, *assembled, *std::move(outputs));
      if (!split.ok()) {
        fail_all(split.status());
      } else {
        for (size_t k = 0; k < batch.entries.size(); ++k) {
          results.emplace_back(std::move(batch.entries[k]),
                               std::move((*split)[k]));
        }
      }
    }
  }
  Deliver(std::move(results), batch.seq);
}

void DynamicBatcher::Deliver(Results results, uint64_t batch_seq) {
  {
    MutexLock lock(&completion_mu_);
    // Once the completion thread has been told to stop (an Enqueue that raced
    // Shutdown delivers its rejections after that) nobody would run them.
    const bool inline_delivery =
        completer_stop_ ||
        (batch_seq != kUnordered && !options_.policy.preserve_ordering &&
         results.size() <= kInlineDeliveryMax && completions_.empty());
    if (!inline_delivery) {
      // The instance goes back to work at once; the completion thread runs
      // the callbacks while the engine computes the next batch.
      completions_.emplace_back(batch_seq, std::move(results));
      completion_cv_.Signal();
      return;
    }
  }
  for (auto& [entry, result] : results)
    Complete(std::move(entry), std::move(result));
}

void DynamicBatcher::CompleterLoop() {
  while (true) {
    std::pair<uint64_t, Results> next;
    {
      MutexLock lock(&completion_mu_);
      while (completions_.empty() && !completer_stop_) {
        completion_cv_.Wait(&completion_mu_);
      }
      if (completions_.empty()) return;
      next = std::move(completions_.front());
      completions_.pop_front();
    }
    DeliverNow(std::move(next.second), next.first);
  }
}

void DynamicBatcher::DeliverNow(Results results, uint64_t batch_seq) {
  if (!options_.policy.preserve_ordering || batch_seq == kUnordered) {
    for (auto& [entry, result] : results)
      Complete(std::move(entry), std::move(result));
    return;
  }
  // Hold results until every earlier batch has been delivered. Only the
  // completion thread gets here, so the reorder state needs no lock.
  pending_delivery_.emplace(batch_seq, std::move(results));
  while (!pending_delivery_.empty() &&
         pending_delivery_.begin()->first == next_to_deliver_) {
    for (auto& [entry, result] : pending_delivery_.begin()->second) {
      Complete(std::move(entry), std::move(result));
    }
    pending_delivery_.erase(pending_delivery_.begin());
    ++next_to_deliver_;
  }
}

void DynamicBatcher::Complete(std::unique_ptr<Entry> entry, Result result) {
  const int level = entry->view.level;
  const absl::Duration e2e = clock_->Now() - entry->view.enqueue_time;
  if (entry->request) {
    stats_.RecordCompleted(level, entry->view.rows, result.ok(), e2e);
    entry->request->done(std::move(result));
    return;
  }
  SplitState& s = *entry->split;
  std::unique_ptr<Request> finished;
  Result joined = absl::UnknownError("unset");
  {
    MutexLock lock(&s.mu);
    if (result.ok()) {
      s.outputs[entry->part] = *std::move(result);
    } else if (s.error.ok()) {
      s.error = result.status();
    }
    if (--s.remaining > 0) return;
    finished = std::move(s.request);
    joined = s.error.ok() ? ConcatRows(std::move(s.outputs)) : Result(s.error);
  }
  stats_.RecordCompleted(level, s.rows, joined.ok(), e2e);
  finished->done(std::move(joined));
}

void DynamicBatcher::Shutdown(absl::Duration grace) {
  MutexLock shutdown_lock(&shutdown_mu_);
  if (shut_down_) return;
  shut_down_ = true;
  {
    MutexLock lock(&mu_);
    accepting_ = false;
    draining_ = true;
    const absl::Time now = clock_->Now();
    drain_deadline_ = grace == absl::InfiniteDuration() ? absl::InfiniteFuture()
                                                        : now + grace;
    cv_.Signal();
  }
  if (scheduler_.joinable()) scheduler_.join();
  for (std::thread& t : instances_) t.join();
  {
    MutexLock lock(&completion_mu_);
    completer_stop_ = true;
    completion_cv_.Signal();
  }
  if (completer_.joinable()) completer_.join();
}

}  // namespace ferry
