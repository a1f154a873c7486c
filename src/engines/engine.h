// SPDX-License-Identifier: Apache-2.0
// Engine: one loaded instance of a model that runs batches of input tensors.
//
// The repository creates engines through an EngineFactory registered under a
// platform name; the batcher calls Run() from the instance's own thread. Run()
// is never called concurrently on one instance, so an implementation needs no
// locking of its own. Adding an engine touches neither the batcher nor the API:
// implement this interface in src/engines/<name>/ (the only place that includes
// the engine library's headers) and register a factory in the CLI's wiring.
//
// Errors are absl::Status: exceptions and error codes of the underlying library
// stop at the engine's edge.
#ifndef FERRY_ENGINES_ENGINE_H_
#define FERRY_ENGINES_ENGINE_H_

#include <filesystem>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "config/model_options.h"
#include "core/tensor.h"

namespace ferry {

class Engine {
 public:
  virtual ~Engine() = default;

  // Runs one batch. `inputs` holds one tensor per configured input, in the
  // order of ModelOptions::inputs and with the same names; when the model
  // batches, dimension 0 of every input is the batch size. Returns one tensor
  // per configured output, in ModelOptions::outputs order, with dimension 0
  // equal to the batch size.
  virtual absl::StatusOr<std::vector<Tensor>> Run(
      absl::Span<const Tensor> inputs) = 0;
};

// Everything an engine needs to load one instance.
struct EngineLoadContext {
  std::filesystem::path version_dir;  // <repository>/<model>/<version>
  ModelOptions options;               // validated; engines may rely on it
  int instance_index = 0;             // 0..instance_count()-1
  int intra_op_threads = 1;  // threads this instance may use for one Run()
};

// Creates engine instances for one platform. Implementations are stateless or
// internally synchronized: Create() may be called from several threads.
class EngineFactory {
 public:
  virtual ~EngineFactory() = default;

  virtual absl::StatusOr<std::unique_ptr<Engine>> Create(
      const EngineLoadContext& context) const = 0;

  // Completes a config from the model file where the engine can (Triton's
  // "auto-complete"): fills in missing inputs/outputs, max_batch_size and the
  // like. `options` arrives with name and platform set; everything else may be
  // empty. Engines that cannot derive a config return FAILED_PRECONDITION
  // naming what the user must write.
  virtual absl::Status AutoComplete(const std::filesystem::path& version_dir,
                                    ModelOptions* options) const = 0;
};

}  // namespace ferry

#endif  // FERRY_ENGINES_ENGINE_H_
