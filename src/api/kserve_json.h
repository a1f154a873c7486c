// SPDX-License-Identifier: Apache-2.0
// KServe v2 (Open Inference Protocol) JSON codec for inference requests and
// responses, including both sides of Triton's binary tensor data extension: an
// input whose parameters carry "binary_data_size" takes its bytes from the
// binary section that follows the JSON header, in input order, without
// copying; an output the request asks for in binary (parameters.binary_data,
// or the request's parameters.binary_data_output) is written raw after the
// JSON, and its JSON entry carries parameters.binary_data_size instead of
// "data".
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

// A request or response body: the JSON header, then the binary tensors in
// order.
struct EncodedBody {
  std::string body;
  // Bytes of JSON at the start of `body` (the Inference-Header-Content-Length
  // header's value when has_binary).
  size_t json_size = 0;
  // Some tensor went to the binary section (possibly with zero bytes).
  bool has_binary = false;
};
using EncodedInferenceResponse = EncodedBody;

// Encodes `response`. Output o goes to the binary section when the requested
// output of the same name sets parameters.binary_data (true), or, when it does
// not say, when `binary_data_output` is true (the request's
// parameters.binary_data_output). Binary layout as the extension defines it:
// little-endian, row-major, BOOL one byte, BYTES a 4-byte length and the bytes
// per element.
EncodedInferenceResponse EncodeInferenceResponse(
    const InferenceResponse& response,
    const std::vector<RequestedOutput>& requested, bool binary_data_output);

// Encodes a request (the client side: `ferry bench`): id, parameters
// (priority, timeout, binary_data_output), the inputs as typed JSON "data" or,
// when `binary_inputs`, as binary_data_size with the bytes after the JSON, and
// the requested outputs.
EncodedBody EncodeInferenceRequest(const InferenceRequest& request,
                                   bool binary_inputs);

// Writes the KServe v2 error body {"error": "..."}.
std::string ErrorToJson(absl::string_view message);

}  // namespace ferry

#endif  // FERRY_API_KSERVE_JSON_H_
