// SPDX-License-Identifier: Apache-2.0
// JobsHandler: the offline job API under /v1, from a parsed HTTP request to
// an HTTP response. KserveHandler routes every /v1 path here.
//
//   /v1/files     the OpenAI Files API subset the Batch API needs: upload
//                 (multipart/form-data), list, get, content, delete.
//   /v1/batches   the OpenAI Batch API: a JSONL file of requests to one
//                 model endpoint (`/v2/models/<m>/infer`), Batch objects.
//   /v1/jobs      Ferry's native jobs: CSV or JSONL files under the server's
//                 data roots (or uploaded), with the job runner's options.
//
// docs/api.md ("Job API") lists the endpoints, fields and status codes.
//
// Threads: Handle() never works on the calling I/O thread. Every /v1 request
// runs on one of the handler's own `threads` (a submit reads the whole input
// file once; the job store may wait on SQLite locks), and the response is
// posted back to the connection's executor.
//
// Thread-safety: safe for concurrent use. The runner, store, models and files
// must outlive the handler; the handler must outlive the HTTP server that
// routes to it (its destructor finishes queued requests and joins).
#ifndef FERRY_API_HTTP_JOBS_HANDLER_H_
#define FERRY_API_HTTP_JOBS_HANDLER_H_

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "api/http/kserve_handler.h"
#include "api/json_writer.h"
#include "boost/asio/any_io_executor.hpp"
#include "boost/asio/thread_pool.hpp"
#include "jobs/data_roots.h"
#include "jobs/file_store.h"
#include "jobs/job_runner.h"
#include "jobs/webhook/http_post.h"
#include "repository/model_manager.h"
#include "storage/job_store.h"

namespace ferry {

struct JobsHandlerOptions {
  // Where jobs.db, parts/ and files/ live; outputs may not be written there
  // except by the server itself.
  std::filesystem::path state_dir;
  // The local paths native jobs may read and write.
  DataRoots data_roots;
  // The http(s) URLs a native job's input may be downloaded from: those that
  // start with one of these (`ferry serve --input-url-prefix`). Empty: none.
  std::vector<std::string> input_url_prefixes;
  // Whether a webhook secret is configured; without one a job with a
  // webhook_url is refused at submit.
  bool webhooks_enabled = false;
  // For the `cost` of native job objects.
  double price_per_instance_hour = 0;
  int threads = 2;
  // /v1 requests queued or running at most; more are answered 503 with
  // Retry-After at once (a flood of uploads must not queue without bound,
  // each holding its body in memory).
  int max_pending = 64;
};

class JobsHandler {
 public:
  using Respond = absl::AnyInvocable<void(HttpResponse)>;

  JobsHandler(JobRunner* runner, JobStore* store, ModelManager* models,
              FileStore* files, JobsHandlerOptions options);
  ~JobsHandler();  // finishes queued requests, joins the threads

  JobsHandler(const JobsHandler&) = delete;
  JobsHandler& operator=(const JobsHandler&) = delete;

  // Answers a /v1 request on the handler's threads; `respond` runs on
  // `executor`.
  void Handle(HttpRequest request, boost::asio::any_io_executor executor,
              Respond respond);

  // Answers on the calling thread (what the handler's threads run).
  HttpResponse HandleNow(HttpRequest& request);

 private:
  struct Target;

  HttpResponse Route(HttpRequest& request, const Target& target);
  // /v1/files
  absl::StatusOr<std::string> UploadFile(const HttpRequest& request);
  absl::StatusOr<std::string> ListFiles(const Target& target);
  absl::StatusOr<std::string> GetFile(const std::string& id);
  absl::StatusOr<HttpResponse> FileContent(const std::string& id);
  absl::StatusOr<std::string> DeleteFile(const std::string& id);
  // /v1/batches and /v1/jobs; `batch` selects the Batch API's view.
  absl::StatusOr<std::string> CreateBatch(const std::string& body);
  absl::StatusOr<std::string> CreateJob(const std::string& body);
  absl::StatusOr<std::string> ReplayDeadLetters(const std::string& id,
                                                const std::string& body);
  absl::StatusOr<std::string> ListJobs(const Target& target, bool batch);
  absl::StatusOr<std::string> GetJob(const std::string& id, bool batch);
  absl::StatusOr<std::string> CancelJob(const std::string& id, bool batch);

  // The job, NOT_FOUND if it is not one of the view's (a native job is no
  // batch).
  absl::StatusOr<JobRecord> FindJob(const std::string& id, bool batch);
  // The job's Batch or native object, with its progress and result files.
  void WriteJob(const JobRecord& job, bool batch, JsonWriter& w);
  // Refuses an output another unfinished job writes, or the input itself.
  absl::Status CheckOutputFree(const std::string& output,
                               const std::string& input);
  std::filesystem::path FilesPath(const std::string& name) const;
  // A native job's input that is an http(s) URL: parsed, and allowed by a
  // prefix (INVALID_ARGUMENT / PERMISSION_DENIED naming the input).
  static bool IsHttpUrl(absl::string_view input);
  absl::StatusOr<WebhookUrl> CheckInputUrl(const std::string& input) const;

  JobRunner* const runner_;
  JobStore* const store_;
  ModelManager* const models_;
  FileStore* const files_;
  const JobsHandlerOptions options_;
  boost::asio::thread_pool pool_;
  std::atomic<int> pending_{0};
};

}  // namespace ferry

#endif  // FERRY_API_HTTP_JOBS_HANDLER_H_
