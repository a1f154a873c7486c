// SPDX-License-Identifier: Apache-2.0
// The JSON objects of the job API: OpenAI's Batch and File objects, and
// Ferry's native job object (the Batch fields plus the model, paths, progress
// and cost). Pure functions over plain data; safe for concurrent use.
//
// Times are unix seconds, or null for a state the job never entered.
#ifndef FERRY_API_HTTP_JOB_OBJECTS_H_
#define FERRY_API_HTTP_JOB_OBJECTS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "api/json_writer.h"
#include "jobs/file_store.h"
#include "jobs/job_options.h"
#include "storage/job_store.h"

namespace ferry {

// What an object is rendered from.
struct JobView {
  JobRecord job;
  JobOptions options;
  int64_t records_done = 0;                  // running chunks included
  std::optional<double> records_per_second;  // unknown: null
  std::optional<double> eta_seconds;
  std::string input_file_id;  // empty: the input is no uploaded file
  JobResultFiles results;
  double price_per_instance_hour = 0;
};

// {id, object:"batch", endpoint, errors, input_file_id, completion_window,
//  status, output_file_id, error_file_id, created_at, in_progress_at,
//  expires_at, finalizing_at, completed_at, failed_at, expired_at,
//  cancelling_at, cancelled_at, request_counts {total, completed, failed},
//  metadata}
void WriteBatchObject(const JobView& view, JsonWriter& w);

// The Batch fields (object:"job"), then model, model_version, format, input,
// output, error_file, dead_letter_file, progress {records_done, percent},
// compute_seconds, cost, run_window, time_zone, webhook_url (its query
// hidden), replay_of.
void WriteJobObject(const JobView& view, JsonWriter& w);

// {id, object:"file", bytes, created_at, filename, purpose, status}
void WriteFileObject(const StoredFile& file, JsonWriter& w);

// "24h", "90m" or "3600s": the shortest exact spelling.
std::string FormatCompletionWindow(absl::Duration window);

}  // namespace ferry

#endif  // FERRY_API_HTTP_JOB_OBJECTS_H_
