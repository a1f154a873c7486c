// SPDX-License-Identifier: Apache-2.0
// The pytorch_libtorch engine as a plugin (libferry_torch.so), loaded by
// engines/plugin_engine.h the first time a TorchScript model is.
#include "engines/torch/torch_engine.h"

extern "C" __attribute__((visibility("default"))) ferry::EngineFactory*
FerryTorchEngineFactory() {
  return new ferry::TorchEngineFactory();
}
