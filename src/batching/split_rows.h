// SPDX-License-Identifier: Apache-2.0
// A request with more rows (or bytes) than one batch may hold runs as parts:
// PartBoundaries decides where to cut, SplitRows cuts without copying,
// ConcatRows joins the parts' outputs back. RowByteOffsets is shared with the
// output slicing of batch_assembly.h.
//
// Callers: the DynamicBatcher's enqueuing threads (PartBoundaries, SplitRows)
// and its completion path (ConcatRows). Inputs were already checked by
// ValidateAndOrderInputs.
//
// Ownership: parts borrow from the request's tensors, which a shared
// keep-alive holds until the last part is gone.
//
// Thread-safety: plain functions over their arguments.
#ifndef FERRY_BATCHING_SPLIT_ROWS_H_
#define FERRY_BATCHING_SPLIT_ROWS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/tensor.h"

namespace ferry {

// Byte offsets in `t` (dimension 0 = `total_rows`) of each row boundary in
// `boundaries` (ascending, within [0, total_rows]). BYTES tensors are walked
// element by element; the data must be well formed.
std::vector<size_t> RowByteOffsets(const Tensor& t, int64_t total_rows,
                                   absl::Span<const int64_t> boundaries);

// Where to cut one request's inputs (dimension 0 = rows, equal in all) so
// that every part has at most `max_rows` rows and, when max_bytes > 0, at most
// `max_bytes` bytes of input (all inputs together; BYTES elements counted as
// sent, with their 4-byte length prefixes). Returns the row boundaries
// 0 = b[0] < b[1] < ... < b[n] = rows: part p is rows [b[p], b[p+1]). Parts are
// filled greedily in row order, so all but the last are as large as allowed.
// Zero rows give one empty part, {0, 0}. INVALID_ARGUMENT when max_rows < 1,
// the inputs disagree on dimension 0 (or one is a scalar), or a single row is
// larger than max_bytes (the message names the row and max_batch_bytes).
absl::StatusOr<std::vector<int64_t>> PartBoundaries(
    absl::Span<const Tensor> inputs, int64_t max_rows, size_t max_bytes);

// Cuts one request's inputs at `boundaries` (as PartBoundaries returns them)
// into parts, in order. Zero copy: parts borrow from the inputs, which a
// shared keep-alive holds. One part ({0, rows}) comes back as the inputs,
// unchanged. INVALID_ARGUMENT when the boundaries do not run from 0 to the
// inputs' rows in increasing order, or the inputs disagree on dimension 0.
absl::StatusOr<std::vector<std::vector<Tensor>>> SplitRows(
    std::vector<Tensor> inputs, absl::Span<const int64_t> boundaries);

// Joins the outputs of SplitRows' parts (each in config output order) back
// into one owned tensor per output, rows in part order. One part passes
// through unchanged. INVALID_ARGUMENT for no parts; INTERNAL naming the
// output when the parts disagree on the number of outputs, names, data types
// or non-batch dims.
absl::StatusOr<std::vector<Tensor>> ConcatRows(
    std::vector<std::vector<Tensor>> parts);

}  // namespace ferry

#endif  // FERRY_BATCHING_SPLIT_ROWS_H_
