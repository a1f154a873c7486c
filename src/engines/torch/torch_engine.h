// SPDX-License-Identifier: Apache-2.0
// The "pytorch_libtorch" engine: runs TorchScript models (torch.jit.script or
// trace, saved with .save()) through libtorch, laid out as Triton's PyTorch
// backend expects: <model>/<version>/model.pt, or the config's
// default_model_filename.
//
// The CLI's wiring calls RegisterTorchEngine() once; the repository then
// creates one engine per instance through the factory. This header includes no
// torch headers, so code outside src/engines/torch/ can use it without
// libtorch's include paths or flags.
//
// Behaviour, in Triton's terms:
// - Device. KIND_GPU runs on CUDA: the instance's position inside its
//   instance_group picks a device from `gpus` (round robin), or from all
//   visible devices when `gpus` is empty. Without that CUDA device a KIND_GPU
//   instance fails with UNAVAILABLE. KIND_CPU runs on the CPU. KIND_AUTO runs
//   on CUDA (round robin over the visible devices) when libtorch sees one,
//   else on the CPU.
// - Inputs go to forward() arguments: by the index when every configured input
//   name has the form `<anything>__<index>`; else by name when the names are
//   exactly forward()'s argument names; else in config order. The counts must
//   match (checked at Create).
// - Outputs: a Tensor result is output 0; a tuple or list maps by position (by
//   the `__<index>` suffix when every output name has one); a
//   Dict[str, Tensor] maps by output name. Output dtypes must equal the
//   config's; when the model batches, each output's dimension 0 must equal the
//   inputs'. Outputs come back on the CPU without a copy (the Tensor keeps the
//   libtorch tensor alive), except an output that shares memory with an input:
//   it is copied, since it must not outlive the caller's buffer.
// - Errors. A file libtorch cannot load is INVALID_ARGUMENT naming the path.
//   Errors from forward() are INVALID_ARGUMENT (almost always shapes or values
//   the request sent), RESOURCE_EXHAUSTED for out-of-memory. Messages keep the
//   line of torch's message that names the problem, not the TorchScript
//   traceback.
// - Threads. Each Run() sets the calling thread's intra-op thread count to the
//   load context's intra_op_threads (OpenMP's count is per thread); the
//   inter-op pool is set to one thread once per process.
//
// Thread-safety: the factory is safe for concurrent use. Each engine is driven
// by one thread at a time (the Engine contract), not always the same one.
#ifndef FERRY_ENGINES_TORCH_TORCH_ENGINE_H_
#define FERRY_ENGINES_TORCH_TORCH_ENGINE_H_

#include <filesystem>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engines/engine.h"
#include "engines/engine_registry.h"

namespace ferry {

// The platform name this engine registers under (Triton's name for
// TorchScript).
inline constexpr char kTorchPlatform[] = "pytorch_libtorch";

class TorchEngineFactory : public EngineFactory {
 public:
  // NOT_FOUND when the model file is missing; INVALID_ARGUMENT for a file
  // libtorch cannot load or a config that does not fit forward(); UNAVAILABLE
  // for a GPU instance on a machine (or libtorch build) without that CUDA
  // device.
  absl::StatusOr<std::unique_ptr<Engine>> Create(
      const EngineLoadContext& context) const override;

  // TorchScript does not describe its inputs reliably (names, dtypes and shapes
  // of traced modules are lost), so nothing is derived: OK when the config
  // already declares inputs and outputs, FAILED_PRECONDITION otherwise.
  absl::Status AutoComplete(const std::filesystem::path& version_dir,
                            ModelOptions* options) const override;
};

// Registers TorchEngineFactory under kTorchPlatform.
absl::Status RegisterTorchEngine(EngineRegistry* registry);

// Number of CUDA devices this libtorch build can use (0 for a CPU-only build).
int TorchCudaDeviceCount();

}  // namespace ferry

#endif  // FERRY_ENGINES_TORCH_TORCH_ENGINE_H_
