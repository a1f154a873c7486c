// SPDX-License-Identifier: Apache-2.0
// GrpcTransport: KServe v2 ModelInfer calls with gRPC's asynchronous client
// API: one completion queue and one thread that answers every call, spread
// over a few channels (an HTTP/2 connection carries at most ~100 concurrent
// streams by default).
#ifndef FERRY_LOADGEN_GRPC_TRANSPORT_H_
#define FERRY_LOADGEN_GRPC_TRANSPORT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/tensor.h"
#include "loadgen/request_data.h"
#include "loadgen/transport.h"

namespace inference {
class ModelInferRequest;
}  // namespace inference

namespace ferry {

struct GrpcTransportOptions {
  std::string target = "127.0.0.1:8001";  // host:port
  int channels = 1;
  absl::Duration timeout = absl::Seconds(30);
};

// The model's inputs from ModelMetadata. Errors carry gRPC's message.
absl::StatusOr<std::vector<InputSpec>> GrpcModelInputs(
    const std::string& target, const std::string& model,
    const std::string& version);

// A ModelInfer request carrying `inputs` as raw_input_contents.
inference::ModelInferRequest MakeModelInferRequest(
    const std::string& model, const std::string& version,
    const std::vector<Tensor>& inputs);

// Sends `requests` in turn (at least one).
std::unique_ptr<Transport> MakeGrpcTransport(
    const GrpcTransportOptions& options,
    std::vector<inference::ModelInferRequest> requests);

}  // namespace ferry

#endif  // FERRY_LOADGEN_GRPC_TRANSPORT_H_
