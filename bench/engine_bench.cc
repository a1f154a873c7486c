// SPDX-License-Identifier: Apache-2.0
// engine_bench: the physical limit for serving a model — its engine instances
// called in a tight loop, in-process, on pre-built random inputs, with no
// batcher, protocol or copies. What `ferry bench` against `ferry serve` is
// divided by (serving efficiency, latency overhead).
//
//   engine_bench --model-repository DIR --model M [--batch-sizes 1,8,64]
//                [--seconds 3] [--shape NAME:D1,D2] [--int-max N]
//
// The model loads as `ferry serve` would load it (config, instances,
// intra-op threads, warm-up). Every instance runs in its own thread on its own
// input; rows/s add up. Per batch size prints one line
//   ENGINE_JSON {"model","batch","instances","rows_per_s","calls_per_s",
//                "p50_us","p99_us"}
// (latency: one Run() call).
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "core/status_macros.h"
#include "engines/engine_registry.h"
#include "engines/identity/identity_engine.h"
#include "engines/torch/torch_engine.h"
#include "engines/xgboost/xgboost_engine.h"
#include "loadgen/latency_stats.h"
#include "loadgen/request_data.h"
#include "repository/model_repository.h"

namespace ferry {
namespace {

using SteadyClock = std::chrono::steady_clock;

struct Args {
  std::string repository;
  std::string model;
  std::string batch_sizes = "1,8,64";
  double seconds = 3;
  std::vector<std::string> shapes;
  int64_t int_max = 100;
};

absl::Status Run(const Args& args) {
  EngineRegistry registry;
  RETURN_IF_ERROR(RegisterIdentityEngine(&registry));
  RETURN_IF_ERROR(RegisterXgboostEngine(&registry));
  RETURN_IF_ERROR(RegisterTorchEngine(&registry));
  ModelRepository repo(args.repository, &registry);
  RETURN_IF_ERROR(repo.Load(args.model));
  ASSIGN_OR_RETURN(std::shared_ptr<const LoadedModel> model,
                   repo.Get(args.model));
  const ModelOptions& options = model->options();
  std::vector<InputSpec> specs;
  for (const TensorSpec& t : options.inputs) {
    InputSpec s{t.name, t.dtype, t.dims};
    if (options.max_batch_size > 0) s.shape.insert(s.shape.begin(), -1);
    specs.push_back(std::move(s));
  }
  for (absl::string_view b : absl::StrSplit(args.batch_sizes, ',')) {
    int64_t batch = 0;
    if (!absl::SimpleAtoi(b, &batch) || batch < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--batch-sizes '", args.batch_sizes, "'"));
    }
    if (options.max_batch_size > 0 && batch > options.max_batch_size) continue;
    const int n = model->instance_count();
    std::vector<std::vector<Tensor>> inputs(n);
    for (int i = 0; i < n; ++i) {
      RandomInputOptions r;
      r.batch_rows = batch;
      r.int_max = args.int_max;
      r.seed = 1 + i;
      for (const std::string& s : args.shapes) {
        RETURN_IF_ERROR(ParseShapeFlag(s, &r.shapes));
      }
      ASSIGN_OR_RETURN(inputs[i], RandomInputs(specs, r));
    }
    std::vector<std::vector<double>> latencies(n);
    std::vector<int64_t> calls(n, 0);
    std::vector<absl::Status> statuses(n);
    std::vector<double> elapsed(n, 0);
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) {
      threads.emplace_back([&, i] {
        Engine& engine = model->instance(i);
        auto once = [&]() -> absl::Status {
          absl::StatusOr<std::vector<Tensor>> out =
              engine.Run(absl::MakeConstSpan(inputs[i]));
          return out.status();
        };
        const auto warm_end =
            SteadyClock::now() + std::chrono::milliseconds(static_cast<int>(
                                     std::min(1000.0, args.seconds * 250)));
        while (SteadyClock::now() < warm_end) {
          if (statuses[i] = once(); !statuses[i].ok()) return;
        }
        const auto start = SteadyClock::now();
        const auto end = start + std::chrono::microseconds(
                                     static_cast<int64_t>(args.seconds * 1e6));
        while (true) {
          const auto t0 = SteadyClock::now();
          if (t0 >= end) break;
          if (statuses[i] = once(); !statuses[i].ok()) return;
          latencies[i].push_back(
              std::chrono::duration<double, std::micro>(SteadyClock::now() - t0)
                  .count());
          ++calls[i];
        }
        elapsed[i] =
            std::chrono::duration<double>(SteadyClock::now() - start).count();
      });
    }
    for (auto& t : threads) t.join();
    double rows_per_s = 0;
    double calls_per_s = 0;
    std::vector<double> all;
    for (int i = 0; i < n; ++i) {
      RETURN_IF_ERROR(statuses[i]);
      rows_per_s += calls[i] * batch / elapsed[i];
      calls_per_s += calls[i] / elapsed[i];
      all.insert(all.end(), latencies[i].begin(), latencies[i].end());
    }
    const LatencySummary s = Summarize(&all);
    absl::PrintF(
        "ENGINE_JSON {\"model\":\"%s\",\"batch\":%d,\"instances\":%d,"
        "\"rows_per_s\":%.1f,\"calls_per_s\":%.1f,\"p50_us\":%.1f,"
        "\"p99_us\":%.1f}\n",
        args.model, batch, n, rows_per_s, calls_per_s, s.p50_us, s.p99_us);
    std::fflush(stdout);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace ferry

int main(int argc, char** argv) {
  ferry::Args args;
  CLI::App app{"The bare engine: instances called in a tight loop."};
  app.add_option("--model-repository", args.repository)->required();
  app.add_option("--model", args.model)->required();
  app.add_option("--batch-sizes", args.batch_sizes)->capture_default_str();
  app.add_option("--seconds", args.seconds)->capture_default_str();
  app.add_option("--shape", args.shapes, "NAME:D1,D2 for variable dims");
  app.add_option("--int-max", args.int_max)->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (absl::Status s = ferry::Run(args); !s.ok()) {
    std::fprintf(stderr, "engine_bench: %s\n",
                 std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
