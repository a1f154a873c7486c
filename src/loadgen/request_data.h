// SPDX-License-Identifier: Apache-2.0
// The inputs `ferry bench` sends: random tensors shaped from the model's
// metadata (GET /v2/models/M or gRPC ModelMetadata), or a KServe v2 JSON
// request read from a file.
//
// Pure functions.
#ifndef FERRY_LOADGEN_REQUEST_DATA_H_
#define FERRY_LOADGEN_REQUEST_DATA_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/data_type.h"
#include "core/tensor.h"

namespace ferry {

// One input as the model's metadata describes it; -1 marks a variable
// dimension (the first one is the batch dimension when the model batches).
struct InputSpec {
  std::string name;
  DataType dtype = DataType::kFp32;
  Shape shape;
};

// Parses the "inputs" of a KServe v2 model metadata response body.
absl::StatusOr<std::vector<InputSpec>> ParseModelMetadataInputs(
    absl::string_view json);

// A dimension given on the command line: fixed (lo == hi) or a range drawn
// from per request ("--shape ids:8-128").
struct DimRange {
  int64_t lo = 1;
  int64_t hi = 1;
  bool operator==(const DimRange&) const = default;
};

struct RandomInputOptions {
  int64_t batch_rows = 1;  // the batch dimension's size
  // Shapes for inputs with variable dimensions, without the batch dimension
  // ("--shape ids:64" or "--shape ids:8-128"). Within one request, every
  // dimension with the same range gets the same drawn value, so input_ids
  // and attention_mask stay the same length.
  std::map<std::string, std::vector<DimRange>> shapes;
  int64_t int_max = 100;  // integers are drawn from [0, int_max)
  uint64_t seed = 1;
};

// "NAME:D1,D2,..." into `shapes`, each D a size or LO-HI. INVALID_ARGUMENT
// names the flag value.
absl::Status ParseShapeFlag(
    absl::string_view text,
    std::map<std::string, std::vector<DimRange>>* shapes);

// Whether some given dimension is a range (requests differ in shape).
bool HasRanges(const std::map<std::string, std::vector<DimRange>>& shapes);

// Random tensors for `inputs`: floats uniform in [0, 1), integers in
// [0, int_max), booleans fair, BYTES the string "ferry". The batch dimension
// (a leading -1) becomes batch_rows; any other -1 must be given a shape.
// INVALID_ARGUMENT names the input.
absl::StatusOr<std::vector<Tensor>> RandomInputs(
    const std::vector<InputSpec>& inputs, const RandomInputOptions& options);

}  // namespace ferry

#endif  // FERRY_LOADGEN_REQUEST_DATA_H_
