// SPDX-License-Identifier: Apache-2.0
// The identity engine (platform "identity"): output i is a copy of input i
// under the name of configured output i. Ferry's reference engine: it exercises
// the whole path (repository, batcher, API) with exact, predictable results and
// no model file.
//
// Config: as many outputs as inputs, pairwise of the same data type. Optional
// parameters: "execute_delay_us" makes every Run() take at least that long (for
// tests and benchmarks of the scheduling around a slow model),
// "fail_on_first_value" makes Run() fail with INTERNAL when the first element
// of input 0 (FP32/INT32/INT64) equals it (for tests of error paths).
#ifndef FERRY_ENGINES_IDENTITY_IDENTITY_ENGINE_H_
#define FERRY_ENGINES_IDENTITY_IDENTITY_ENGINE_H_

#include <filesystem>
#include <memory>

#include "absl/status/status.h"
#include "engines/engine.h"
#include "engines/engine_registry.h"

namespace ferry {

class IdentityEngineFactory final : public EngineFactory {
 public:
  absl::StatusOr<std::unique_ptr<Engine>> Create(
      const EngineLoadContext& context) const override;
  // Fills missing outputs with "OUTPUT<i>" mirrors of the inputs.
  absl::Status AutoComplete(const std::filesystem::path& version_dir,
                            ModelOptions* options) const override;
};

absl::Status RegisterIdentityEngine(EngineRegistry* registry);

}  // namespace ferry

#endif  // FERRY_ENGINES_IDENTITY_IDENTITY_ENGINE_H_
