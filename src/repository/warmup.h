// SPDX-License-Identifier: Apache-2.0
// Warm-up: runs an engine instance on synthetic inputs right after it loads, so
// the first real request does not pay for lazy initialisation, and checks that
// what the model returns matches the config (output count, data types, dims). A
// mismatch is how a config whose dims do not fit the model is caught for
// engines that cannot inspect their model file. Called by ModelRepository while
// loading; thread-compatible.
#ifndef FERRY_REPOSITORY_WARMUP_H_
#define FERRY_REPOSITORY_WARMUP_H_

#include <filesystem>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "config/model_options.h"
#include "core/tensor.h"
#include "engines/engine.h"

namespace ferry {

// The warm-up runs to make: the config's model_warmup entries, or by default
// zeros at batch 1 and at max_batch_size (one unbatched run for max_batch_size
// 0). Variable dims
// (-1) become 1. `model_dir` locates input_data_file entries
// (<model_dir>/warmup/).
absl::StatusOr<std::vector<WarmupOptions>> PlanWarmup(
    const ModelOptions& options);

// Builds the inputs of one warm-up run, in config input order.
absl::StatusOr<std::vector<Tensor>> MakeWarmupInputs(
    const ModelOptions& options, const WarmupOptions& warmup,
    const std::filesystem::path& model_dir);

// Checks an engine's outputs against the config for a run at `batch_size`
// (ignored when the model does not batch). INVALID_ARGUMENT naming the output,
// config and actual.
absl::Status CheckOutputs(const ModelOptions& options, int64_t batch_size,
                          absl::Span<const Tensor> outputs);

// Runs every planned warm-up on `engine` and checks the outputs.
absl::Status WarmUp(Engine& engine, const ModelOptions& options,
                    const std::filesystem::path& model_dir);

}  // namespace ferry

#endif  // FERRY_REPOSITORY_WARMUP_H_
