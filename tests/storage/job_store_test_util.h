// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the storage tests: job and chunk builders and a field by
// field comparison that names the field that differs.
#ifndef FERRY_TESTS_STORAGE_JOB_STORE_TEST_UTIL_H_
#define FERRY_TESTS_STORAGE_JOB_STORE_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "storage/job_store.h"

namespace ferry::testing {

// A whole number of seconds, so that SQLite's microseconds keep it exactly.
inline const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

inline JobRecord MakeJob(const std::string& id, absl::Time created_at,
                         JobState state = JobState::kValidating) {
  JobRecord job;
  job.id = id;
  job.model = "resnet";
  job.model_version = 3;
  job.input_format = "jsonl";
  job.input_path = "/data/" + id + ".jsonl";
  job.output_path = "/data/" + id + ".out";
  job.error_path = "/data/" + id + ".err";
  job.dead_letter_path = "/data/" + id + ".dead";
  job.options_json = R"({"chunk_size":100,"metadata":{"k":"v"}})";
  job.state = state;
  job.created_at = created_at;
  job.expires_at = created_at + absl::Hours(24);
  return job;
}

// `n` chunks of `records` records each, 10 bytes per record.
inline std::vector<ChunkRecord> MakeChunks(int n, int64_t records = 10) {
  std::vector<ChunkRecord> chunks;
  for (int i = 0; i < n; ++i) {
    ChunkRecord c;
    c.index = i;
    c.begin_offset = i * records * 10;
    c.end_offset = (i + 1) * records * 10;
    c.first_record = i * records;
    c.first_line = 2 + i * records;  // a header line, as in CSV
    c.record_count = records;
    chunks.push_back(c);
  }
  return chunks;
}

inline void ExpectSameJob(const JobRecord& got, const JobRecord& want) {
  EXPECT_EQ(got.id, want.id);
  EXPECT_EQ(got.model, want.model);
  EXPECT_EQ(got.model_version, want.model_version);
  EXPECT_EQ(got.input_format, want.input_format);
  EXPECT_EQ(got.input_path, want.input_path);
  EXPECT_EQ(got.output_path, want.output_path);
  EXPECT_EQ(got.error_path, want.error_path);
  EXPECT_EQ(got.dead_letter_path, want.dead_letter_path);
  EXPECT_EQ(got.options_json, want.options_json);
  EXPECT_EQ(got.state, want.state);
  EXPECT_EQ(got.counts, want.counts);
  EXPECT_EQ(got.compute_seconds, want.compute_seconds);
  EXPECT_EQ(got.error, want.error);
  EXPECT_EQ(got.created_at, want.created_at);
  EXPECT_EQ(got.expires_at, want.expires_at);
  EXPECT_EQ(got.in_progress_at, want.in_progress_at);
  EXPECT_EQ(got.finalizing_at, want.finalizing_at);
  EXPECT_EQ(got.completed_at, want.completed_at);
  EXPECT_EQ(got.failed_at, want.failed_at);
  EXPECT_EQ(got.expired_at, want.expired_at);
  EXPECT_EQ(got.cancelling_at, want.cancelling_at);
  EXPECT_EQ(got.cancelled_at, want.cancelled_at);
}

inline std::vector<std::string> Ids(const std::vector<JobRecord>& jobs) {
  std::vector<std::string> ids;
  for (const JobRecord& j : jobs) ids.push_back(j.id);
  return ids;
}

}  // namespace ferry::testing

#endif  // FERRY_TESTS_STORAGE_JOB_STORE_TEST_UTIL_H_
