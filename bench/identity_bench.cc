// SPDX-License-Identifier: Apache-2.0
#include "identity_bench.h"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "batcher_under_test.h"
#include "batching/request.h"
#include "core/tensor.h"
#include "engines/identity/identity_engine.h"

namespace ferry::bench {
namespace {

ModelOptions IdentityModel(int max_batch) {
  ModelOptions m;
  m.name = "identity_bench";
  m.platform = "identity";
  m.max_batch_size = max_batch;
  m.inputs = {{"x", DataType::kFp32, {1}}};
  m.outputs = {{"y", DataType::kFp32, {1}}};
  m.instance_groups = {{}};
  m.dynamic_batching.enabled = true;
  m.dynamic_batching.max_queue_delay_us = 0;
  return m;
}

// Pins the calling thread to `cpu`; returns its previous CPU set.
cpu_set_t PinTo(int cpu) {
  cpu_set_t before;
  CPU_ZERO(&before);
  pthread_getaffinity_np(pthread_self(), sizeof(before), &before);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
  return before;
}

// Median round trip of a condition-variable ping-pong between two threads;
// with `same_core` both run on the caller's current CPU, so every wake-up is a
// plain context switch (no idle core to wake, no inter-processor interrupt).
double PingPongP50Us(int rounds, bool same_core) {
  const int cpu = same_core ? sched_getcpu() : -1;
  cpu_set_t before;
  if (cpu >= 0) before = PinTo(cpu);
  std::mutex mu;
  std::condition_variable cv;
  int turn = 0;  // 1: the partner's move, 0: ours
  std::thread partner([&] {
    if (cpu >= 0) PinTo(cpu);
    for (int i = 0; i < rounds; ++i) {
      std::unique_lock<std::mutex> l(mu);
      cv.wait(l, [&] { return turn == 1; });
      turn = 0;
      cv.notify_one();
    }
  });
  std::vector<double> us;
  us.reserve(rounds);
  for (int i = 0; i < rounds; ++i) {
    const auto start = SteadyClock::now();
    std::unique_lock<std::mutex> l(mu);
    turn = 1;
    cv.notify_one();
    cv.wait(l, [&] { return turn == 0; });
    us.push_back(
        std::chrono::duration<double, std::micro>(SteadyClock::now() - start)
            .count());
  }
  partner.join();
  if (cpu >= 0) pthread_setaffinity_np(pthread_self(), sizeof(before), &before);
  return Percentile(us, 0.5);
}

absl::StatusOr<std::unique_ptr<Engine>> IdentityEngine(
    const ModelOptions& model) {
  EngineLoadContext ctx;
  ctx.options = model;
  return IdentityEngineFactory().Create(ctx);
}

}  // namespace

absl::StatusOr<SaturationResult> IdentitySaturation(int producers,
                                                    int64_t total) {
  const ModelOptions model = IdentityModel(64);
  absl::StatusOr<std::unique_ptr<Engine>> engine = IdentityEngine(model);
  if (!engine.ok()) return engine.status();
  absl::StatusOr<std::unique_ptr<BatcherUnderTest>> but =
      StartBatcher(model, {engine->get()});
  if (!but.ok()) return but.status();
  DynamicBatcher& batcher = *(*but)->batcher;

  const int64_t per = total / producers;
  const int64_t n = per * producers;
  std::atomic<int64_t> completed{0};
  std::atomic<int64_t> failed{0};
  absl::Notification all_done;
  // Requests are built before the clock starts: building one is the client's
  // cost, not the batcher's.
  std::vector<std::vector<std::unique_ptr<Request>>> work(producers);
  for (int p = 0; p < producers; ++p) {
    work[p].reserve(per);
    for (int64_t i = 0; i < per; ++i) {
      auto r = std::make_unique<Request>();
      absl::StatusOr<Tensor> t =
          Tensor::FromValues<float>("x", {1, 1}, {static_cast<float>(i)});
      if (!t.ok()) return t.status();
      r->inputs.push_back(*std::move(t));
      r->done = [&completed, &failed, &all_done,
                 n](absl::StatusOr<std::vector<Tensor>> result) {
        if (!result.ok()) failed.fetch_add(1, std::memory_order_relaxed);
        if (completed.fetch_add(1, std::memory_order_acq_rel) + 1 == n) {
          all_done.Notify();
        }
      };
      work[p].push_back(std::move(r));
    }
  }

  std::atomic<uint64_t> retries{0};
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  absl::Notification measured;  // producers stay alive until their CPU is read
  std::vector<int> producer_tids(producers, 0);
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      producer_tids[p] = GetTid();
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      uint64_t local_retries = 0;
      for (auto& r : work[p]) {
        while (true) {
          absl::Status s = batcher.Enqueue(&r);
          if (s.ok()) break;
          if (s.code() != absl::StatusCode::kUnavailable) {
            std::fprintf(stderr, "identity enqueue failed: %s\n",
                         s.ToString().c_str());
            std::abort();
          }
          ++local_retries;  // queue full: let the batcher drain it
          std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
      }
      retries.fetch_add(local_retries);
      measured.WaitForNotification();
    });
  }
  while (ready.load() < producers) std::this_thread::yield();
  for (int tid : producer_tids) (*but)->roles.clients.insert(tid);
  const auto threads0 = ThreadSamplesNow();
  const ProcessCpu cpu0 = ProcessCpuNow();
  const auto start = SteadyClock::now();
  go.store(true, std::memory_order_release);
  all_done.WaitForNotification();
  SaturationResult r;
  r.wall_s = SecondsSince(start);
  r.cpu = ProcessCpuNow() - cpu0;
  (*but)->NoteInstanceThreads();
  r.threads = Breakdown(threads0, ThreadSamplesNow(), (*but)->roles);
  measured.Notify();
  for (auto& t : threads) t.join();
  if (failed.load() != 0) {
    return absl::InternalError(
        absl::StrCat(failed.load(), " identity requests failed"));
  }
  r.requests = n;
  r.requests_per_s = static_cast<double>(n) / r.wall_s;
  r.wall_us_per_request = 1e6 / r.requests_per_s;
  r.cpu_us_per_request = 1e6 * r.cpu.total() / static_cast<double>(n);
  r.avg_batch = batcher.stats().average_batch_rows();
  r.retries = retries.load();
  batcher.Shutdown();
  return r;
}

