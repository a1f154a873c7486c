// SPDX-License-Identifier: Apache-2.0
// Engines in shared-object plugins, loaded on first use (as Triton loads its
// backends). libtorch alone costs every `ferry` process about 0.7 s of
// dynamic linking and operator registration at start-up, and 300 shared
// libraries; behind a plugin only processes that load a TorchScript model
// pay it.
//
// A plugin exports `extern "C" ferry::EngineFactory* <entry>()`, returning a
// factory the caller owns. It must be built by the same compiler from the
// same sources as the binary that loads it (no stable ABI is promised).
#ifndef FERRY_ENGINES_PLUGIN_ENGINE_H_
#define FERRY_ENGINES_PLUGIN_ENGINE_H_

#include <string>

#include "absl/status/status.h"
#include "engines/engine_registry.h"

namespace ferry {

// Registers `platform` to a factory that dlopens `path` and calls `entry` the
// first time a model of that platform is loaded or auto-completed. A plugin
// that cannot be loaded fails those calls with UNAVAILABLE naming the file
// and the loader's reason; other platforms are unaffected.
absl::Status RegisterPluginEngine(EngineRegistry* registry,
                                  const std::string& platform,
                                  const std::string& path,
                                  const std::string& entry);

// The directory of the running executable (for plugins installed beside it).
std::string ExecutableDirectory();

}  // namespace ferry

#endif  // FERRY_ENGINES_PLUGIN_ENGINE_H_
