// SPDX-License-Identifier: Apache-2.0
// EngineRegistry: platform name ("xgboost", "pytorch_libtorch", ...) →
// EngineFactory. Filled once by the binary's wiring (cli/) before use, then
// read-only: lookups are safe for concurrent use; Register() is not.
#ifndef FERRY_ENGINES_ENGINE_REGISTRY_H_
#define FERRY_ENGINES_ENGINE_REGISTRY_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engines/engine.h"

namespace ferry {

class EngineRegistry {
 public:
  // ALREADY_EXISTS if the platform has a factory.
  absl::Status Register(const std::string& platform,
                        std::unique_ptr<EngineFactory> factory);

  // NOT_FOUND naming the platform and the ones that are available.
  absl::StatusOr<const EngineFactory*> Find(const std::string& platform) const;

  std::vector<std::string> platforms() const;

 private:
  std::map<std::string, std::unique_ptr<EngineFactory>> factories_;
};

}  // namespace ferry

#endif  // FERRY_ENGINES_ENGINE_REGISTRY_H_
