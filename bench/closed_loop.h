// SPDX-License-Identifier: Apache-2.0
// A closed-loop load generator for in-process request queues: N clients, each
// with one one-row request in flight, sending the next as soon as the answer
// arrives. Clients are either OS threads that sleep until their answer comes
// (every answer wakes a thread, as with blocking callers) or logical clients
// resubmitted by a few driver threads. Plus DirectQueue, the least a queue
// can do (one lock, greedy batches, no policy), so the clients' own cost and
// the cost of any batching at all can be told apart from the batcher's.
//
// Used by bench/batcher_bench only. RunClosedLoop blocks the caller for warm-up
// + duration and joins every thread it started before it returns.
#ifndef FERRY_BENCH_CLOSED_LOOP_H_
#define FERRY_BENCH_CLOSED_LOOP_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "batching/request.h"
#include "core/tensor.h"
#include "cpu_usage.h"
#include "engines/engine.h"

namespace ferry::bench {

// Input rows for the requests: row-major FP32, `features` per row.
struct Rows {
  int64_t features = 0;
  std::vector<float> values;
  int64_t count() const {
    return features == 0 ? 0 : static_cast<int64_t>(values.size()) / features;
  }
  // Row i, wrapping around.
  const float* row(int64_t i) const {
    return values.data() + (i % count()) * features;
  }
};

// Rows from a raw little-endian float32 file, or, for an empty path, 4096
// deterministic pseudo-random rows in [0, 100).
absl::StatusOr<Rows> LoadRows(const std::string& path, int64_t features);

// A [batch, features] tensor of rows first, first+1, ...
absl::StatusOr<Tensor> BatchOf(const std::string& name, const Rows& rows,
                               int64_t first, int64_t batch);

struct ClosedLoopOptions {
  // Clients with one request in flight each. With drivers == 0 every client is
  // an OS thread that sleeps until its answer arrives (so every answer wakes a
  // thread); with drivers > 0 the clients are logical: each callback puts its
  // client back on a ready list and that many driver threads send the next
  // requests (one wake per burst of answers).
  int clients = 256;
  int drivers = 0;
  double warmup_s = 1;
  double duration_s = 5;
  std::string input;  // the input tensor's name
};

// What happened in the measured window.
struct ClosedLoopWindow {
  double wall_s = 0;
  int64_t rows = 0;  // successful one-row requests
  // Per request: enqueue → client awake (client threads) or enqueue →
  // callback (logical clients).
  std::vector<double> latency_ms;
  double callback_s = 0;  // time spent inside the callbacks
  ProcessCpu cpu;         // process CPU in the window
  CpuBreakdown threads;   // by role
  uint64_t errors = 0;    // failed enqueues or responses
  std::string first_error;
};

using EnqueueFn = absl::FunctionRef<absl::Status(std::unique_ptr<Request>*)>;

// Runs the clients against `enqueue` for opts.warmup_s, calls at_start(), runs
// opts.duration_s measuring, calls at_end(), stops and joins the clients, and
// calls stop_queue(), which must return only once no callback is running or
// will run (DynamicBatcher::Shutdown, DirectQueue::Stop): the callbacks use
// state that dies when RunClosedLoop returns. Client (or driver) thread ids are
// added to roles->clients before at_start() runs.
ClosedLoopWindow RunClosedLoop(EnqueueFn enqueue, const Rows& rows,
                               const ClosedLoopOptions& opts,
                               ThreadRoles* roles,
                               absl::FunctionRef<void()> at_start,
                               absl::FunctionRef<void()> at_end,
                               absl::FunctionRef<void()> stop_queue);

// The least a queue in front of an engine can do, to tell the client threads'
// own cost, and the cost of any batching at all, apart from the batcher's:
// one lock, one condition variable and one worker thread per engine (one
// worker when there is none). A worker takes whatever is queued, up to
// `max_rows` requests, with no delay and no policy. Without engines it answers
// every request with an empty output list. With engines it supports exactly
// what bench/batcher_bench sends: one FP32 input of shape [1, features] per
// request, one FP32 output [rows, width]: it concatenates the rows, runs the
// engine once and hands each request its row (or the engine's error).
// Enqueue is safe for concurrent use; Stop() (also run by the destructor)
// answers what is queued and joins the workers; it must not race with Enqueue.
class DirectQueue {
 public:
  explicit DirectQueue(std::vector<Engine*> engines = {},
                       int64_t max_rows = 256);
  ~DirectQueue();
  DirectQueue(const DirectQueue&) = delete;
  DirectQueue& operator=(const DirectQueue&) = delete;

  absl::Status Enqueue(std::unique_ptr<Request>* request);
  void Stop();
  // Worker thread ids, valid once the constructor returns.
  const std::vector<int>& worker_tids() const { return worker_tids_; }
  // Batches run and rows in them (engines only).
  int64_t batches() const { return batches_.load(); }
  int64_t rows() const { return rows_.load(); }
  // Seconds spent in Engine::Run, all workers together.
  double compute_s() const {
    return 1e-9 * static_cast<double>(compute_ns_.load());
  }

 private:
  void Loop(Engine* engine);
  void Run(Engine& engine, std::vector<std::unique_ptr<Request>>& batch);

  const std::vector<Engine*> engines_;
  const int64_t max_rows_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Request>> queue_;
  bool stop_ = false;
  std::vector<int> worker_tids_;
  std::vector<std::thread> workers_;
  std::atomic<int64_t> batches_{0};
  std::atomic<int64_t> rows_{0};
  std::atomic<int64_t> compute_ns_{0};
};

}  // namespace ferry::bench

#endif  // FERRY_BENCH_CLOSED_LOOP_H_
