// SPDX-License-Identifier: Apache-2.0
// InferenceStatistics: one model version's statistics in the shape of Triton's
// statistics extension, summarised once from the batcher's snapshot so that the
// HTTP
// (`GET .../stats`) and gRPC (`ModelStatistics`) answers agree. Pure function.
//
//   inference_count  rows of successful requests (a request of N rows counts N)
//   execution_count  batches run by the engine
//   success          successful requests; ns = their summed end-to-end time
//   fail             requests that failed after they were accepted (timeout,
//   engine
//                    error, drain) plus those refused at the door for a full
//                    queue or bad input; ns = 0 (Ferry does not time failures)
//   queue            requests dispatched to a batch; ns = their summed queue
//   time compute_infer    batches; ns = their summed engine time
#ifndef FERRY_API_INFERENCE_STATISTICS_H_
#define FERRY_API_INFERENCE_STATISTICS_H_

#include <cstdint>
#include <string>

#include "repository/model_manager.h"

namespace ferry {

struct DurationStatistic {
  uint64_t count = 0;
  uint64_t ns = 0;
};

struct InferenceStatistics {
  std::string name;
  int64_t version = 0;
  uint64_t last_inference_ms = 0;  // Unix milliseconds; 0: never
  uint64_t inference_count = 0;
  uint64_t execution_count = 0;
  DurationStatistic success;
  DurationStatistic fail;
  DurationStatistic queue;
  DurationStatistic compute_infer;
};

InferenceStatistics SummarizeStatistics(const ModelVersionStatistics& stats);

}  // namespace ferry

#endif  // FERRY_API_INFERENCE_STATISTICS_H_
