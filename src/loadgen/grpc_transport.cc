// SPDX-License-Identifier: Apache-2.0
#include "loadgen/grpc_transport.h"

#include <atomic>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "api/grpc/grpc_service.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace ferry {
namespace {

using inference::GRPCInferenceService;
using inference::ModelInferRequest;
using inference::ModelInferResponse;

std::shared_ptr<grpc::Channel> NewChannel(const std::string& target) {
  grpc::ChannelArguments args;
  // Each channel its own TCP connection, not one shared subchannel.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(),
                                   args);
}

std::string CodeName(grpc::StatusCode code) {
  // gRPC's and absl's status codes share their numbers.
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

class GrpcTransport final : public Transport {
 public:
  GrpcTransport(const GrpcTransportOptions& options,
                std::vector<ModelInferRequest> requests)
      : timeout_(options.timeout), requests_(std::move(requests)) {
    for (int i = 0; i < std::max(1, options.channels); ++i) {
      stubs_.push_back(
          GRPCInferenceService::NewStub(NewChannel(options.target)));
    }
    poller_ = std::thread([this] { Poll(); });
  }

  ~GrpcTransport() override {
    cq_.Shutdown();
    poller_.join();
  }

  void Send(CallDone done) override {
    auto* call = new Call;
    call->done = std::move(done);
    call->context.set_deadline(absl::ToChronoTime(absl::Now() + timeout_));
    const uint64_t n = next_.fetch_add(1, std::memory_order_relaxed);
    GRPCInferenceService::Stub* stub = stubs_[n % stubs_.size()].get();
    call->reader = stub->PrepareAsyncModelInfer(
        &call->context, requests_[n % requests_.size()], &cq_);
    call->reader->StartCall();
    call->reader->Finish(&call->response, &call->status, call);
  }

 private:
  struct Call {
    grpc::ClientContext context;
    ModelInferResponse response;
    grpc::Status status;
    std::unique_ptr<grpc::ClientAsyncResponseReader<ModelInferResponse>> reader;
    CallDone done;
  };

  void Poll() {
    void* tag;
    bool ok;
    while (cq_.Next(&tag, &ok)) {
      std::unique_ptr<Call> call(static_cast<Call*>(tag));
      CallResult result;
      result.ok = ok && call->status.ok();
      if (!result.ok) {
        result.error =
            call->status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED
                ? std::string("timeout")
                : absl::StrCat("grpc ", CodeName(call->status.error_code()));
      }
      call->done(std::move(result));
    }
  }

  const absl::Duration timeout_;
  const std::vector<ModelInferRequest> requests_;
  std::vector<std::unique_ptr<GRPCInferenceService::Stub>> stubs_;
  grpc::CompletionQueue cq_;
  std::thread poller_;
  std::atomic<uint64_t> next_{0};
};

}  // namespace

absl::StatusOr<std::vector<InputSpec>> GrpcModelInputs(
    const std::string& target, const std::string& model,
    const std::string& version) {
  auto stub = GRPCInferenceService::NewStub(NewChannel(target));
  inference::ModelMetadataRequest request;
  request.set_name(model);
  request.set_version(version);
  inference::ModelMetadataResponse response;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  grpc::Status status = stub->ModelMetadata(&context, request, &response);
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        absl::StrCat("ModelMetadata for '", model, "' at ",
                                     target, ": ", status.error_message()));
  }
  std::vector<InputSpec> specs;
  for (const auto& in : response.inputs()) {
    InputSpec spec;
    spec.name = in.name();
    absl::StatusOr<DataType> type = DataTypeFromString(in.datatype());
    if (!type.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model metadata input '", in.name(), "': ", type.status().message()));
    }
    spec.dtype = *type;
    spec.shape.assign(in.shape().begin(), in.shape().end());
    specs.push_back(std::move(spec));
  }
  return specs;
}

ModelInferRequest MakeModelInferRequest(const std::string& model,
                                        const std::string& version,
                                        const std::vector<Tensor>& inputs) {
  ModelInferRequest request;
  request.set_model_name(model);
  request.set_model_version(version);
  for (const Tensor& t : inputs) {
    auto* in = request.add_inputs();
    in->set_name(t.name());
    in->set_datatype(std::string(ToString(t.dtype())));
    for (int64_t d : t.shape()) in->add_shape(d);
    request.add_raw_input_contents(reinterpret_cast<const char*>(t.data()),
                                   t.byte_size());
  }
  return request;
}

std::unique_ptr<Transport> MakeGrpcTransport(
    const GrpcTransportOptions& options,
    std::vector<ModelInferRequest> requests) {
  return std::make_unique<GrpcTransport>(options, std::move(requests));
}

}  // namespace ferry
