// SPDX-License-Identifier: Apache-2.0
// A plugin for plugin_engine_test: its factory makes no engines but says it
// ran, and auto-completes max_batch_size to 7.
#include "engines/engine.h"

namespace {

class TestPluginFactory final : public ferry::EngineFactory {
 public:
  absl::StatusOr<std::unique_ptr<ferry::Engine>> Create(
      const ferry::EngineLoadContext& /*context*/) const override {
    return absl::UnimplementedError("the test plugin was asked for an engine");
  }
  absl::Status AutoComplete(const std::filesystem::path& /*version_dir*/,
                            ferry::ModelOptions* options) const override {
    options->max_batch_size = 7;
    return absl::OkStatus();
  }
};

}  // namespace

extern "C" __attribute__((visibility("default"))) ferry::EngineFactory*
FerryTestEngineFactory() {
  return new TestPluginFactory();
}
