// SPDX-License-Identifier: Apache-2.0
#include "cli/models_command.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/json_writer.h"
#include "repository/model_repository.h"

namespace ferry {
namespace {

std::string FullShape(const ModelOptions& options, const TensorSpec& spec) {
  std::vector<int64_t> shape;
  if (options.max_batch_size > 0) shape.push_back(-1);
  shape.insert(shape.end(), spec.dims.begin(), spec.dims.end());
  return ShapeToString(shape);
}

std::string DescribeTensors(const ModelOptions& options,
                            const std::vector<TensorSpec>& specs) {
  std::vector<std::string> parts;
  for (const TensorSpec& s : specs) {
    parts.push_back(absl::StrCat(s.name, " ", ToString(s.dtype), " ",
                                 FullShape(options, s)));
  }
  return absl::StrJoin(parts, ", ");
}

struct Row {
  std::string model, version, state, platform, max_batch, inputs, outputs,
      reason;
};

std::vector<Row> MakeRows(const std::vector<ModelStatus>& models) {
  std::vector<Row> rows;
  for (const ModelStatus& m : models) {
    Row base;
    base.model = m.name;
    if (m.options) {
      base.platform = m.options->platform;
      base.max_batch = std::to_string(m.options->max_batch_size);
      base.inputs = DescribeTensors(*m.options, m.options->inputs);
      base.outputs = DescribeTensors(*m.options, m.options->outputs);
    } else {
      base.platform = base.max_batch = base.inputs = base.outputs = "-";
    }
    if (m.versions.empty()) {
      Row r = base;
      r.version = "-";
      r.state = std::string(ToString(ModelState::kUnavailable));
      r.reason = m.reason;
      rows.push_back(std::move(r));
    }
    for (const ModelVersionStatus& v : m.versions) {
      Row r = base;
      r.version = std::to_string(v.version);
      r.state = std::string(ToString(v.state));
      r.reason = v.reason;
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

void PrintTable(const std::vector<Row>& rows, std::ostream& out) {
  const std::vector<std::string> header = {"MODEL",    "VERSION",   "STATE",
                                           "PLATFORM", "MAX_BATCH", "INPUTS",
                                           "OUTPUTS"};
  std::vector<size_t> width(header.size());
  auto cells = [](const Row& r) {
    return std::vector<std::string>{r.model,    r.version,   r.state,
                                    r.platform, r.max_batch, r.inputs,
                                    r.outputs};
  };
  for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const Row& r : rows) {
    auto c = cells(r);
    for (size_t i = 0; i < c.size(); ++i)
      width[i] = std::max(width[i], c[i].size());
  }
  auto print = [&](const std::vector<std::string>& c) {
    std::string line;
    for (size_t i = 0; i < c.size(); ++i) {
      line += c[i];
      if (i + 1 < c.size())
        line += std::string(width[i] - c[i].size() + 2, ' ');
    }
    out << line << "\n";
  };
  print(header);
  for (const Row& r : rows) {
    print(cells(r));
    if (!r.reason.empty()) out << "    reason: " << r.reason << "\n";
  }
}

void WriteTensorsJson(JsonWriter& w, const ModelOptions& options,
                      const std::vector<TensorSpec>& specs) {
  w.BeginArray();
  for (const TensorSpec& s : specs) {
    w.BeginObject();
    w.Key("name").String(s.name);
    w.Key("datatype").String(ToString(s.dtype));
    w.Key("shape").BeginArray();
    if (options.max_batch_size > 0) w.Int(-1);
    for (int64_t d : s.dims) w.Int(d);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

void PrintJson(const std::vector<ModelStatus>& models, std::ostream& out) {
  std::string text;
  JsonWriter w(&text);
  w.BeginObject().Key("models").BeginArray();
  for (const ModelStatus& m : models) {
    w.BeginObject();
    w.Key("name").String(m.name);
    w.Key("ready").Bool(m.ready());
    if (!m.reason.empty()) w.Key("reason").String(m.reason);
    if (m.options) {
      w.Key("platform").String(m.options->platform);
      w.Key("max_batch_size").Int(m.options->max_batch_size);
      w.Key("inputs");
      WriteTensorsJson(w, *m.options, m.options->inputs);
      w.Key("outputs");
      WriteTensorsJson(w, *m.options, m.options->outputs);
    }
    w.Key("versions").BeginArray();
    for (const ModelVersionStatus& v : m.versions) {
      w.BeginObject();
      w.Key("version").String(std::to_string(v.version));
      w.Key("state").String(ToString(v.state));
      if (!v.reason.empty()) w.Key("reason").String(v.reason);
      w.EndObject();
    }
    w.EndArray();
    w.Key("warnings").BeginArray();
    for (const std::string& warning : m.warnings) w.String(warning);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray().EndObject();
  out << text << "\n";
}

}  // namespace

CLI::App* AddModelsCommand(CLI::App& app, ModelsCommandOptions* options) {
  CLI::App* cmd = app.add_subcommand(
      "models",
      "Load a model repository and list every model version with its state");
  cmd->add_option(
         "--model-repository", options->model_repository,
         "Directory laid out as <model>/config.pbtxt and <model>/<version>/")
      ->required();
  cmd->add_flag("--json", options->json, "Print JSON instead of a table");
  cmd->add_flag("--strict", options->strict,
                "Exit with status 1 when any model version is not READY");
  cmd->footer("Example:\n  ferry models --model-repository example-models");
  return cmd;
}

int RunModelsCommand(const ModelsCommandOptions& options,
                     const EngineRegistry& engines, std::ostream& out,
                     std::ostream& err) {
  ModelRepository repository(options.model_repository, &engines);
  if (absl::Status s = repository.LoadAll(); !s.ok()) {
    err << "ferry models: " << s.message() << "\n";
    return 1;
  }
  const std::vector<ModelStatus> models = repository.List();
  if (options.json) {
    PrintJson(models, out);
  } else if (models.empty()) {
    out << "no models in " << options.model_repository << "\n";
  } else {
    PrintTable(MakeRows(models), out);
  }
  if (options.strict) {
    for (const ModelStatus& m : models) {
      if (!m.ready() || !m.reason.empty()) return 1;
      for (const ModelVersionStatus& v : m.versions) {
        if (v.state != ModelState::kReady) return 1;
      }
    }
  }
  return 0;
}

}  // namespace ferry