absl::StatusOr<LowLoadResult> IdentityLowLoad(int requests) {
  const ModelOptions model = IdentityModel(64);
  absl::StatusOr<std::unique_ptr<Engine>> engine = IdentityEngine(model);
  if (!engine.ok()) return engine.status();
  absl::StatusOr<std::unique_ptr<BatcherUnderTest>> but =
      StartBatcher(model, {engine->get()});
  if (!but.ok()) return but.status();
  DynamicBatcher& batcher = *(*but)->batcher;

  const int warmup = std::max(100, requests / 20);
  std::vector<double> callback_us, round_trip_us;
  callback_us.reserve(requests);
  round_trip_us.reserve(requests);
  for (int i = 0; i < warmup + requests; ++i) {
    absl::Notification done;
    SteadyClock::time_point called;
    bool ok = false;
    auto r = std::make_unique<Request>();
    absl::StatusOr<Tensor> t = Tensor::FromValues<float>("x", {1, 1}, {1.0f});
    if (!t.ok()) return t.status();
    r->inputs.push_back(*std::move(t));
    r->done = [&](absl::StatusOr<std::vector<Tensor>> result) {
      called = SteadyClock::now();
      ok = result.ok();
      done.Notify();
    };
    const auto start = SteadyClock::now();
    absl::Status s = batcher.Enqueue(&r);
    if (!s.ok()) return s;
    done.WaitForNotification();
    const auto back = SteadyClock::now();
    if (!ok) return absl::InternalError("identity request failed at low load");
    if (i >= warmup) {
      callback_us.push_back(
          std::chrono::duration<double, std::micro>(called - start).count());
      round_trip_us.push_back(
          std::chrono::duration<double, std::micro>(back - start).count());
    }
  }
  batcher.Shutdown();
  LowLoadResult r;
  r.requests = requests;
  r.callback_p50_us = Percentile(callback_us, 0.50);
  r.callback_p99_us = Percentile(callback_us, 0.99);
  r.round_trip_p50_us = Percentile(round_trip_us, 0.50);
  r.round_trip_p99_us = Percentile(round_trip_us, 0.99);
  r.ping_pong_p50_us = PingPongP50Us(requests, /*same_core=*/false);
  r.ping_pong_same_core_p50_us = PingPongP50Us(requests, /*same_core=*/true);
  return r;
}

}  // namespace ferry::bench
