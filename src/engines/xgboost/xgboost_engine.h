// SPDX-License-Identifier: Apache-2.0
// The XGBoost engine (platform "xgboost"): serves gradient-boosted tree models
// through XGBoost's C API (libxgboost 1.7), laid out as Triton's FIL backend
// lays them out, so a FIL model repository of XGBoost models loads without
// edits.
//
// Who calls it: cli/ registers the factory (RegisterXgboostEngine); the
// repository calls AutoComplete() and Create(); each instance's thread calls
// Engine::Run(). Thread-safety: the factory is stateless, so
// Create()/AutoComplete() are safe for concurrent use. Every engine instance
// owns one booster and is run by one thread at a time (the Engine contract); it
// uses context.intra_op_threads threads inside Run().
//
// Model file, in EngineLoadContext::version_dir:
//   1. default_model_filename, if the config sets it;
//   2. else parameters.model_type (FIL): "xgboost" → xgboost.model,
//      "xgboost_json" → xgboost.json, "xgboost_ubj" → xgboost.ubj;
//   3. else the first that exists of model.json, model.ubj, model.bin,
//      model.xgb, xgboost.json, xgboost.ubj, xgboost.model.
// None → NOT_FOUND naming the directory and the names tried. XGBoost reads the
// format (JSON, UBJSON, legacy binary) from the contents, so any name works for
// any format.
//
// Tensors: exactly one input, FP32, dims [n_features] (the model's count, or
// -1); exactly one output, FP32, dims [width] (or -1). The model must batch
// (max_batch_size > 0): Run() takes [batch, n_features] and returns
// [batch, width]. NaN marks a missing value. Rows are predicted in place from
// the input buffer.
//
// Output, by parameters (FIL's names where FIL has them). k below is what
// XGBoost gives per row: 1, or the number of classes or targets.
//   - Default (predict_type unset or "value", output_class unset or false;
//     predict_proba is then ignored): XGBoost's predict(), width k. For
//     binary:logistic the probability, for multi:softprob one probability per
//     class, for multi:softmax the class id.
//   - predict_type "margin": predict(output_margin=True), width k.
//   - output_class true, predict_proba unset/false: the class id as FP32,
//     width 1: p > parameters.threshold (default 0.5) for one-column models,
//     the first argmax for multi-column ones (multi:softprob), predict() for
//     multi:softmax.
//   - output_class true, predict_proba true: one probability per class:
//     (1-p, p), width 2, for binary:logistic and reg:logistic; as predicted
//     for multi:softprob; the softmax of the margins for multi:softmax. Other
//     objectives: INVALID_ARGUMENT.
// predict_type "margin" with output_class true is INVALID_ARGUMENT. Booleans
// are "true"/"false" (any case) or "1"/"0".
//
// AutoComplete fills what the config leaves out: one input "input__0" FP32
// [n_features], one output "output__0" FP32 [width] (width from the table
// above), and, when max_batch_size is 0, max_batch_size = kAutoMaxBatchSize
// together with dynamic batching (max_queue_delay_us = kAutoMaxQueueDelayUs)
// unless the config already enables it. It never changes what the config says.
//
// Errors: XGBoost's failures become absl::Status carrying XGBGetLastError()'s
// text (without its timestamp and stack trace): INVALID_ARGUMENT for a model
// file XGBoost cannot read, INTERNAL for a prediction that fails on validated
// input.
#ifndef FERRY_ENGINES_XGBOOST_XGBOOST_ENGINE_H_
#define FERRY_ENGINES_XGBOOST_XGBOOST_ENGINE_H_

#include <cstdint>
#include <filesystem>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engines/engine.h"
#include "engines/engine_registry.h"

namespace ferry {

class XgboostEngineFactory final : public EngineFactory {
 public:
  // 4096 rows: measured on 2 cores, XGBoost reaches its peak rows/s at about
  // 4096 rows per call (90% of it from ~512), and such a call of a 200-tree
  // model takes ~12 ms. Triton FIL has no default (its configs must set
  // max_batch_size).
  static constexpr int32_t kAutoMaxBatchSize = 4096;
  // One row costs ~40 µs, so half a millisecond gathers a useful batch under
  // load without adding much latency when idle.
  static constexpr uint64_t kAutoMaxQueueDelayUs = 500;

  absl::StatusOr<std::unique_ptr<Engine>> Create(
      const EngineLoadContext& context) const override;

  absl::Status AutoComplete(const std::filesystem::path& version_dir,
                            ModelOptions* options) const override;
};

// Registers an XgboostEngineFactory under platform "xgboost". ALREADY_EXISTS if
// the platform is taken.
absl::Status RegisterXgboostEngine(EngineRegistry* registry);

}  // namespace ferry

#endif  // FERRY_ENGINES_XGBOOST_XGBOOST_ENGINE_H_
