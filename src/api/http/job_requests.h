// SPDX-License-Identifier: Apache-2.0
// The JSON request bodies of the job API, parsed into plain structs: every
// field checked for its type and range, unknown fields refused. Errors are
// INVALID_ARGUMENT and start with the field's name ("metadata.team: ...",
// "unknown field 'colour' ..."). No file system, no model lookup: JobsHandler
// resolves files, paths and models afterwards. Pure functions; safe for
// concurrent use.
#ifndef FERRY_API_HTTP_JOB_REQUESTS_H_
#define FERRY_API_HTTP_JOB_REQUESTS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "jobs/job_options.h"

namespace ferry {

// POST /v1/batches: {input_file_id, endpoint, completion_window?, metadata?}.
struct BatchRequest {
  std::string input_file_id;
  std::string endpoint;
  std::string model;          // from the endpoint
  int64_t model_version = 0;  // from the endpoint; 0: the latest
  absl::Duration completion_window = absl::Hours(24);
  std::vector<std::pair<std::string, std::string>> metadata;
};
absl::StatusOr<BatchRequest> ParseBatchRequest(const std::string& body);

// POST /v1/jobs. Exactly one of input and input_file_id is set; `options`
// holds everything but the format, which the handler resolves from `format`
// or the input's name.
struct NativeJobRequest {
  std::string model;
  int64_t model_version = 0;
  std::string input;  // a local path or file:// URL, not yet confined
  std::string input_file_id;
  std::string output;  // empty: a file of the API
  std::string format;  // empty: from the input's extension
  JobOptions options;
};
absl::StatusOr<NativeJobRequest> ParseNativeJobRequest(const std::string& body);

// POST /v1/jobs/{id}/replay-dead-letters: {output?}; an empty body is {}.
// Returns the output ("" when none is given).
absl::StatusOr<std::string> ParseReplayRequest(const std::string& body);

// "/v2/models/<m>/infer" or "/v2/models/<m>/versions/<v>/infer": the model
// and version (0 when the endpoint names none).
absl::StatusOr<std::pair<std::string, int64_t>> ParseModelEndpoint(
    absl::string_view endpoint);

}  // namespace ferry

#endif  // FERRY_API_HTTP_JOB_REQUESTS_H_
