// SPDX-License-Identifier: Apache-2.0
// InferenceRequest and InferenceResponse: one inference as the protocols carry
// it (KServe v2 over HTTP/JSON, binary tensors or gRPC), independent of the
// wire format. The codecs in api/ produce and consume them; ModelManager runs
// them. Plain data, move-only.
#ifndef FERRY_CORE_INFERENCE_H_
#define FERRY_CORE_INFERENCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "core/tensor.h"

namespace ferry {

struct RequestedOutput {
  std::string name;
  std::optional<bool> binary_data;  // parameters.binary_data
};

struct InferenceRequest {
  std::string id;
  std::vector<Tensor> inputs;
  std::vector<RequestedOutput> outputs;  // empty: every output
  // Triton's request parameters.
  std::optional<uint64_t> priority;
  std::optional<uint64_t> timeout_us;
  // Absolute end-to-end deadline (a gRPC client's deadline, for example): the
  // batcher dispatches early for it, and refuses a request that cannot make it.
  std::optional<absl::Time> deadline;
  bool binary_data_output = false;  // parameters.binary_data_output
  // A record of an offline job: runs at the batcher's offline level, below
  // every online request. Set by the job runner, never from the wire.
  bool offline = false;
};

struct InferenceResponse {
  std::string model_name;
  std::string model_version;
  std::string id;
  std::vector<Tensor> outputs;
};

}  // namespace ferry

#endif  // FERRY_CORE_INFERENCE_H_
