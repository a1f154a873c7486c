// SPDX-License-Identifier: Apache-2.0
#include "cli/infer_command.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/kserve_json.h"
#include "core/mutex.h"
#include "core/status_macros.h"
#include "repository/model_manager.h"

namespace ferry {
namespace {

absl::StatusOr<std::string> ReadRequest(const std::string& path) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin),
                       std::istreambuf_iterator<char>());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::NotFoundError(absl::StrCat("cannot read request file ", path));
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

absl::StatusOr<std::string> Infer(const InferCommandOptions& options,
                                  const EngineRegistry& engines) {
  ASSIGN_OR_RETURN(std::string body, ReadRequest(options.request));
  ASSIGN_OR_RETURN(InferenceRequest request, ParseInferenceRequest(body));
  ModelManager manager(options.model_repository, &engines, {});
  RETURN_IF_ERROR(manager.Load(options.model));
  std::optional<int64_t> version;
  if (options.version > 0) version = options.version;
  // The request takes the same path as on the server: validation, the model's
  // batcher, an engine instance, output selection.
  Notification done;
  absl::StatusOr<InferenceResponse> response =
      absl::UnknownError("no response");
  manager.Infer(options.model, version, std::move(request),
                [&](absl::StatusOr<InferenceResponse> r) {
                  response = std::move(r);
                  done.Notify();
                });
  done.WaitForNotification();
  manager.Shutdown(absl::ZeroDuration());
  RETURN_IF_ERROR(response.status());
  return InferenceResponseToJson(*response);
}

}  // namespace

CLI::App* AddInferCommand(CLI::App& app, InferCommandOptions* options) {
  CLI::App* cmd = app.add_subcommand("infer",
                                     "Run one KServe v2 JSON inference request "
                                     "through a model and print the response");
  cmd->add_option(
         "--model-repository", options->model_repository,
         "Directory laid out as <model>/config.pbtxt and <model>/<version>/")
      ->required();
  cmd->add_option("--model", options->model,
                  "Model name (a directory of the repository)")
      ->required();
  cmd->add_option("--version", options->version,
                  "Model version (default: latest READY)")
      ->check(CLI::PositiveNumber);
  cmd->add_option(
         "--request", options->request,
         "KServe v2 JSON request body: a file, or - for standard input")
      ->required();
  cmd->footer(
      "Example:\n"
      "  ferry infer --model-repository example-models --model fraud_xgb \\\n"
      "      --request tools/examples/fraud_xgb.json\n"
      "The request is {\"inputs\": [{\"name\", \"shape\", \"datatype\", "
      "\"data\"}], ...}\n"
      "as in the KServe v2 protocol; the response is printed to standard "
      "output.");
  return cmd;
}

int RunInferCommand(const InferCommandOptions& options,
                    const EngineRegistry& engines, std::ostream& out,
                    std::ostream& err) {
  absl::StatusOr<std::string> response = Infer(options, engines);
  if (!response.ok()) {
    err << "ferry infer: " << response.status().message() << "\n";
    return 1;
  }
  out << *response << "\n";
  return 0;
}

}  // namespace ferry
