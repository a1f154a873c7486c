// SPDX-License-Identifier: Apache-2.0
#include "engine_loops.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "batcher_under_test.h"
#include "batching/dynamic_batcher.h"
#include "batching/request.h"
#include "core/tensor.h"

namespace ferry::bench {
namespace {

void FillFromWindow(const ClosedLoopWindow& w, ClosedLoopResult* r) {
  const double rows = static_cast<double>(w.rows);
  r->rows_per_s = rows / w.wall_s;
  r->wall_s = w.wall_s;
  r->p50_ms = Percentile(w.latency_ms, 0.50);
  r->p99_ms = Percentile(w.latency_ms, 0.99);
  r->callback_us_per_row = rows == 0 ? 0 : 1e6 * w.callback_s / rows;
  r->cpu = w.cpu;
  r->cpu_cores = w.cpu.total() / w.wall_s;
  r->cpu_us_per_row = rows == 0 ? 0 : 1e6 * w.cpu.total() / rows;
  r->errors = w.errors;
  r->threads = w.threads;
  if (w.errors != 0) {
    std::fprintf(stderr, "closed loop (%s): %llu errors, first: %s\n",
                 r->label.c_str(), static_cast<unsigned long long>(w.errors),
                 w.first_error.c_str());
  }
}

}  // namespace

absl::StatusOr<ClosedLoopResult> BatcherLoop(
    const ModelOptions& base, bool batching, uint64_t delay_us,
    const std::vector<Engine*>& engines, const Rows& rows,
    const ClosedLoopOptions& opts) {
  ModelOptions model = base;
  model.dynamic_batching = DynamicBatchingOptions{};
  if (batching) {
    model.max_batch_size = 256;
    model.dynamic_batching.enabled = true;
    model.dynamic_batching.max_queue_delay_us = delay_us;
  } else {
    model.max_batch_size = 1;  // Triton's "no batching": each request alone
  }
  absl::StatusOr<std::unique_ptr<BatcherUnderTest>> but =
      StartBatcher(model, engines);
  if (!but.ok()) return but.status();
  DynamicBatcher& batcher = *(*but)->batcher;
  BatcherStatsSnapshot s0, s1;
  ClosedLoopWindow w = RunClosedLoop(
      [&batcher](std::unique_ptr<Request>* r) { return batcher.Enqueue(r); },
      rows, opts, &(*but)->roles,
      [&] {
        (*but)->NoteInstanceThreads();
        s0 = batcher.stats();
      },
      [&] { s1 = batcher.stats(); }, [&batcher] { batcher.Shutdown(); });

  ClosedLoopResult r;
  r.label = batching ? "batching on" : "batching off";
  r.max_batch_size = model.max_batch_size;
  r.max_queue_delay_us = model.dynamic_batching.max_queue_delay_us;
  FillFromWindow(w, &r);
  const uint64_t batches = s1.batches - s0.batches;
  r.avg_batch = batches == 0
                    ? 0
                    : static_cast<double>(s1.rows_executed - s0.rows_executed) /
                          static_cast<double>(batches);
  r.engine_busy = (s1.compute_time_us.sum - s0.compute_time_us.sum) /
                  (1e6 * w.wall_s * static_cast<double>(engines.size()));
  return r;
}

ClosedLoopResult DirectLoop(const Rows& rows, const ClosedLoopOptions& opts,
                            const std::vector<Engine*>& engines) {
  ThreadRoles roles;
  DirectQueue queue(engines, 256);
  for (int tid : queue.worker_tids()) {
    roles.batcher.insert(tid);
    roles.instances.insert(tid);
  }
  int64_t batches0 = 0, rows0 = 0, batches1 = 0, rows1 = 0;
  double compute0 = 0, compute1 = 0;
  ClosedLoopWindow w = RunClosedLoop(
      [&queue](std::unique_ptr<Request>* r) { return queue.Enqueue(r); }, rows,
      opts, &roles,
      [&] {
        batches0 = queue.batches();
        rows0 = queue.rows();
        compute0 = queue.compute_s();
      },
      [&] {
        batches1 = queue.batches();
        rows1 = queue.rows();
        compute1 = queue.compute_s();
      },
      [&queue] { queue.Stop(); });
  ClosedLoopResult r;
  r.label = engines.empty() ? "clients only" : "greedy DirectQueue";
  FillFromWindow(w, &r);
  if (batches1 > batches0) {
    r.avg_batch = static_cast<double>(rows1 - rows0) /
                  static_cast<double>(batches1 - batches0);
    r.engine_busy = (compute1 - compute0) /
                    (w.wall_s * static_cast<double>(engines.size()));
  }
  return r;
}

absl::StatusOr<BareResult> Bare(const std::vector<Engine*>& engines,
                                const std::string& input, const Rows& rows,
                                int64_t batch, double seconds) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < engines.size(); ++i) {
    absl::StatusOr<Tensor> t =
        BatchOf(input, rows, static_cast<int64_t>(i) * 1009, batch);
    if (!t.ok()) return t.status();
    inputs.push_back(*std::move(t));
  }
  std::vector<double> rates(engines.size(), 0);
  std::vector<int64_t> all_calls(engines.size(), 0);
  std::vector<absl::Status> statuses(engines.size());
  std::vector<std::thread> threads;
  const ProcessCpu cpu_start = ProcessCpuNow();
  for (size_t i = 0; i < engines.size(); ++i) {
    threads.emplace_back([&, i] {
      auto run_for = [&](double s, int64_t* calls) -> absl::Status {
        const auto start = SteadyClock::now();
        do {
          absl::StatusOr<std::vector<Tensor>> out =
              engines[i]->Run(absl::MakeConstSpan(&inputs[i], 1));
          if (!out.ok()) return out.status();
          ++*calls;
        } while (SecondsSince(start) < s);
        return absl::OkStatus();
      };
      int64_t calls = 0;
      statuses[i] = run_for(std::min(0.3, seconds / 4), &calls);  // warm-up
      if (!statuses[i].ok()) return;
      all_calls[i] = calls;
      calls = 0;
      const auto start = SteadyClock::now();
      statuses[i] = run_for(seconds, &calls);
      rates[i] = static_cast<double>(calls * batch) / SecondsSince(start);
      all_calls[i] += calls;
    });
  }
  for (auto& t : threads) t.join();
  const ProcessCpu cpu = ProcessCpuNow() - cpu_start;
  BareResult r;
  r.batch = batch;
  int64_t rows_run = 0;
  for (size_t i = 0; i < engines.size(); ++i) {
    if (!statuses[i].ok()) return statuses[i];
    r.rows_per_s += rates[i];
    rows_run += all_calls[i] * batch;
  }
  if (rows_run > 0) {
    r.cpu_us_per_row = 1e6 * cpu.total() / static_cast<double>(rows_run);
  }
  return r;
}

