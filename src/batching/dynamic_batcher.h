// SPDX-License-Identifier: Apache-2.0
// DynamicBatcher: one model version's request queue, scheduler and engine
// instances.
//
// Requests (online or offline) are enqueued with a priority; DecideBatch()
// decides when to form a batch and which requests go in it, on whichever thread
// holds the queue's lock when the decision may change (an enqueuer, an instance
// that just finished, or the scheduler thread, which sleeps until the earliest
// timer); each of the model's engine instances has its own thread that
// assembles the batch into contiguous tensors, runs the engine and hands every
// request its slice of the outputs. A batch stays open to new requests until an
// instance is free to take it.
//
// Threads: Enqueue() may be called from any thread and never blocks; it never
// runs a callback. Callbacks run on the batcher's completion thread, an
// instance thread (small batches at low load, rejections it found) or the
// scheduler thread (timeouts, deadline and drain rejections); they must be
// cheap. Ownership: Enqueue takes the request only on success (it then calls
// `done` exactly once); on failure the caller still holds it. The batcher
// drives the given engine instances exclusively and keeps `owner` (whatever
// owns them) alive until it is gone. Shutdown: Shutdown(grace) stops accepting,
// runs what is queued for up to `grace`, rejects what is left with UNAVAILABLE,
// waits for running batches and joins the threads. The destructor calls
// Shutdown(absl::InfiniteDuration()) if it has not run.
#ifndef FERRY_BATCHING_DYNAMIC_BATCHER_H_
#define FERRY_BATCHING_DYNAMIC_BATCHER_H_

#include <deque>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "batching/batch_stats.h"
#include "batching/batcher_options.h"
#include "batching/latency_model.h"
#include "batching/request.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "engines/engine.h"

namespace ferry {

class DynamicBatcher {
 public:
  // Starts the scheduler thread and one thread per engine instance. `model` is
  // the validated config the instances were loaded with.
  static absl::StatusOr<std::unique_ptr<DynamicBatcher>> Create(
      std::shared_ptr<const void> owner, ModelOptions model,
      std::vector<Engine*> instances, BatcherOptions options, Clock* clock);

  ~DynamicBatcher();
  DynamicBatcher(const DynamicBatcher&) = delete;
  DynamicBatcher& operator=(const DynamicBatcher&) = delete;

  // Never blocks. On success `*request` is null and the batcher owns the
  // request. Errors: INVALID_ARGUMENT (inputs do not fit the model, priority
  // out of range, no callback), UNAVAILABLE (the level's queue is full, or
  // shutting down), DEADLINE_EXCEEDED (the deadline has passed).
  absl::Status Enqueue(std::unique_ptr<Request>* request)
      ABSL_LOCKS_EXCLUDED(mu_);

  // See the header comment. Idempotent; safe to call from any thread but a
  // callback.
  void Shutdown(absl::Duration grace = absl::InfiniteDuration())
      ABSL_LOCKS_EXCLUDED(mu_);

  BatcherStatsSnapshot stats() const {
    BatcherStatsSnapshot s = stats_.Snapshot();
    s.offline_level = options_.offline_level;
    return s;
  }
  const ModelOptions& model() const { return model_; }
  const BatcherOptions& options() const { return options_; }
  const LatencyModel& latency_model() const { return latency_; }

 private:
  struct Entry;
  struct SplitState;
  struct Batch;

  DynamicBatcher(std::shared_ptr<const void> owner, ModelOptions model,
                 std::vector<Engine*> instances, BatcherOptions options,
                 Clock* clock);

  using Failed = std::vector<std::pair<std::unique_ptr<Entry>, absl::Status>>;

