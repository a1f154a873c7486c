// SPDX-License-Identifier: Apache-2.0
#include "batching/split_rows.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"

namespace ferry {
namespace {

uint32_t ReadLength(const std::byte* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

// Dimension 0 shared by all inputs.
absl::StatusOr<int64_t> SharedRows(absl::Span<const Tensor> inputs) {
  int64_t rows = -1;
  for (const Tensor& t : inputs) {
    if (t.shape().empty() || (rows >= 0 && t.shape()[0] != rows)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", t.name(), "': shape ", ShapeToString(t.shape()),
          " has no batch dimension shared with the other inputs"));
    }
    rows = t.shape()[0];
  }
  return std::max<int64_t>(rows, 0);
}

absl::Status RowTooLarge(int64_t row, size_t bytes, size_t max_bytes) {
  return absl::InvalidArgumentError(
      absl::StrCat("row ", row, " of the request has ", bytes,
                   " bytes of input, more than max_batch_bytes (", max_bytes,
                   "); no batch can hold it"));
}

}  // namespace

std::vector<size_t> RowByteOffsets(const Tensor& t, int64_t total_rows,
                                   absl::Span<const int64_t> boundaries) {
  std::vector<size_t> offsets;
  offsets.reserve(boundaries.size());
  if (total_rows == 0) {
    offsets.assign(boundaries.size(), 0);
    return offsets;
  }
  if (IsFixedSize(t.dtype())) {
    const size_t row_bytes = t.byte_size() / static_cast<size_t>(total_rows);
    for (int64_t b : boundaries)
      offsets.push_back(static_cast<size_t>(b) * row_bytes);
    return offsets;
  }
  const int64_t per_row = t.num_elements() / total_rows;
  int64_t element = 0;
  size_t offset = 0;
  for (int64_t b : boundaries) {
    for (; element < b * per_row; ++element) {
      offset += 4 + ReadLength(t.data() + offset);
    }
    offsets.push_back(offset);
  }
  return offsets;
}

absl::StatusOr<std::vector<int64_t>> PartBoundaries(
    absl::Span<const Tensor> inputs, int64_t max_rows, size_t max_bytes) {
  if (max_rows < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot split a request into parts of ", max_rows,
                     " rows; the limit must be at least 1"));
  }
  ASSIGN_OR_RETURN(const int64_t rows, SharedRows(inputs));
  std::vector<int64_t> boundaries = {0};
  if (rows == 0) {
    boundaries.push_back(0);
    return boundaries;
  }
  // Row sizes matter only under a byte cap: fixed-size inputs add the same to
  // every row, BYTES inputs what each row holds.
  size_t fixed_row_bytes = 0;
  std::vector<std::vector<size_t>> variable;  // BYTES inputs: row offsets
  if (max_bytes > 0) {
    std::vector<int64_t> every_row(static_cast<size_t>(rows) + 1);
    for (int64_t r = 0; r <= rows; ++r) every_row[r] = r;
    for (const Tensor& t : inputs) {
      if (IsFixedSize(t.dtype())) {
        fixed_row_bytes += t.byte_size() / static_cast<size_t>(rows);
      } else {
        variable.push_back(RowByteOffsets(t, rows, every_row));
      }
    }
  }
  int64_t part_rows = 0;
  size_t part_bytes = 0;
  for (int64_t r = 0; r < rows; ++r) {
    size_t row_bytes = fixed_row_bytes;
    for (const std::vector<size_t>& offsets : variable)
      row_bytes += offsets[r + 1] - offsets[r];
    if (max_bytes > 0 && row_bytes > max_bytes) {
      return RowTooLarge(r, row_bytes, max_bytes);
    }
    if (part_rows == max_rows ||
        (max_bytes > 0 && part_bytes + row_bytes > max_bytes)) {
      boundaries.push_back(r);
      part_rows = 0;
      part_bytes = 0;
    }
    ++part_rows;
    part_bytes += row_bytes;
  }
  boundaries.push_back(rows);
  return boundaries;
}

