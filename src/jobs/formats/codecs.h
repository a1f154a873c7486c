// SPDX-License-Identifier: Apache-2.0
// The RecordCodec implementations behind RecordCodec::Create. Internal to
// jobs/formats.
#ifndef FERRY_JOBS_FORMATS_CODECS_H_
#define FERRY_JOBS_FORMATS_CODECS_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "config/model_options.h"
#include "jobs/formats/record_format.h"

namespace ferry::internal {

absl::StatusOr<std::unique_ptr<RecordCodec>> CreateCsvCodec(
    const ModelOptions& model, const InputScan& scan, const CsvOptions& csv);
absl::StatusOr<std::unique_ptr<RecordCodec>> CreateJsonlCodec(
    const ModelOptions& model, const CsvOptions& csv);

// The canonical code in snake case ("invalid_argument"), for dead-letter
// lines, which carry the status rather than a job-level error name.
std::string StatusCodeName(absl::StatusCode code);

// "line 17: <message>", keeping the code.
absl::Status AtLine(int64_t line, const absl::Status& status);

}  // namespace ferry::internal

#endif  // FERRY_JOBS_FORMATS_CODECS_H_
