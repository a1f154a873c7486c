// SPDX-License-Identifier: Apache-2.0
// Checks request inputs against a model's configured inputs before they reach
// an engine: every required input present once, no unknown names, data types
// equal, shapes that fit the dims (-1 matches any size; with max_batch_size > 0
// a leading batch dimension of 1..max_batch_size comes first). Returns the
// inputs reordered into config order, as Engine::Run expects. Used by the CLI's
// infer, the batcher and the API. Thread-safe.
#ifndef FERRY_ENGINES_INPUT_VALIDATION_H_
#define FERRY_ENGINES_INPUT_VALIDATION_H_

#include <vector>

#include "absl/status/statusor.h"
#include "config/model_options.h"
#include "core/tensor.h"

namespace ferry {

// INVALID_ARGUMENT naming the input and what differs. When `check_batch_limit`
// is false, a batch dimension larger than max_batch_size is accepted (the
// batcher splits such requests).
// Checks without taking the tensors: returns, for each configured input in
// config order that is present, the index of its tensor in `inputs`.
absl::StatusOr<std::vector<size_t>> CheckInputs(const ModelOptions& options,
                                                absl::Span<const Tensor> inputs,
                                                bool check_batch_limit = true);

absl::StatusOr<std::vector<Tensor>> ValidateAndOrderInputs(
    const ModelOptions& options, std::vector<Tensor> inputs,
    bool check_batch_limit = true);

}  // namespace ferry

#endif  // FERRY_ENGINES_INPUT_VALIDATION_H_