absl::StatusOr<std::vector<std::vector<Tensor>>> SplitRows(
    std::vector<Tensor> inputs, absl::Span<const int64_t> boundaries) {
  ASSIGN_OR_RETURN(const int64_t rows, SharedRows(inputs));
  bool increasing = boundaries.size() >= 2;
  for (size_t i = 1; i < boundaries.size(); ++i)
    increasing = increasing && boundaries[i] > boundaries[i - 1];
  if (boundaries.size() == 2 && boundaries[0] == 0 && boundaries[1] == rows) {
    std::vector<std::vector<Tensor>> parts;
    parts.push_back(std::move(inputs));
    return parts;
  }
  if (!increasing || boundaries.front() != 0 || boundaries.back() != rows) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot cut ", rows, " rows at [", absl::StrJoin(boundaries, ","),
        "]: the boundaries must rise from 0 to ", rows));
  }
  std::vector<std::vector<size_t>> offsets;
  offsets.reserve(inputs.size());
  for (const Tensor& t : inputs)
    offsets.push_back(RowByteOffsets(t, rows, boundaries));
  auto keepalive = std::make_shared<std::vector<Tensor>>(std::move(inputs));

  std::vector<std::vector<Tensor>> parts(boundaries.size() - 1);
  for (size_t p = 0; p + 1 < boundaries.size(); ++p) {
    parts[p].reserve(keepalive->size());
    for (size_t j = 0; j < keepalive->size(); ++j) {
      const Tensor& t = (*keepalive)[j];
      Shape shape = t.shape();
      shape[0] = boundaries[p + 1] - boundaries[p];
      ASSIGN_OR_RETURN(
          Tensor part,
          Tensor::Borrow(t.name(), t.dtype(), std::move(shape),
                         t.data() + offsets[j][p],
                         offsets[j][p + 1] - offsets[j][p], keepalive));
      parts[p].push_back(std::move(part));
    }
  }
  return parts;
}

absl::StatusOr<std::vector<Tensor>> ConcatRows(
    std::vector<std::vector<Tensor>> parts) {
  if (parts.empty()) {
    return absl::InvalidArgumentError("no parts to join");
  }
  if (parts.size() == 1) return std::move(parts[0]);
  const std::vector<Tensor>& first = parts[0];
  for (size_t p = 1; p < parts.size(); ++p) {
    if (parts[p].size() != first.size()) {
      return absl::InternalError(
          absl::StrCat("part ", p, " has ", parts[p].size(),
                       " outputs, part 0 has ", first.size()));
    }
  }
  std::vector<Tensor> joined;
  joined.reserve(first.size());
  for (size_t j = 0; j < first.size(); ++j) {
    const Tensor& t0 = first[j];
    if (t0.shape().empty()) {
      return absl::InternalError(absl::StrCat(
          "output '", t0.name(), "' is a scalar; it has no rows to join"));
    }
    Shape shape = t0.shape();
    shape[0] = 0;
    size_t bytes = 0;
    for (size_t p = 0; p < parts.size(); ++p) {
      const Tensor& t = parts[p][j];
      if (t.name() != t0.name() || t.dtype() != t0.dtype() ||
          t.shape().size() != t0.shape().size() ||
          !std::equal(t.shape().begin() + 1, t.shape().end(),
                      t0.shape().begin() + 1)) {
        return absl::InternalError(absl::StrCat(
            "output ", j, " of part ", p, " is ", t.DebugString(),
            ", part 0 has ", t0.DebugString(), "; they cannot be joined"));
      }
      shape[0] += t.shape()[0];
      bytes += t.byte_size();
    }
    Tensor out;
    if (IsFixedSize(t0.dtype())) {
      ASSIGN_OR_RETURN(
          out, Tensor::Uninitialized(t0.name(), t0.dtype(), std::move(shape)));
      size_t offset = 0;
      for (const std::vector<Tensor>& part : parts) {
        const Tensor& t = part[j];
        if (t.byte_size() > 0) {
          std::memcpy(out.mutable_data() + offset, t.data(), t.byte_size());
        }
        offset += t.byte_size();
      }
    } else {
      std::string data;
      data.reserve(bytes);
      for (const std::vector<Tensor>& part : parts) {
        data.append(reinterpret_cast<const char*>(part[j].data()),
                    part[j].byte_size());
      }
      ASSIGN_OR_RETURN(
          out, Tensor::FromBytes(t0.name(), DataType::kBytes, std::move(shape),
                                 std::move(data)));
    }
    joined.push_back(std::move(out));
  }
  return joined;
}

}  // namespace ferry
