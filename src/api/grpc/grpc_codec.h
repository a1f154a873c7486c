// SPDX-License-Identifier: Apache-2.0
// Conversions between the KServe v2 gRPC messages (inference.ModelInferRequest
// / ModelInferResponse) and Ferry's InferenceRequest / InferenceResponse.
//
// Inputs come either as typed contents (InferTensorContents: the repeated field
// that matches the datatype) or as raw_input_contents (one entry per input, in
// order, bytes laid out as in the binary tensor extension). Raw contents are
// moved out of the message, not copied. Responses use raw_output_contents when
// the request did (tritonclient reads them there), and typed contents
// otherwise; FP16 has no typed field, so a response with an FP16 output is
// always raw.
//
// Called by GrpcServer on gRPC's threads and on the ModelManager's callback
// thread; pure functions, safe for concurrent use on different messages.
#ifndef FERRY_API_GRPC_GRPC_CODEC_H_
#define FERRY_API_GRPC_GRPC_CODEC_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "api/grpc/grpc_service.pb.h"
#include "core/inference.h"
#include "grpcpp/support/status.h"
#include "repository/model_manager.h"

namespace ferry {

// Builds an InferenceRequest from `proto`, moving raw_input_contents and
// bytes out of it (the message is left partly emptied). Reads the request
// parameters "priority" and "timeout" (int64 or uint64, not negative); other
// parameters are ignored, as Triton leaves them to the model. Shared-memory
// and classification parameters are UNIMPLEMENTED. Errors: INVALID_ARGUMENT
// naming the field, e.g. "inputs[1] 'x': fp32_contents has 3 elements, shape
// [1,4] needs 4".
absl::StatusOr<InferenceRequest> InferRequestFromProto(
    inference::ModelInferRequest* proto);

// Whether the response to `proto` should carry raw_output_contents.
inline bool WantsRawOutput(const inference::ModelInferRequest& proto) {
  return proto.raw_input_contents_size() > 0;
}

// Writes `response` into `proto` (which should be empty): raw contents when
// `raw` (or when an output has no typed field), typed contents otherwise.
void InferResponseToProto(const InferenceResponse& response, bool raw,
                          inference::ModelInferResponse* proto);

// A version field: empty means "the server picks" (nullopt); otherwise a
// non-negative integer. INVALID_ARGUMENT names `field` and the value.
absl::StatusOr<std::optional<int64_t>> ParseModelVersion(
    absl::string_view field, const std::string& version);

// Triton's statistics for one served version. Ferry times requests end to end
// (success), in the queue, and per batch in the engine: compute_infer counts
// batches, so ns / count is the engine time a request's batch took.
// compute_input, compute_output and batch_stats are left empty (Ferry does not
// time those steps apart or keep per-size timings). fail counts the requests
// that failed after being queued and those refused at enqueue (queue full,
// invalid input), without a duration.
void StatisticsToProto(const ModelVersionStatistics& stats,
                       inference::ModelStatistics* proto);

// The ModelMetadata answer for one served version: inputs and outputs with the
// batch dimension (-1) first when the model batches, as Triton reports them.
void MetadataToProto(const ModelOptions& options,
                     inference::ModelMetadataResponse* proto);

// absl and gRPC share the canonical codes; the message is kept.
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace ferry

#endif  // FERRY_API_GRPC_GRPC_CODEC_H_
