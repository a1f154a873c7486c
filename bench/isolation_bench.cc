// SPDX-License-Identifier: Apache-2.0
// isolation_bench: does an offline job hurt online latency?
//
// One process, one model (the fraud_xgb example by default), as in
// `ferry serve` with a job running: online requests of one row arrive
// open-loop (Poisson, --rate per second; latency counted from the scheduled
// send time, so a stall is not hidden by a waiting client) and go through
// ModelManager::Infer at the online level; in the second phase a JobRunner
// scores a CSV of --offline-rows rows into the same model's batcher at the
// offline level. Prints online p50/p99/p99.9 for both phases, the p99 ratio and
// the offline rows/s, and appends them to bench/RESULTS.md with --record.
//
//   build/bench/isolation_bench --model-repository example-models
//       --model fraud_xgb --rate 2000 --seconds 10 --record bench/RESULTS.md
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "core/mutex.h"
#include "engines/engine_registry.h"
#include "engines/xgboost/xgboost_engine.h"
#include "jobs/job_runner.h"
#include "loadgen/latency_stats.h"
#include "repository/model_manager.h"
#include "storage/sqlite_job_store.h"

namespace ferry {
namespace {

namespace fs = std::filesystem;

struct Latencies {
  Mutex mu;
  std::vector<double> us ABSL_GUARDED_BY(mu);       // scheduled → answer
  std::vector<double> late_us ABSL_GUARDED_BY(mu);  // scheduled → sent
  std::atomic<int64_t> errors{0};
};

struct Phase {
  double p50 = 0, p99 = 0, p999 = 0;
  int64_t sent = 0, errors = 0;
  std::string split;  // the batcher's view of the phase (Split)
};

// `after` minus `before`, bucket by bucket.
HistogramSnapshot Minus(const HistogramSnapshot& after,
                        const HistogramSnapshot& before) {
  HistogramSnapshot d = after;
  if (before.counts.size() != after.counts.size()) return d;
  for (size_t i = 0; i < d.counts.size(); ++i) d.counts[i] -= before.counts[i];
  d.count -= before.count;
  d.sum -= before.sum;
  return d;
}

// Where an online request's time went during a phase, from the batcher's
// statistics: queue time and enqueue → response at the online level, batch
// rows and engine time per batch (bucketed, so quantiles are estimates).
std::string Split(const BatcherStatsSnapshot& before,
                  const BatcherStatsSnapshot& after) {
  if (before.levels.empty() || after.levels.empty()) return "";
  const HistogramSnapshot queue =
      Minus(after.levels[0].queue_time_us, before.levels[0].queue_time_us);
  const HistogramSnapshot e2e =
      Minus(after.levels[0].end_to_end_us, before.levels[0].end_to_end_us);
  const HistogramSnapshot rows =
      Minus(after.batch_size_rows, before.batch_size_rows);
  const HistogramSnapshot compute =
      Minus(after.compute_time_us, before.compute_time_us);
  return absl::StrFormat(
      "    batcher: online queue p50 %.0f p99 %.0f us, enqueue->response p50 "
      "%.0f p99 %.0f us; %d batches, mean %.1f rows, compute mean %.0f p99 "
      "%.0f us\n",
      queue.Quantile(0.5), queue.Quantile(0.99), e2e.Quantile(0.5),
      e2e.Quantile(0.99), rows.count, rows.Mean(), compute.Mean(),
      compute.Quantile(0.99));
}

BatcherStatsSnapshot StatsOf(const ModelManager& manager,
                             const std::string& model) {
  absl::StatusOr<std::vector<ModelVersionStatistics>> stats =
      manager.Statistics(model);
  if (!stats.ok() || stats->empty()) return {};
  return stats->front().stats;
}

// Moves the calling thread to SCHED_FIFO (priority 1) or back to
// SCHED_OTHER; 0 or the error number.
int SetSenderFifo(bool fifo) {
  sched_param param{};
  param.sched_priority = fifo ? 1 : 0;
  return pthread_setschedparam(pthread_self(), fifo ? SCHED_FIFO : SCHED_OTHER,
                               &param);
}

// Sends Poisson arrivals at `rate` for `seconds`; waits for every answer.
// With `fifo` the sending thread runs under SCHED_FIFO meanwhile (only then:
// threads it starts would inherit the policy).
Phase RunOnline(ModelManager& manager, const std::string& model, int features,
                double rate, double seconds, uint64_t seed, bool fifo) {
  if (fifo) SetSenderFifo(true);
  struct Restore {
    bool fifo;
    ~Restore() {
      if (fifo) SetSenderFifo(false);
    }
  } restore{fifo};
  auto lat = std::make_shared<Latencies>();
  const BatcherStatsSnapshot before = StatsOf(manager, model);
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate);
  std::normal_distribution<float> value;
  std::atomic<int64_t> outstanding{0};
  const auto start = std::chrono::steady_clock::now();
  auto next = start;
  int64_t sent = 0;
  std::vector<double> call_us;  // time inside Infer, on this thread
  while (true) {
    next += std::chrono::nanoseconds(static_cast<int64_t>(gap(rng) * 1e9));
    if (next - start > std::chrono::duration<double>(seconds)) break;
    std::this_thread::sleep_until(next);
    std::vector<float> row(features);
    for (float& f : row) f = value(rng);
    InferenceRequest r;
    r.inputs.push_back(
        *Tensor::FromValues<float>("input__0", {1, features}, std::move(row)));
    const auto scheduled = next;
    const double late = std::chrono::duration<double, std::micro>(
                            std::chrono::steady_clock::now() - scheduled)
                            .count();
    ++outstanding;
    ++sent;
    const auto call = std::chrono::steady_clock::now();
    manager.Infer(model, std::nullopt, std::move(r),
                  [lat, scheduled, late,
                   &outstanding](absl::StatusOr<InferenceResponse> response) {
                    const double us =
                        std::chrono::duration<double, std::micro>(
                            std::chrono::steady_clock::now() - scheduled)
                            .count();
                    if (!response.ok()) ++lat->errors;
                    {
                      MutexLock lock(&lat->mu);
                      lat->us.push_back(us);
                      lat->late_us.push_back(late);
                    }
                    --outstanding;
                  });
    call_us.push_back(std::chrono::duration<double, std::micro>(
                          std::chrono::steady_clock::now() - call)
                          .count());
  }
  while (outstanding.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  Phase p;
  MutexLock lock(&lat->mu);
  const LatencySummary late = Summarize(&lat->late_us);
  const LatencySummary in_call = Summarize(&call_us);
  p.split = absl::StrCat(
      absl::StrFormat("    sender: late p50 %.0f p99 %.0f us (counted in the "
                      "latency); Infer call p50 %.0f p99 %.0f max %.0f us\n",
                      late.p50_us, late.p99_us, in_call.p50_us, in_call.p99_us,
                      in_call.max_us),
      Split(before, StatsOf(manager, model)));
  const LatencySummary summary = Summarize(&lat->us);  // sorts in place
  p.p50 = summary.p50_us;
  p.p99 = summary.p99_us;
  p.p999 = summary.p999_us;
  p.sent = sent;
  p.errors = lat->errors.load();
  return p;
}

void WriteCsv(const fs::path& path, int64_t rows, int features) {
  std::ofstream out(path);
  out << "id";
  for (int f = 0; f < features; ++f) out << ",f" << f;
  out << "\n";
  std::mt19937_64 rng(3);
  std::normal_distribution<float> value;
  std::string line;
  for (int64_t i = 0; i < rows; ++i) {
    line = absl::StrCat(i);
    for (int f = 0; f < features; ++f) {
      absl::StrAppend(&line, ",", absl::StrFormat("%.5g", value(rng)));
    }
    line += "\n";
    out << line;
  }
}

int Main(int argc, char** argv) {
  CLI::App app{"Online latency with and without an offline job"};
  std::string repo = "example-models";
  std::string model = "fraud_xgb";
  double rate = 2000;
  double seconds = 10;
  int64_t offline_rows = 2'000'000;
  int job_workers = 1;
  std::string record;
  app.add_option("--model-repository", repo);
  app.add_option("--model", model);
  app.add_option("--rate", rate, "online requests per second (Poisson)");
  app.add_option("--seconds", seconds, "length of each phase");
  app.add_option("--offline-rows", offline_rows,
                 "rows of the offline job (must outlast the phase)");
  app.add_option("--job-workers", job_workers, "chunks the job runs at once");
  bool sched_idle = false;
  app.add_flag("--worker-sched-idle", sched_idle,
               "job workers under SCHED_IDLE");
  bool background = true;
  app.add_option("--offline-background", background,
                 "offline-only batches run the engine under SCHED_IDLE while "
                 "online requests are about (as `ferry serve "
                 "--job-cpu-priority idle`)");
  bool sender_fifo = false;
  app.add_flag("--sender-fifo", sender_fifo,
               "run the load generator's sender thread under SCHED_FIFO, as "
               "if the client were on another machine (diagnostic)");
  app.add_option("--record", record, "append the result to this file");
  CLI11_PARSE(app, argc, argv);
  std::string command;
  for (int i = 0; i < argc; ++i)
    absl::StrAppend(&command, i ? " " : "", argv[i]);

  EngineRegistry engines;
  if (!RegisterXgboostEngine(&engines).ok()) return 1;
  ModelManager::Options mo;
  mo.offline_background = background;
  ModelManager manager(repo, &engines, mo);
  if (absl::Status s = manager.Load(model); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 1;
  }
  absl::StatusOr<ModelVersionInfo> info = manager.Find(model, std::nullopt);
  if (!info.ok()) return 1;
  const int features = static_cast<int>(info->options.inputs[0].dims.back());

  const fs::path dir =
      fs::temp_directory_path() / absl::StrCat("ferry-isolation-", getpid());
  fs::create_directories(dir);
  const fs::path csv = dir / "offline.csv";
  WriteCsv(csv, offline_rows, features);
  // Written back now, not by the kernel's flusher 30 s later: that is in the
  // middle of the phase with the job, and ext4's writeback of a GB runs for
  // milliseconds at a time that no thread of this process can preempt.
  ::sync();

  if (sender_fifo) {  // allowed at all?
    if (int rc = SetSenderFifo(true); rc != 0) {
      std::fprintf(stderr, "--sender-fifo: %s\n", std::strerror(rc));
      return 1;
    }
    SetSenderFifo(false);
  }
  // Warm up, then the online-only phase.
  RunOnline(manager, model, features, rate, 1.0, 1, sender_fifo);
  const Phase alone =
      RunOnline(manager, model, features, rate, seconds, 2, sender_fifo);

  absl::StatusOr<std::unique_ptr<SqliteJobStore>> store =
      SqliteJobStore::Open((dir / "jobs.db").string());
  if (!store.ok()) return 1;
  JobRunner::Options ro;
  ro.work_dir = dir / "parts";
  ro.parallel_chunks = job_workers;
  ro.worker_sched_idle = sched_idle;
  ro.poll = absl::Milliseconds(20);
  JobRunner runner(store->get(), store->get(), &manager, ro);
  JobSpec spec;
  spec.model = model;
  spec.input_path = csv.string();
  spec.output_path = (dir / "out.csv").string();
  spec.options.csv.id_column = "id";
  absl::StatusOr<JobRecord> job = runner.Submit(spec);
  if (!job.ok() || job->state == JobState::kFailed) {
    std::fprintf(stderr, "cannot submit the offline job\n");
    return 1;
  }
  runner.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // ramp up
  const int64_t done_before = runner.Progress(job->id)->records_done;
  const absl::Time t0 = absl::Now();
  const Phase shared =
      RunOnline(manager, model, features, rate, seconds, 2, sender_fifo);
  const double elapsed = absl::ToDoubleSeconds(absl::Now() - t0);
  const int64_t done_after = runner.Progress(job->id)->records_done;
  const bool finished_early = IsTerminal(runner.Progress(job->id)->job.state);
  runner.Stop();
  manager.Shutdown(absl::Seconds(5));
  fs::remove_all(dir);

  const double offline_rps = (done_after - done_before) / elapsed;
  const double ratio = alone.p99 > 0 ? shared.p99 / alone.p99 : 0;
  const std::string report = absl::StrFormat(
      "online %s, %.0f req/s Poisson, %.0f s per phase (%d cores)\n"
      "  alone:        p50 %.0f us  p99 %.0f us  p99.9 %.0f us  (%d sent, %d "
      "errors)\n%s"
      "  with offline: p50 %.0f us  p99 %.0f us  p99.9 %.0f us  (%d sent, %d "
      "errors)\n%s"
      "  isolation: online p99 ratio %.2f (%+.0f %%), offline %.0f rows/s%s\n",
      model, rate, seconds, std::thread::hardware_concurrency(), alone.p50,
      alone.p99, alone.p999, alone.sent, alone.errors, alone.split, shared.p50,
      shared.p99, shared.p999, shared.sent, shared.errors, shared.split, ratio,
      (ratio - 1) * 100, offline_rps,
      finished_early ? " (job ended during the phase: use more --offline-rows)"
                     : "");
  std::fputs(report.c_str(), stdout);
  if (!record.empty()) {
    std::ofstream out(record, std::ios::app);
    out << "\n### Isolation: online p99 with and without an offline job ("
        << absl::FormatTime("%Y-%m-%d %H:%M", absl::Now(), absl::UTCTimeZone())
        << " UTC)\n\nCommand: `" << command << "`\n\n```\n"
        << report << "```\n";
  }
  return 0;
}

}  // namespace
}  // namespace ferry

int main(int argc, char** argv) { return ferry::Main(argc, argv); }
