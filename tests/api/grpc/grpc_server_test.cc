// SPDX-License-Identifier: Apache-2.0
// Drives every RPC of GrpcServer with the generated C++ stub over a real
// loopback channel, against a ModelManager serving identity models.
#include "api/grpc/grpc_server.h"

#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/grpc/grpc_service.grpc.pb.h"
#include "core/half.h"
#include "core/mutex.h"
#include "engines/identity/identity_engine.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "test_util/temp_dir.h"

namespace ferry {
namespace {

using inference::GRPCInferenceService;
using inference::ModelInferRequest;
using inference::ModelInferResponse;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Batches, two priority levels (default: the lower one).
constexpr char kBatched[] = R"(
  platform: "identity"
  max_batch_size: 8
  input [ { name: "a" data_type: TYPE_FP32 dims: [ 1 ] },
          { name: "b" data_type: TYPE_INT64 dims: [ 1 ] } ]
  output [ { name: "A" data_type: TYPE_FP32 dims: [ 1 ] },
           { name: "B" data_type: TYPE_INT64 dims: [ 1 ] } ]
  dynamic_batching {
    max_queue_delay_microseconds: 100
    priority_levels: 2
    default_priority_level: 2
  }
)";

// No batching; FP16 and BYTES.
constexpr char kTypes[] = R"(
  platform: "identity"
  max_batch_size: 0
  input [ { name: "h" data_type: TYPE_FP16 dims: [ 2 ] },
          { name: "s" data_type: TYPE_STRING dims: [ -1 ] } ]
  output [ { name: "H" data_type: TYPE_FP16 dims: [ 2 ] },
           { name: "S" data_type: TYPE_STRING dims: [ -1 ] } ]
)";

// One slow instance whose queue honours per-request timeouts.
constexpr char kSlow[] = R"(
  platform: "identity"
  max_batch_size: 1
  input [ { name: "x" data_type: TYPE_FP32 dims: [ 1 ] } ]
  output [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ]
  instance_group [ { count: 1 kind: KIND_CPU } ]
  parameters { key: "execute_delay_us" value { string_value: "300000" } }
  dynamic_batching { default_queue_policy { allow_timeout_override: true } }
)";

std::string Raw(const void* data, size_t size) {
  return std::string(static_cast<const char*>(data), size);
}

class GrpcServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterIdentityEngine(&engines_).ok());
    testing::WriteFile(dir_.path() / "m" / "config.pbtxt", kBatched);
    std::filesystem::create_directories(dir_.path() / "m" / "1");
    testing::WriteFile(dir_.path() / "t" / "config.pbtxt", kTypes);
    std::filesystem::create_directories(dir_.path() / "t" / "1");
    testing::WriteFile(dir_.path() / "slow" / "config.pbtxt", kSlow);
    std::filesystem::create_directories(dir_.path() / "slow" / "1");
    ModelManager::Options options;
    options.repository.warmup = false;
    options.unload_grace = absl::Seconds(5);
    manager_ = std::make_unique<ModelManager>(dir_.path(), &engines_, options);
    ASSERT_TRUE(manager_->LoadAll().ok());

    GrpcServerOptions server_options;
    server_options.address = "127.0.0.1";
    server_options.port = 0;
    auto server = GrpcServer::Start(server_options, manager_.get());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    ASSERT_GT(server_->port(), 0);
    auto channel =
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                            grpc::InsecureChannelCredentials());
    stub_ = GRPCInferenceService::NewStub(channel);
  }

  void TearDown() override {
    if (server_) server_->Stop(absl::Seconds(5));
    if (manager_) manager_->Shutdown(absl::Seconds(5));
  }

  // a = [va], b = [vb] for model m, typed contents.
  static ModelInferRequest TypedRequest(float va, int64_t vb) {
    ModelInferRequest r;
    r.set_model_name("m");
    auto* a = r.add_inputs();
    a->set_name("a");
    a->set_datatype("FP32");
    a->add_shape(1);
    a->add_shape(1);
    a->mutable_contents()->add_fp32_contents(va);
    auto* b = r.add_inputs();
    b->set_name("b");
    b->set_datatype("INT64");
    b->add_shape(1);
    b->add_shape(1);
    b->mutable_contents()->add_int64_contents(vb);
    return r;
  }

  // One row for the "slow" model (300 ms per batch).
  static ModelInferRequest SlowRequest(float v) {
    ModelInferRequest r;
    r.set_model_name("slow");
    auto* x = r.add_inputs();
    x->set_name("x");
    x->set_datatype("FP32");
    x->add_shape(1);
    x->add_shape(1);
    x->mutable_contents()->add_fp32_contents(v);
    return r;
  }

  static ModelInferRequest RawRequest(float va, int64_t vb) {
    ModelInferRequest r = TypedRequest(va, vb);
    for (auto& in : *r.mutable_inputs()) in.clear_contents();
    r.add_raw_input_contents(Raw(&va, sizeof(va)));
    r.add_raw_input_contents(Raw(&vb, sizeof(vb)));
    return r;
  }

  grpc::Status Infer(const ModelInferRequest& request,
                     ModelInferResponse* response) {
    grpc::ClientContext context;
    return stub_->ModelInfer(&context, request, response);
  }

  EngineRegistry engines_;
  testing::TempDir dir_;
  std::unique_ptr<ModelManager> manager_;
  std::unique_ptr<GrpcServer> server_;
  std::unique_ptr<GRPCInferenceService::Stub> stub_;
};

