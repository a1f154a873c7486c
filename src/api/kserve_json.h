// SPDX-License-Identifier: Apache-2.0
// KServe v2 (Open Inference Protocol) JSON codec for inference requests and
// responses, including the binary tensor data extension's request side: an
// input whose parameters carry "binary_data_size" takes its bytes from the
// binary section that follows the JSON header, in input order, without copying.
//
// Called by the HTTP API and the CLI on their own threads; pure functions.
#ifndef FERRY_API_KSERVE_JSON_H_
#define FERRY_API_KSERVE_JSON_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/inference.h"
#include "core/tensor.h"

namespace ferry {

// Parses a request. `binary` is the binary section after the JSON (empty
// without the extension); `keepalive` owns the memory `binary` points into and
// is held by the borrowed input tensors. INVALID_ARGUMENT names the field, e.g.
// "inputs[0] 'x': data has 3 elements, shape [1,4] needs 4".
absl::StatusOr<InferenceRequest> ParseInferenceRequest(
    absl::string_view json, absl::string_view binary = {},
    std::shared_ptr<const void> keepalive = nullptr);

// Writes a response with every output as typed JSON "data" (flat, row-major).
std::string InferenceResponseToJson(const InferenceResponse& response);

// Writes the KServe v2 error body {"error": "..."}.
std::string ErrorToJson(absl::string_view message);

}  // namespace ferry

#endif  // FERRY_API_KSERVE_JSON_H_
