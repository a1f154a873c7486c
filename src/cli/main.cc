// SPDX-License-Identifier: Apache-2.0
// The ferry binary: wires the engines into the subcommands.
#include <iostream>

#include "CLI/CLI.hpp"
#include "cli/bench_command.h"
#include "cli/builtin_engines.h"
#include "cli/infer_command.h"
#include "cli/jobs_command.h"
#include "cli/models_command.h"
#include "cli/run_command.h"
#include "cli/serve_command.h"
#include "engines/engine_registry.h"

int main(int argc, char** argv) {
  CLI::App app{
      "Ferry: a batch-inference server for TorchScript and XGBoost models.\n"
      "Models live in a Triton-style repository: <repo>/<model>/config.pbtxt "
      "and\n"
      "<repo>/<model>/<version>/model.{pt,json,ubj}.",
      "ferry"};
  app.require_subcommand(1);
  ferry::ModelsCommandOptions models_options;
  ferry::InferCommandOptions infer_options;
  ferry::ServeCommandOptions serve_options;
  ferry::RunCommandOptions run_options;
  ferry::JobsCommandOptions jobs_options;
  ferry::BenchCommandOptions bench_options;
  CLI::App* models = ferry::AddModelsCommand(app, &models_options);
  CLI::App* infer = ferry::AddInferCommand(app, &infer_options);
  CLI::App* serve = ferry::AddServeCommand(app, &serve_options);
  CLI::App* run = ferry::AddRunCommand(app, &run_options);
  CLI::App* jobs = ferry::AddJobsCommand(app, &jobs_options);
  CLI::App* bench = ferry::AddBenchCommand(app, &bench_options);
  CLI11_PARSE(app, argc, argv);

  ferry::EngineRegistry engines;
  if (absl::Status s = ferry::RegisterBuiltinEngines(&engines); !s.ok()) {
    std::cerr << "ferry: " << s.message() << "\n";
    return 1;
  }
  if (models->parsed()) {
    return ferry::RunModelsCommand(models_options, engines, std::cout,
                                   std::cerr);
  }
  if (infer->parsed()) {
    return ferry::RunInferCommand(infer_options, engines, std::cout, std::cerr);
  }
  if (bench->parsed()) {
    return ferry::RunBenchCommand(bench_options, std::cout, std::cerr);
  }
  if (jobs->parsed()) {
    return ferry::RunJobsCommand(jobs_options, std::cout, std::cerr);
  }
  if (run->parsed()) {
    return ferry::RunRunCommand(run_options, engines, std::cout, std::cerr);
  }
  if (serve->parsed()) {
    return ferry::RunServeCommand(serve_options, engines, std::cout, std::cerr);
  }
  return 1;
}
