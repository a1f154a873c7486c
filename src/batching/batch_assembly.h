// SPDX-License-Identifier: Apache-2.0
// Batch assembly: the data plane of the dynamic batcher. Turns the inputs of
// the requests the batch policy picked into one contiguous tensor per model
// input (padding variable-length dims), and slices the engine's outputs back
// into one output vector per request. Splitting a request larger than a batch
// into parts, and joining their outputs, is in split_rows.h.
//
// Callers: the DynamicBatcher's instance threads (AssembleBatch, SplitOutputs)
// and its enqueuing threads (VariableLength for length bucketing, BatchKey).
// Requests reaching these functions were already checked and ordered by
// ValidateAndOrderInputs.
//
// Ownership: a batch of one request borrows the request's tensors, so the
// caller keeps the request alive until the engine has run. Output slices and
// SplitRows parts borrow from their source, which a shared keep-alive holds
// until the last slice is gone.
//
// Thread-safety: plain functions over their arguments; safe to call
// concurrently on different data.
#ifndef FERRY_BATCHING_BATCH_ASSEMBLY_H_
#define FERRY_BATCHING_BATCH_ASSEMBLY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "config/model_options.h"
#include "core/tensor.h"

namespace ferry {

// How variable-length inputs are padded, from the model's parameters.
struct PaddingOptions {
  // parameters { key: "pad_value" }: the value padded positions get, converted
  // to each padded input's data type (FP16 via FloatToHalf).
  double pad_value = 0;
  // parameters { key: "attention_mask_input" }: an input padded with 0
  // whatever pad_value says. Empty: none.
  std::string attention_mask_input;

  // INVALID_ARGUMENT naming parameters.pad_value when it is not a number or
  // does not fit a padded input's integer/BOOL type (an integral value in
  // range; 0 or 1 for BOOL), and parameters.attention_mask_input when it names
  // no input or a BYTES input.
  static absl::StatusOr<PaddingOptions> FromModelOptions(
      const ModelOptions& options);
};

// A request's length for length bucketing: over its inputs, the largest
// product of the sizes of the dims the config marks -1 (an input [-1, 4] sent
// as [rows, 7, 4] has length 7; [-1, -1] sent as [rows, 3, 5] has 15). 0 when
// no input has a variable dim. Inputs are matched to the config by name;
// unknown names are ignored.
int64_t VariableLength(const ModelOptions& options,
                       absl::Span<const Tensor> inputs);

struct AssembledBatch {
  // One tensor per input the requests carry, in config order (a request may
  // omit optional inputs; all requests of a batch omit the same ones).
  // Dimension 0 is total_rows(); each -1 dim is padded to the batch's largest.
  std::vector<Tensor> inputs;
  std::vector<int64_t> row_offsets;  // per request: its first row in the batch
  std::vector<int64_t> rows;         // per request: its number of rows
  int64_t padded_elements = 0;  // elements added by padding, over all inputs
  int64_t total_elements = 0;   // elements of all batch inputs

  // The batch's sequence length, set when every request has one: a request's
  // sequence length is the size its variable (-1) input dims all share (e.g.
  // input_ids [-1] and attention_mask [-1] both of length 7). -1 when some
  // request's variable dims disagree in size, or no input has one; then
  // `lengths` is empty.
  int64_t padded_length = -1;    // max over `lengths`
  std::vector<int64_t> lengths;  // per request: its sequence length

  int64_t total_rows() const {
    return rows.empty() ? 0 : row_offsets.back() + rows.back();
  }
  // padded_elements / total_elements; 0 when total_elements is 0.
  double padding_waste() const;
};

// Builds the batch from `requests[i]`, request i's validated, config-ordered
// inputs. Several requests: each input becomes one owned, contiguous tensor;
// a request's whole block is one memcpy where it needs no padding, and
// variable (-1) dims are padded at their end up to the batch's largest with
// the pad value (0 for the attention-mask input). One request: the batch
// borrows its tensors (no copy). BYTES inputs are concatenated, never padded.
// INVALID_ARGUMENT for no requests, for several requests of a model with
// max_batch_size 0, for requests that differ in input names, data types,
// ranks or fixed dims, and for a BYTES input whose variable dims differ
// between requests (it would need padding).
absl::StatusOr<AssembledBatch> AssembleBatch(
    const ModelOptions& options, const PaddingOptions& padding,
    absl::Span<const std::vector<Tensor>* const> requests);

// Slices the engine's `outputs` (config output order, dimension 0 =
// batch.total_rows()) into one output vector per request, each with
// dimension 0 = the request's rows.
//
// Without copying: each slice borrows from the outputs, which move into a
// shared keep-alive that lives until the last slice is destroyed. A batch of
// one request gets the outputs themselves.
//
// Cut-back rule: when the batch has a sequence length (batch.padded_length
// >= 0), an output dim k >= 1 that the config marks -1 and whose size in the
// batch output equals batch.padded_length is cut to the request's own length
// (batch.lengths[i]), keeping the leading positions. A request shorter than
// the padded length gets an owned copy of that output (its rows are no longer
// contiguous); others still borrow. BYTES outputs are never cut.
//
// INTERNAL naming the output when the engine returned a different number of
// outputs than the config, an output whose name differs from the config's, or
// one whose dimension 0 is not the batch's total rows. For max_batch_size 0
// (one request) the outputs pass through after the count check.
absl::StatusOr<std::vector<std::vector<Tensor>>> SplitOutputs(
    const ModelOptions& options, const AssembledBatch& batch,
    std::vector<Tensor> outputs);

// What requests must agree on to share a batch, as one number (0 for most
// models): which of the config's inputs the request carries (optional ones may
// be absent) and the non-batch shape of every BYTES input with a -1 dim, which
// AssembleBatch cannot pad. `inputs` in config order, as ValidateAndOrderInputs
// leaves them.
uint64_t BatchKey(const ModelOptions& options, absl::Span<const Tensor> inputs);

}  // namespace ferry

#endif  // FERRY_BATCHING_BATCH_ASSEMBLY_H_
