// SPDX-License-Identifier: Apache-2.0
// What the DynamicBatcher tests share: an identity model, a batcher over
// identity engines, options with a queue delay, and a request whose result is
// collected.
#ifndef FERRY_TESTS_BATCHING_BATCHER_HARNESS_H_
#define FERRY_TESTS_BATCHING_BATCHER_HARNESS_H_

#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include "batching/batcher_options.h"
#include "batching/dynamic_batcher.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "core/tensor.h"
#include "engines/identity/identity_engine.h"

namespace ferry::batcher_test {

// An identity model on one FP32 input [1] (or INT64 [-1] with `variable`).
inline ModelOptions Model(int max_batch, bool variable = false) {
  ModelOptions m;
  m.name = "id";
  m.platform = "identity";
  m.max_batch_size = max_batch;
  const DataType t = variable ? DataType::kInt64 : DataType::kFp32;
  const std::vector<int64_t> dims =
      variable ? std::vector<int64_t>{-1} : std::vector<int64_t>{1};
  m.inputs = {{"x", t, dims}};
  m.outputs = {{"y", t, dims}};
  m.instance_groups = {{}};
  m.dynamic_batching.enabled = true;
  return m;
}

struct Harness {
  std::vector<std::unique_ptr<Engine>> engines;
  std::unique_ptr<DynamicBatcher> batcher;

  Harness(ModelOptions model, BatcherOptions options, Clock* clock,
          int instances = 1) {
    EngineLoadContext ctx;
    ctx.options = model;
    std::vector<Engine*> raw;
    for (int i = 0; i < instances; ++i) {
      engines.push_back(*IdentityEngineFactory().Create(ctx));
      raw.push_back(engines.back().get());
    }
    batcher =
        *DynamicBatcher::Create(nullptr, model, raw, std::move(options), clock);
  }
  ~Harness() { batcher.reset(); }
};

inline BatcherOptions Options(const ModelOptions& m, int64_t delay_us) {
  ModelOptions copy = m;
  copy.dynamic_batching.max_queue_delay_us = static_cast<uint64_t>(delay_us);
  return *BatcherOptionsFromModel(copy);
}

// Collects one request's result.
struct Outcome {
  Notification done;
  absl::StatusOr<std::vector<Tensor>> result = absl::UnknownError("not called");
  std::atomic<int> calls{0};
};

// A request of one input whose result lands in `out`.
inline std::unique_ptr<Request> RequestOf(Tensor input, Outcome* out) {
  auto r = std::make_unique<Request>();
  r->inputs.push_back(std::move(input));
  r->done = [out](absl::StatusOr<std::vector<Tensor>> result) {
    out->result = std::move(result);
    out->calls.fetch_add(1);
    out->done.Notify();
  };
  return r;
}

// One FP32 row of width 1 per value, input "x".
inline std::unique_ptr<Request> MakeRequest(std::vector<float> rows,
                                            Outcome* out,
                                            uint32_t priority = 0) {
  const int64_t n = static_cast<int64_t>(rows.size());
  auto r = RequestOf(*Tensor::FromValues<float>("x", {n, 1}, rows), out);
  r->priority = priority;
  return r;
}

inline std::vector<float> Values(const Outcome& o) {
  auto v = (*o.result)[0].values<float>();
  return std::vector<float>(v.begin(), v.end());
}

}  // namespace ferry::batcher_test

#endif  // FERRY_TESTS_BATCHING_BATCHER_HARNESS_H_