std::string ClosedLoopJson(const ClosedLoopResult& r) {
  return absl::StrFormat(
      "{\"max_batch_size\":%d,\"max_queue_delay_us\":%d,\"rows_per_s\":%.1f,"
      "\"avg_batch\":%.2f,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"engine_busy\":%."
      "3f,\"callback_us_per_row\":%.3f,\"cpu_cores\":%.3f,\"cpu_user_s\":%.3f,"
      "\"cpu_sys_s\":%.3f,\"cpu_us_per_row\":%.2f,\"errors\":%d,"
      "\"threads\":%s}",
      r.max_batch_size, r.max_queue_delay_us, r.rows_per_s, r.avg_batch,
      r.p50_ms, r.p99_ms, r.engine_busy, r.callback_us_per_row, r.cpu_cores,
      r.cpu.user_s, r.cpu.sys_s, r.cpu_us_per_row, r.errors,
      CpuJson(r.threads));
}

std::string ClosedLoopLine(const ClosedLoopResult& r) {
  return absl::StrFormat(
      "%s rows/s, avg batch %.1f, latency p50 %.2f ms p99 %.2f ms, engine "
      "busy %.0f%%, process CPU %.2f cores (%.0f%% system) = %.1f µs/row "
      "(%s; callbacks %.2f µs/row; context switches per row: %s)",
      FormatRate(r.rows_per_s), r.avg_batch, r.p50_ms, r.p99_ms,
      100 * r.engine_busy, r.cpu_cores,
      r.cpu.total() > 0 ? 100 * r.cpu.sys_s / r.cpu.total() : 0.0,
      r.cpu_us_per_row, CpuShares(r.threads, "clients"), r.callback_us_per_row,
      SwitchesPerItem(r.threads, r.rows_per_s * r.wall_s, "clients"));
}

double Ceiling(unsigned cores, const ClosedLoopResult& clients,
               const BareResult& bare) {
  const double per_row = clients.cpu_us_per_row + bare.cpu_us_per_row;
  if (per_row <= 0) return 0;
  return std::min(bare.rows_per_s, 1e6 * static_cast<double>(cores) / per_row);
}

}  // namespace ferry::bench