  void SchedulerLoop() ABSL_LOCKS_EXCLUDED(mu_);
  void InstanceLoop(int instance) ABSL_LOCKS_EXCLUDED(mu_);
  // One scheduling step under the lock: rejections go to `failed`; a formed
  // batch goes to a free instance (not signalled if it is `self`, the calling
  // instance). Sets `*progress` when it rejected, moved or dispatched
  // anything; returns when to look again.
  absl::Time Step(int self, Failed* failed, bool* progress)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Steps until one makes no progress, on whichever thread holds the lock (an
  // enqueuer, an instance that just finished, the scheduler): the scheduler
  // thread is woken only for timers, not for every decision. Returns when to
  // look again.
  absl::Time Pump(int self, Failed* failed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::unique_ptr<Entry> Take(Entry* entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Appends up to `limit` live entries of `queue` to the snapshot.
  void AddWindow(std::deque<uint64_t>& queue, bool delayed, size_t limit)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AddToSnapshot(Entry* entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts a rejected entry in the statistics: a whole request with its rows,
  // a split request once however many of its parts are rejected.
  void RecordRejection(const Entry& e, RejectReason reason);
  void Push(std::unique_ptr<Entry> entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UpdateDepth(int level) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Idle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether an enqueue that took the queue from `rows_before` rows needs the
  // parked scheduler now, rather than at its timer.
  bool ShouldWakeScheduler(int64_t rows_before, bool has_deadline,
                           absl::Time expiry) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  void Execute(int instance, Batch& batch) ABSL_LOCKS_EXCLUDED(mu_);
  // Delivers a result for one queue entry (a whole request or one part of a
  // split one).
  void Complete(std::unique_ptr<Entry> entry,
                absl::StatusOr<std::vector<Tensor>> result);
  using Results = std::vector<
      std::pair<std::unique_ptr<Entry>, absl::StatusOr<std::vector<Tensor>>>>;
  // Runs a finished batch's callbacks: on the calling instance thread when
  // the batch is small and the completion thread has nothing queued (low
  // load: one thread hand-off less), else on the completion thread while the
  // instance computes the next batch. kUnordered: rejections, no batch order.
  static constexpr uint64_t kUnordered = ~uint64_t{0};
  void Deliver(Results results, uint64_t batch_seq)
      ABSL_LOCKS_EXCLUDED(completion_mu_);
  // Runs the callbacks (completion thread), in batch order when
  // preserve_ordering.
  void DeliverNow(Results results, uint64_t batch_seq);
  void CompleterLoop() ABSL_LOCKS_EXCLUDED(completion_mu_);

  const std::shared_ptr<const void> owner_;
  const ModelOptions model_;
  const std::vector<Engine*> engines_;
  const BatcherOptions options_;
  Clock* const clock_;
  BatcherStats stats_;
  LatencyModel latency_;

  mutable Mutex mu_;
  // Condition variables on one mutex: cv_ wakes the scheduler (a timer moved
  // earlier, drain, shutdown), instance_cv_[i] instance i (a batch in its
  // slot, or stop).
  CondVar cv_;
  std::unique_ptr<CondVar[]> instance_cv_;
  // Queued entries by sequence number. The per-level queues and the delayed
  // queue hold sequence numbers in arrival order; a number whose entry was
  // taken (or, in a level queue, moved to the delayed queue) is skipped and
  // dropped once it reaches the front.
  absl::flat_hash_map<uint64_t, std::unique_ptr<Entry>> entries_
      ABSL_GUARDED_BY(mu_);
  std::vector<std::deque<uint64_t>> queues_ ABSL_GUARDED_BY(mu_);
  std::deque<uint64_t> delayed_ ABSL_GUARDED_BY(mu_);
  // Entries with a finite timeout or deadline, by the earlier of the two.
  std::multimap<absl::Time, Entry*> expiries_ ABSL_GUARDED_BY(mu_);
  std::vector<int64_t> live_ ABSL_GUARDED_BY(mu_);  // queued entries per level
  std::vector<int64_t> live_rows_ ABSL_GUARDED_BY(mu_);
  int64_t queued_rows_ ABSL_GUARDED_BY(mu_) = 0;  // over all levels
  // Queued entries with a deadline: while there are any, every enqueue
  // decides (a batch that grows may have to go earlier).
  int64_t queued_deadlines_ ABSL_GUARDED_BY(mu_) = 0;
  // The scheduler is parked in WaitUntil until scheduler_wake_at_ (or a
  // signal).
  bool scheduler_parked_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time scheduler_wake_at_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  // When the queue as it is needs its next look, from the last step that
  // changed nothing (on any thread). The parked scheduler's timer is at or
  // before it (a step that finds an earlier time wakes the scheduler), but it
  // may be stale and later than the queue needs: the timer of a request that
  // another thread has since dispatched.
  absl::Time next_look_at_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) =
      0;  // marks entries already in the snapshot
  std::vector<QueuedRequest> snapshot_ ABSL_GUARDED_BY(mu_);
  std::vector<Entry*> snapshot_entries_ ABSL_GUARDED_BY(mu_);
  uint64_t next_batch_seq_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::unique_ptr<Batch>> slots_
      ABSL_GUARDED_BY(mu_);                     // per instance
  std::vector<int> idle_ ABSL_GUARDED_BY(mu_);  // free instances
  bool accepting_ ABSL_GUARDED_BY(mu_) = true;
  // When the last online request was accepted: for a second after it,
  // offline rows per batch are capped (BatchPolicyOptions::max_offline_rows).
  static constexpr absl::Duration kOnlineActiveWindow = absl::Seconds(1);
  absl::Time last_online_enqueue_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;  // instance threads exit
  absl::Time drain_deadline_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();

  // Finished batches wait here for the completion thread, which runs the
  // callbacks.
  Mutex completion_mu_;
  CondVar completion_cv_;
  std::deque<std::pair<uint64_t, Results>> completions_
      ABSL_GUARDED_BY(completion_mu_);
  bool completer_stop_ ABSL_GUARDED_BY(completion_mu_) = false;
  std::thread completer_;

  // preserve_ordering: batch results are delivered in batch order.
  // Completion thread only.
  uint64_t next_to_deliver_ = 0;
  std::map<uint64_t, Results> pending_delivery_;

  Mutex shutdown_mu_;  // serialises Shutdown()
  bool shut_down_ ABSL_GUARDED_BY(shutdown_mu_) = false;
  std::thread scheduler_;
  std::vector<std::thread> instances_;
};

}  // namespace ferry

#endif  // FERRY_BATCHING_DYNAMIC_BATCHER_H_