TEST_F(GrpcServerTest, HealthAndServerMetadata) {
  grpc::ClientContext c1, c2, c3;
  inference::ServerLiveResponse live;
  ASSERT_TRUE(stub_->ServerLive(&c1, {}, &live).ok());
  EXPECT_TRUE(live.live());
  inference::ServerReadyResponse ready;
  ASSERT_TRUE(stub_->ServerReady(&c2, {}, &ready).ok());
  EXPECT_TRUE(ready.ready());
  inference::ServerMetadataResponse meta;
  ASSERT_TRUE(stub_->ServerMetadata(&c3, {}, &meta).ok());
  EXPECT_EQ(meta.name(), "ferry");
  EXPECT_FALSE(meta.version().empty());
  EXPECT_THAT(meta.extensions(), ::testing::Contains("statistics"));
  EXPECT_THAT(meta.extensions(), ::testing::Contains("model_repository"));
}

TEST_F(GrpcServerTest, ModelReadyAndMetadata) {
  inference::ModelReadyRequest req;
  req.set_name("m");
  inference::ModelReadyResponse ready;
  {
    grpc::ClientContext c;
    ASSERT_TRUE(stub_->ModelReady(&c, req, &ready).ok());
    EXPECT_TRUE(ready.ready());
  }
  req.set_name("nope");
  {
    grpc::ClientContext c;
    ASSERT_TRUE(stub_->ModelReady(&c, req, &ready).ok());
    EXPECT_FALSE(ready.ready());
  }
  req.set_name("m");
  req.set_version("one");
  {
    grpc::ClientContext c;
    grpc::Status s = stub_->ModelReady(&c, req, &ready);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("version 'one'"));
  }

  inference::ModelMetadataRequest mreq;
  mreq.set_name("m");
  inference::ModelMetadataResponse meta;
  {
    grpc::ClientContext c;
    ASSERT_TRUE(stub_->ModelMetadata(&c, mreq, &meta).ok());
  }
  EXPECT_EQ(meta.name(), "m");
  EXPECT_EQ(meta.platform(), "identity");
  EXPECT_THAT(meta.versions(), ElementsAre("1"));
  ASSERT_EQ(meta.inputs_size(), 2);
  EXPECT_EQ(meta.inputs(1).name(), "b");
  EXPECT_EQ(meta.inputs(1).datatype(), "INT64");
  EXPECT_THAT(meta.inputs(1).shape(), ElementsAre(-1, 1));
  EXPECT_EQ(meta.outputs(0).name(), "A");

  mreq.set_name("nope");
  grpc::ClientContext c;
  EXPECT_EQ(stub_->ModelMetadata(&c, mreq, &meta).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(GrpcServerTest, InfersWithTypedContentsAndEchoesTheId) {
  ModelInferRequest request = TypedRequest(1.5f, 7);
  request.set_id("req-42");
  ModelInferResponse response;
  grpc::Status s = Infer(request, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(response.model_name(), "m");
  EXPECT_EQ(response.model_version(), "1");
  EXPECT_EQ(response.id(), "req-42");
  EXPECT_EQ(response.raw_output_contents_size(), 0);
  ASSERT_EQ(response.outputs_size(), 2);
  EXPECT_EQ(response.outputs(0).name(), "A");
  EXPECT_EQ(response.outputs(0).datatype(), "FP32");
  EXPECT_THAT(response.outputs(0).shape(), ElementsAre(1, 1));
  EXPECT_THAT(response.outputs(0).contents().fp32_contents(),
              ElementsAre(1.5f));
  EXPECT_THAT(response.outputs(1).contents().int64_contents(), ElementsAre(7));
}

TEST_F(GrpcServerTest, InfersWithRawContentsAndAnswersRaw) {
  ModelInferRequest request = RawRequest(-2.25f, 99);
  request.mutable_model_version()->assign("1");
  ModelInferResponse response;
  grpc::Status s = Infer(request, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(response.raw_output_contents_size(), 2);
  EXPECT_FALSE(response.outputs(0).has_contents());
  float a = 0;
  int64_t b = 0;
  ASSERT_EQ(response.raw_output_contents(0).size(), sizeof(a));
  std::memcpy(&a, response.raw_output_contents(0).data(), sizeof(a));
  std::memcpy(&b, response.raw_output_contents(1).data(), sizeof(b));
  EXPECT_EQ(a, -2.25f);
  EXPECT_EQ(b, 99);
}

TEST_F(GrpcServerTest, RoundTripsFp16AndBytes) {
  ModelInferRequest request;
  request.set_model_name("t");
  auto* h = request.add_inputs();
  h->set_name("h");
  h->set_datatype("FP16");
  h->add_shape(2);
  auto* s = request.add_inputs();
  s->set_name("s");
  s->set_datatype("BYTES");
  s->add_shape(2);
  const uint16_t half[2] = {FloatToHalf(0.5f), FloatToHalf(-8.0f)};
  request.add_raw_input_contents(Raw(half, sizeof(half)));
  request.add_raw_input_contents(
      std::string("\x03\x00\x00\x00"
                  "abc"
                  "\x00\x00\x00\x00",
                  11));
  ModelInferResponse response;
  grpc::Status st = Infer(request, &response);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(response.outputs_size(), 2);
  EXPECT_EQ(response.outputs(0).datatype(), "FP16");
  EXPECT_EQ(response.raw_output_contents(0), Raw(half, sizeof(half)));
  EXPECT_EQ(response.outputs(1).datatype(), "BYTES");
  EXPECT_THAT(response.outputs(1).shape(), ElementsAre(2));
  EXPECT_EQ(response.raw_output_contents(1), std::string("\x03\x00\x00\x00"
                                                         "abc"
                                                         "\x00\x00\x00\x00",
                                                         11));
}

TEST_F(GrpcServerTest, ReturnsOnlyRequestedOutputs) {
  ModelInferRequest request = TypedRequest(1, 5);
  request.add_outputs()->set_name("B");
  ModelInferResponse response;
  ASSERT_TRUE(Infer(request, &response).ok());
  ASSERT_EQ(response.outputs_size(), 1);
  EXPECT_EQ(response.outputs(0).name(), "B");
  EXPECT_THAT(response.outputs(0).contents().int64_contents(), ElementsAre(5));

  request.mutable_outputs(0)->set_name("Z");
  grpc::Status s = Infer(request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("requested output 'Z'"));
}

TEST_F(GrpcServerTest, HonoursPriorityAndRejectsAnUnknownLevel) {
  ModelInferRequest request = TypedRequest(1, 1);
  (*request.mutable_parameters())["priority"].set_uint64_param(1);
  ModelInferResponse response;
  grpc::Status ok = Infer(request, &response);
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  (*request.mutable_parameters())["priority"].set_int64_param(3);
  grpc::Status bad = Infer(request, &response);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(bad.error_message(), HasSubstr("priority"));
}

TEST_F(GrpcServerTest, QueueTimeoutIsDeadlineExceeded) {
  // Occupy the one instance, and wait until its request has left the queue.
  grpc::ClientContext first_context;
  ModelInferRequest first = SlowRequest(1);
  ModelInferResponse first_response;
  Notification first_done;
  grpc::Status first_status;
  stub_->async()->ModelInfer(&first_context, &first, &first_response,
                             [&](grpc::Status s) {
                               first_status = s;
                               first_done.Notify();
                             });
  for (;;) {
    auto stats = manager_->Statistics("slow");
    ASSERT_TRUE(stats.ok());
    if ((*stats)[0].stats.levels[0].queue_time_us.count > 0) break;
    std::this_thread::yield();
  }
  ModelInferRequest second = SlowRequest(2);
  (*second.mutable_parameters())["timeout"].set_int64_param(1000);
  ModelInferResponse response;
  grpc::Status s = Infer(second, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
      << s.error_message();
  first_done.WaitForNotification();
  EXPECT_TRUE(first_status.ok()) << first_status.error_message();
}

TEST_F(GrpcServerTest, ClientDeadlineIsTheRequestDeadline) {
  const ModelInferRequest request = SlowRequest(1);
  // Three 300 ms batches teach the batcher's latency model.
  for (int i = 0; i < 3; ++i) {
    ModelInferResponse response;
    ASSERT_TRUE(Infer(request, &response).ok());
  }
  // A 100 ms client deadline cannot be met: the server refuses at once, saying
  // so (gRPC's own client-side expiry would say only "Deadline Exceeded").
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(100));
  ModelInferResponse response;
  grpc::Status s = stub_->ModelInfer(&context, request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_THAT(s.error_message(), HasSubstr("cannot finish by its deadline"));
}

TEST_F(GrpcServerTest, ErrorsCarryTheirCodesAndNameTheField) {
  ModelInferResponse response;
  ModelInferRequest unknown = TypedRequest(1, 1);
  unknown.set_model_name("nope");
  EXPECT_EQ(Infer(unknown, &response).error_code(),
            grpc::StatusCode::NOT_FOUND);

  ModelInferRequest no_version = TypedRequest(1, 1);
  no_version.set_model_version("9");
  EXPECT_EQ(Infer(no_version, &response).error_code(),
            grpc::StatusCode::NOT_FOUND);

  ModelInferRequest bad_shape = TypedRequest(1, 1);
  bad_shape.mutable_inputs(0)->mutable_shape()->Set(1, 3);
  for (int i = 0; i < 2; ++i)
    bad_shape.mutable_inputs(0)->mutable_contents()->add_fp32_contents(0);
  grpc::Status shape = Infer(bad_shape, &response);
  EXPECT_EQ(shape.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(shape.error_message(), HasSubstr("'a'"));

  ModelInferRequest mixed = RawRequest(1, 1);
  mixed.mutable_inputs(1)->mutable_contents()->add_int64_contents(1);
  grpc::Status m = Infer(mixed, &response);
  EXPECT_EQ(m.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(m.error_message(), HasSubstr("inputs[1] 'b'"));

  ModelInferRequest count = RawRequest(1, 1);
  count.mutable_raw_input_contents()->RemoveLast();
  grpc::Status c = Infer(count, &response);
  EXPECT_EQ(c.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(c.error_message(), HasSubstr("raw_input_contents has 1 entries"));

  ModelInferRequest missing = TypedRequest(1, 1);
  missing.mutable_inputs()->RemoveLast();
  grpc::Status miss = Infer(missing, &response);
  EXPECT_EQ(miss.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(miss.error_message(), HasSubstr("'b'"));

  ModelInferRequest no_name = TypedRequest(1, 1);
  no_name.clear_model_name();
  grpc::Status n = Infer(no_name, &response);
  EXPECT_EQ(n.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(n.error_message(), HasSubstr("model_name"));
}

TEST_F(GrpcServerTest, ModelConfigReturnsTritonsProto) {
  inference::ModelConfigRequest req;
  req.set_name("m");
  inference::ModelConfigResponse resp;
  {
    grpc::ClientContext c;
    grpc::Status s = stub_->ModelConfig(&c, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  EXPECT_EQ(resp.config().name(), "m");
  EXPECT_EQ(resp.config().max_batch_size(), 8);
  ASSERT_EQ(resp.config().input_size(), 2);
  EXPECT_EQ(resp.config().input(0).name(), "a");
  EXPECT_EQ(resp.config().input(0).data_type(), inference::TYPE_FP32);
  req.set_name("nope");
  grpc::ClientContext c;
  EXPECT_EQ(stub_->ModelConfig(&c, req, &resp).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(GrpcServerTest, StatisticsCountInferences) {
  ModelInferResponse response;
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(Infer(TypedRequest(i, i), &response).ok());
  inference::ModelStatisticsRequest req;
  req.set_name("m");
  inference::ModelStatisticsResponse resp;
  {
    grpc::ClientContext c;
    grpc::Status s = stub_->ModelStatistics(&c, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  ASSERT_EQ(resp.model_stats_size(), 1);
  const inference::ModelStatistics& stats = resp.model_stats(0);
  EXPECT_EQ(stats.name(), "m");
  EXPECT_EQ(stats.version(), "1");
  EXPECT_EQ(stats.inference_count(), 3u);
  EXPECT_GE(stats.execution_count(), 1u);
  EXPECT_LE(stats.execution_count(), 3u);
  EXPECT_GT(stats.last_inference(), 0u);
  EXPECT_EQ(stats.inference_stats().success().count(), 3u);
  EXPECT_GT(stats.inference_stats().success().ns(), 0u);
  EXPECT_EQ(stats.inference_stats().queue().count(), 3u);
  EXPECT_EQ(stats.inference_stats().compute_infer().count(),
            stats.execution_count());

  inference::ModelStatisticsRequest all;
  {
    grpc::ClientContext c;
    ASSERT_TRUE(stub_->ModelStatistics(&c, all, &resp).ok());
  }
  EXPECT_EQ(resp.model_stats_size(), 3);
  req.set_name("nope");
  grpc::ClientContext c;
  EXPECT_EQ(stub_->ModelStatistics(&c, req, &resp).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(GrpcServerTest, RepositoryIndexLoadAndUnload) {
  testing::WriteFile(dir_.path() / "late" / "config.pbtxt",
                     absl::StrCat(kBatched));
  std::filesystem::create_directories(dir_.path() / "late" / "1");

  auto index = [&](bool ready) {
    inference::RepositoryIndexRequest req;
    req.set_ready(ready);
    inference::RepositoryIndexResponse resp;
    grpc::ClientContext c;
    EXPECT_TRUE(stub_->RepositoryIndex(&c, req, &resp).ok());
    std::vector<std::string> out;
    for (const auto& m : resp.models()) {
      out.push_back(absl::StrCat(m.name(), ":", m.version(), ":", m.state()));
    }
    return out;
  };
  EXPECT_THAT(index(false),
              ElementsAre("late::", "m:1:READY", "slow:1:READY", "t:1:READY"));

  inference::RepositoryModelLoadRequest load;
  load.set_model_name("late");
  inference::RepositoryModelLoadResponse load_resp;
  {
    grpc::ClientContext c;
    grpc::Status s = stub_->RepositoryModelLoad(&c, load, &load_resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  EXPECT_THAT(index(true), ElementsAre("late:1:READY", "m:1:READY",
                                       "slow:1:READY", "t:1:READY"));

  inference::RepositoryModelUnloadRequest unload;
  unload.set_model_name("m");
  inference::RepositoryModelUnloadResponse unload_resp;
  {
    grpc::ClientContext c;
    grpc::Status s = stub_->RepositoryModelUnload(&c, unload, &unload_resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  EXPECT_THAT(index(true),
              ElementsAre("late:1:READY", "slow:1:READY", "t:1:READY"));
  ModelInferResponse response;
  EXPECT_EQ(Infer(TypedRequest(1, 1), &response).error_code(),
            grpc::StatusCode::UNAVAILABLE);

  load.set_model_name("absent");
  {
    grpc::ClientContext c;
    EXPECT_EQ(stub_->RepositoryModelLoad(&c, load, &load_resp).error_code(),
              grpc::StatusCode::NOT_FOUND);
  }
  load.set_model_name("m");
  (*load.mutable_parameters())["config"].set_string_param("{}");
  {
    grpc::ClientContext c;
    grpc::Status s = stub_->RepositoryModelLoad(&c, load, &load_resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED);
    EXPECT_THAT(s.error_message(), HasSubstr("parameters.config"));
  }
  load.clear_parameters();
  {
    grpc::ClientContext c;
    ASSERT_TRUE(stub_->RepositoryModelLoad(&c, load, &load_resp).ok());
  }
  EXPECT_TRUE(Infer(TypedRequest(1, 1), &response).ok());
}

TEST_F(GrpcServerTest, ServesConcurrentAsyncCalls) {
  constexpr int kCalls = 32;
  std::vector<ModelInferRequest> requests(kCalls);
  std::vector<ModelInferResponse> responses(kCalls);
  std::vector<grpc::Status> statuses(kCalls);
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  BlockingCounter pending(kCalls);
  for (int i = 0; i < kCalls; ++i) {
    requests[i] = i % 2 == 0 ? TypedRequest(static_cast<float>(i), i)
                             : RawRequest(static_cast<float>(i), i);
    requests[i].set_id(std::to_string(i));
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    stub_->async()->ModelInfer(contexts.back().get(), &requests[i],
                               &responses[i], [&, i](grpc::Status s) {
                                 statuses[i] = std::move(s);
                                 pending.DecrementCount();
                               });
  }
  pending.Wait();
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_TRUE(statuses[i].ok()) << i << ": " << statuses[i].error_message();
    EXPECT_EQ(responses[i].id(), std::to_string(i));
    int64_t b = -1;
    if (i % 2 == 0) {
      b = responses[i].outputs(1).contents().int64_contents(0);
    } else {
      std::memcpy(&b, responses[i].raw_output_contents(1).data(), sizeof(b));
    }
    EXPECT_EQ(b, i);
  }
}

TEST_F(GrpcServerTest, StartFailsOnAPortInUse) {
  GrpcServerOptions options;
  options.address = "127.0.0.1";
  options.port = server_->port();
  auto second = GrpcServer::Start(options, manager_.get());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  options.port = 70000;
  EXPECT_EQ(GrpcServer::Start(options, manager_.get()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ferry
