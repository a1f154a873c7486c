// SPDX-License-Identifier: Apache-2.0
#include "engines/engine_registry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ferry {

absl::Status EngineRegistry::Register(const std::string& platform,
                                      std::unique_ptr<EngineFactory> factory) {
  auto [it, inserted] = factories_.emplace(platform, std::move(factory));
  if (!inserted) {
    return absl::AlreadyExistsError(
        absl::StrCat("engine for platform '", platform, "' registered twice"));
  }
  return absl::OkStatus();
}

absl::StatusOr<const EngineFactory*> EngineRegistry::Find(
    const std::string& platform) const {
  auto it = factories_.find(platform);
  if (it == factories_.end()) {
    return absl::NotFoundError(
        absl::StrCat("no engine for platform '", platform,
                     "'; this build has: ", absl::StrJoin(platforms(), ", ")));
  }
  return it->second.get();
}

std::vector<std::string> EngineRegistry::platforms() const {
  std::vector<std::string> out;
  for (const auto& [name, factory] : factories_) out.push_back(name);
  return out;
}

}  // namespace ferry
