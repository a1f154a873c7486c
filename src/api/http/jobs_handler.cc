// SPDX-License-Identifier: Apache-2.0
#include "api/http/jobs_handler.h"

#include <algorithm>
#include <exception>
#include <map>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "api/http/job_objects.h"
#include "api/http/job_requests.h"
#include "api/http/multipart.h"
#include "boost/asio/post.hpp"
#include "core/status_macros.h"
#include "jobs/files.h"

namespace ferry {
namespace http = boost::beast::http;
namespace fs = std::filesystem;

namespace {

constexpr int kDefaultListLimit = 20;
constexpr int kMaxListLimit = 100;
constexpr int kMaxFileListLimit = 10000;
constexpr size_t kMaxFilename = 255;

// The HTTP status of an error of the job API. The job API adds 403 for paths
// outside the data roots and 409 for a state conflict to KServe's mapping.
http::status StatusFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kPermissionDenied:
      return http::status::forbidden;
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAlreadyExists:
      return http::status::conflict;
    default:
      return HttpStatusFromCode(code);
  }
}

HttpResponse Error(const absl::Status& s) {
  return ErrorResponse(StatusFor(s.code()), s.message());
}

HttpResponse Ok(std::string body, absl::string_view content_type) {
  HttpResponse res{http::status::ok, 11};
  res.set(http::field::content_type,
          boost::beast::string_view(content_type.data(), content_type.size()));
  res.body() = std::move(body);
  return res;
}

HttpResponse JsonOr(absl::StatusOr<std::string> body) {
  if (!body.ok()) return Error(body.status());
  return Ok(*std::move(body), "application/json");
}

absl::StatusOr<std::string> Unescape(absl::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (plus_is_space && s[i] == '+') {
      out.push_back(' ');
    } else if (s[i] != '%') {
      out.push_back(s[i]);
    } else if (i + 2 < s.size() && absl::ascii_isxdigit(s[i + 1]) &&
               absl::ascii_isxdigit(s[i + 2])) {
      int v = 0;
      absl::SimpleHexAtoi(s.substr(i + 1, 2), &v);
      out.push_back(static_cast<char>(v));
      i += 2;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("'", s, "' has a malformed % escape"));
    }
  }
  return out;
}

absl::StatusOr<int> ListLimit(const std::map<std::string, std::string>& query,
                              int default_limit, int max_limit) {
  auto it = query.find("limit");
  if (it == query.end()) return default_limit;
  int limit = 0;
  if (!absl::SimpleAtoi(it->second, &limit) || limit < 1 || limit > max_limit) {
    return absl::InvalidArgumentError(absl::StrCat(
        "limit: '", it->second, "' is not an integer in [1, ", max_limit, "]"));
  }
  return limit;
}

std::string SafeFilename(absl::string_view name) {
  const size_t slash = name.find_last_of("/\\");
  if (slash != absl::string_view::npos) name.remove_prefix(slash + 1);
  std::string out;
  for (char c : name.substr(0, kMaxFilename)) {
    out.push_back(static_cast<unsigned char>(c) < 0x20 ? '_' : c);
  }
  return out.empty() ? std::string("upload.jsonl") : out;
}

const std::vector<JobState>& UnfinishedStates() {
  static const std::vector<JobState> states = {
      JobState::kValidating, JobState::kInProgress, JobState::kFinalizing,
      JobState::kCancelling};
  return states;
}

void ListEnvelope(JsonWriter& w, const std::string& first,
                  const std::string& last, bool has_more) {
  w.Key("first_id");
  first.empty() ? w.Null() : w.String(first);
  w.Key("last_id");
  last.empty() ? w.Null() : w.String(last);
  w.Key("has_more").Bool(has_more);
}

}  // namespace

struct JobsHandler::Target {
  std::string path;               // for messages
  std::vector<std::string> segs;  // after "v1", percent-decoded
  std::map<std::string, std::string> query;
};

JobsHandler::JobsHandler(JobRunner* runner, JobStore* store,
                         ModelManager* models, FileStore* files,
                         JobsHandlerOptions options)
    : runner_(runner),
      store_(store),
      models_(models),
      files_(files),
      options_(std::move(options)),
      pool_(static_cast<size_t>(std::max(1, options_.threads))) {}

JobsHandler::~JobsHandler() { pool_.join(); }

void JobsHandler::Handle(HttpRequest request,
                         boost::asio::any_io_executor executor,
                         Respond respond) {
  if (pending_.fetch_add(1) >= options_.max_pending) {
    pending_.fetch_sub(1);
    HttpResponse busy = Error(absl::UnavailableError(
        absl::StrCat("the job API is busy: ", options_.max_pending,
                     " requests are queued or running; retry later")));
    busy.set(http::field::retry_after, "1");
    boost::asio::post(executor, [respond = std::move(respond),
                                 busy = std::move(busy)]() mutable {
      respond(std::move(busy));
    });
    return;
  }
  boost::asio::post(pool_, [this, request = std::move(request),
                            executor = std::move(executor),
                            respond = std::move(respond)]() mutable {
    HttpResponse res = HandleNow(request);
    pending_.fetch_sub(1);
    boost::asio::post(executor, [respond = std::move(respond),
                                 res = std::move(res)]() mutable {
      respond(std::move(res));
    });
  });
}

HttpResponse JobsHandler::HandleNow(HttpRequest& request) {
  try {
    Target t;
    absl::string_view target(request.target().data(), request.target().size());
    const size_t q = target.find('?');
    t.path = std::string(target.substr(0, q));
    if (q != absl::string_view::npos) {
      for (absl::string_view pair :
           absl::StrSplit(target.substr(q + 1), '&', absl::SkipEmpty())) {
        const size_t eq = pair.find('=');
        absl::StatusOr<std::string> k =
            Unescape(pair.substr(0, eq), /*plus_is_space=*/true);
        absl::StatusOr<std::string> v =
            eq == absl::string_view::npos
                ? std::string()
                : Unescape(pair.substr(eq + 1), /*plus_is_space=*/true);
        if (!k.ok()) return Error(k.status());
        if (!v.ok()) return Error(v.status());
        t.query[*k] = *v;
      }
    }
    std::vector<absl::string_view> raw =
        absl::StrSplit(t.path, '/', absl::SkipEmpty());
    for (size_t i = 1; i < raw.size(); ++i) {  // raw[0] is "v1"
      absl::StatusOr<std::string> s = Unescape(raw[i], false);
      if (!s.ok()) return Error(s.status());
      t.segs.push_back(*std::move(s));
    }
    return Route(request, t);
  } catch (const std::exception& e) {
    return ErrorResponse(http::status::internal_server_error,
                         absl::StrCat("internal error: ", e.what()));
  }
}

HttpResponse JobsHandler::Route(HttpRequest& request, const Target& t) {
  const http::verb method = request.method();
  auto not_allowed = [&](absl::string_view allowed) {
    HttpResponse res = ErrorResponse(
        http::status::method_not_allowed,
        absl::StrCat("method ", std::string(request.method_string()),
                     " is not allowed on ", t.path, "; use ", allowed));
    res.set(http::field::allow,
            boost::beast::string_view(allowed.data(), allowed.size()));
    return res;
  };
  const std::vector<std::string>& s = t.segs;
  const size_t n = s.size();
  if (n >= 1 && s[0] == "files") {
    if (n == 1) {
      if (method == http::verb::get) return JsonOr(ListFiles(t));
      if (method == http::verb::post) return JsonOr(UploadFile(request));
      return not_allowed("GET, POST");
    }
    if (n == 2) {
      if (method == http::verb::get) return JsonOr(GetFile(s[1]));
      if (method == http::verb::delete_) return JsonOr(DeleteFile(s[1]));
      return not_allowed("GET, DELETE");
    }
    if (n == 3 && s[2] == "content") {
      if (method != http::verb::get) return not_allowed("GET");
      absl::StatusOr<HttpResponse> res = FileContent(s[1]);
      return res.ok() ? *std::move(res) : Error(res.status());
    }
  } else if (n >= 1 && (s[0] == "batches" || s[0] == "jobs")) {
    const bool batch = s[0] == "batches";
    if (n == 1) {
      if (method == http::verb::get) return JsonOr(ListJobs(t, batch));
      if (method != http::verb::post) return not_allowed("GET, POST");
      return JsonOr(batch ? CreateBatch(request.body())
                          : CreateJob(request.body()));
    }
    if (n == 2) {
      if (method != http::verb::get) return not_allowed("GET");
      return JsonOr(GetJob(s[1], batch));
    }
    if (n == 3 && s[2] == "cancel") {
      if (method != http::verb::post) return not_allowed("POST");
      return JsonOr(CancelJob(s[1], batch));
    }
    if (n == 3 && !batch && s[2] == "replay-dead-letters") {
      if (method != http::verb::post) return not_allowed("POST");
      return JsonOr(ReplayDeadLetters(s[1], request.body()));
    }
  }
  return ErrorResponse(http::status::not_found,
                       absl::StrCat("unknown path ", t.path));
}

fs::path JobsHandler::FilesPath(const std::string& name) const {
  return files_->dir() / name;
}

// ---------------------------------------------------------------- files

absl::StatusOr<std::string> JobsHandler::UploadFile(
    const HttpRequest& request) {
  const auto ct = request[http::field::content_type];
  if (ct.empty()) {
    return absl::InvalidArgumentError(
        "POST /v1/files takes a multipart/form-data body with the fields "
        "'purpose' (batch) and 'file'");
  }
  ASSIGN_OR_RETURN(std::string boundary,
                   MultipartBoundary(absl::string_view(ct.data(), ct.size())));
  // A body the connection streamed to disk is read through a read-only
  // mapping: page cache, not this process's heap, holds it.
  absl::string_view body = request.body();
  std::optional<MappedFile> mapped;
  if (request.body_file != nullptr) {
    ASSIGN_OR_RETURN(mapped, MappedFile::Open(request.body_file->path()));
    body = mapped->data();
  }
  ASSIGN_OR_RETURN(std::vector<MultipartPart> parts,
                   ParseMultipartFormData(body, boundary));
  const MultipartPart* purpose = nullptr;
  const MultipartPart* file = nullptr;
  for (const MultipartPart& p : parts) {
    if (p.name == "purpose") {
      purpose = &p;
    } else if (p.name == "file") {
      file = &p;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown form field '", p.name,
                       "' (an upload has the fields 'purpose' and 'file')"));
    }
  }
  if (purpose == nullptr) {
    return absl::InvalidArgumentError(
        "form field 'purpose' is missing; use purpose=batch");
  }
  if (purpose->data != kFilePurposeBatch) {
    return absl::InvalidArgumentError(
        absl::StrCat("form field 'purpose': '", purpose->data,
                     "' is not supported; use 'batch'"));
  }
  if (file == nullptr) {
    return absl::InvalidArgumentError(
        "form field 'file' is missing (the file's contents)");
  }
  if (file->data.empty()) {
    return absl::InvalidArgumentError("form field 'file' is empty");
  }
  ASSIGN_OR_RETURN(
      StoredFile f,
      files_->Create(file->data, SafeFilename(file->filename.value_or("")),
                     kFilePurposeBatch));
  std::string out;
  JsonWriter w(&out);
  WriteFileObject(f, w);
  return out;
}

absl::StatusOr<std::string> JobsHandler::ListFiles(const Target& t) {
  ASSIGN_OR_RETURN(int limit,
                   ListLimit(t.query, kMaxFileListLimit, kMaxFileListLimit));
  std::string purpose;
  if (auto it = t.query.find("purpose"); it != t.query.end()) {
    purpose = it->second;
  }
  bool ascending = false;
  if (auto it = t.query.find("order"); it != t.query.end()) {
    if (it->second != "asc" && it->second != "desc") {
      return absl::InvalidArgumentError(
          absl::StrCat("order: '", it->second, "' is not asc or desc"));
    }
    ascending = it->second == "asc";
  }
  ASSIGN_OR_RETURN(std::vector<StoredFile> all, files_->List(purpose));
  if (ascending) std::reverse(all.begin(), all.end());
  size_t begin = 0;
  if (auto it = t.query.find("after"); it != t.query.end()) {
    auto pos = std::find_if(all.begin(), all.end(), [&](const StoredFile& f) {
      return f.id == it->second;
    });
    if (pos == all.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("after: no file '", it->second, "' in this list"));
    }
    begin = static_cast<size_t>(pos - all.begin()) + 1;
  }
  const size_t end = std::min(all.size(), begin + static_cast<size_t>(limit));
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("object").String("list");
  w.Key("data").BeginArray();
  for (size_t i = begin; i < end; ++i) WriteFileObject(all[i], w);
  w.EndArray();
  ListEnvelope(w, begin < end ? all[begin].id : "",
               begin < end ? all[end - 1].id : "", end < all.size());
  w.EndObject();
  return out;
}

absl::StatusOr<std::string> JobsHandler::GetFile(const std::string& id) {
  ASSIGN_OR_RETURN(StoredFile f, files_->Get(id));
  std::string out;
  JsonWriter w(&out);
  WriteFileObject(f, w);
  return out;
}

absl::StatusOr<HttpResponse> JobsHandler::FileContent(const std::string& id) {
  ASSIGN_OR_RETURN(StoredFile f, files_->Get(id));
  std::error_code ec;
  if (!fs::is_regular_file(f.path, ec)) {
    return absl::NotFoundError(
        absl::StrCat("file '", id, "': its content is gone"));
  }
  // Streamed from disk by the connection: outputs of big jobs are not read
  // into memory.
  HttpResponse res = Ok("", "application/octet-stream");
  res.body_file = f.path;
  std::string name;
  for (char c : f.filename) name.push_back(c == '"' || c == '\\' ? '_' : c);
  res.set(http::field::content_disposition,
          absl::StrCat("attachment; filename=\"", name, "\""));
  return res;
}

absl::StatusOr<std::string> JobsHandler::DeleteFile(const std::string& id) {
  ASSIGN_OR_RETURN(StoredFile f, files_->Get(id));
  ASSIGN_OR_RETURN(std::vector<JobRecord> running,
                   store_->ListJobsInStates(UnfinishedStates()));
  for (const JobRecord& j : running) {
    if (fs::path(j.input_path) == f.path) {
      return absl::FailedPreconditionError(absl::StrCat(
          "file '", id, "' is the input of ", j.id, ", which is ",
          JobStateName(j.state), "; cancel it or wait until it ends"));
    }
  }
  RETURN_IF_ERROR(files_->Delete(id));
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("id").String(id);
  w.Key("object").String("file");
  w.Key("deleted").Bool(true);
  w.EndObject();
  return out;
}

// ------------------------------------------------------------ jobs

absl::StatusOr<JobRecord> JobsHandler::FindJob(const std::string& id,
                                               bool batch) {
  const absl::string_view kind = batch ? "batch" : "job";
  absl::StatusOr<JobRecord> job = store_->GetJob(id);
  if (!job.ok()) {
    if (job.status().code() == absl::StatusCode::kNotFound) {
      return absl::NotFoundError(absl::StrCat("no ", kind, " '", id, "'"));
    }
    return job.status();
  }
  if (batch) {
    absl::StatusOr<JobOptions> o = JobOptionsFromJson(job->options_json);
    if (!o.ok() || o->endpoint.empty()) {
      return absl::NotFoundError(absl::StrCat(
          "no batch '", id, "' (it is a native job: GET /v1/jobs/", id, ")"));
    }
  }
  return job;
}

void JobsHandler::WriteJob(const JobRecord& job, bool batch, JsonWriter& w) {
  JobView v;
  v.job = job;
  if (absl::StatusOr<JobOptions> o = JobOptionsFromJson(job.options_json);
      o.ok()) {
    v.options = *std::move(o);
  }
  v.records_done = job.counts.completed + job.counts.failed;
  if (!IsTerminal(job.state)) {
    if (absl::StatusOr<JobProgress> p = runner_->Progress(job.id); p.ok()) {
      v.records_done = p->records_done;
      v.records_per_second = p->records_per_second;
      v.eta_seconds = p->eta_seconds;
      v.job = p->job;
    }
  }
  v.input_file_id = files_->UploadedIdOf(job.input_path).value_or("");
  v.results = RegisterJobResults(*files_, v.job);
  v.price_per_instance_hour = options_.price_per_instance_hour;
  if (batch) {
    WriteBatchObject(v, w);
  } else {
    WriteJobObject(v, w);
  }
}

absl::StatusOr<std::string> JobsHandler::GetJob(const std::string& id,
                                                bool batch) {
  ASSIGN_OR_RETURN(JobRecord job, FindJob(id, batch));
  std::string out;
  JsonWriter w(&out);
  WriteJob(job, batch, w);
  return out;
}

absl::StatusOr<std::string> JobsHandler::ListJobs(const Target& t, bool batch) {
  ASSIGN_OR_RETURN(int limit,
                   ListLimit(t.query, kDefaultListLimit, kMaxListLimit));
  std::string cursor;
  if (auto it = t.query.find("after"); it != t.query.end()) {
    cursor = it->second;
    if (absl::Status s = FindJob(cursor, batch).status(); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("after: ", s.message()));
    }
  }
  // The store pages over every job; the batch view skips native ones, so it
  // may read several pages to fill one.
  constexpr int kPage = 200;
  std::vector<JobRecord> picked;
  while (picked.size() <= static_cast<size_t>(limit)) {
    ASSIGN_OR_RETURN(std::vector<JobRecord> page,
                     store_->ListJobs(kPage, cursor));
    for (JobRecord& j : page) {
      if (batch) {
        absl::StatusOr<JobOptions> o = JobOptionsFromJson(j.options_json);
        if (!o.ok() || o->endpoint.empty()) continue;
      }
      picked.push_back(std::move(j));
      if (picked.size() > static_cast<size_t>(limit)) break;
    }
    if (page.size() < static_cast<size_t>(kPage)) break;
    cursor = page.back().id;
  }
  const bool has_more = picked.size() > static_cast<size_t>(limit);
  if (has_more) picked.resize(static_cast<size_t>(limit));
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("object").String("list");
  w.Key("data").BeginArray();
  for (const JobRecord& j : picked) WriteJob(j, batch, w);
  w.EndArray();
  ListEnvelope(w, picked.empty() ? "" : picked.front().id,
               picked.empty() ? "" : picked.back().id, has_more);
  w.EndObject();
  return out;
}

absl::StatusOr<std::string> JobsHandler::CancelJob(const std::string& id,
                                                   bool batch) {
  ASSIGN_OR_RETURN(JobRecord job, FindJob(id, batch));
  if (IsTerminal(job.state)) {
    return absl::FailedPreconditionError(absl::StrCat(
        batch ? "batch '" : "job '", id, "' is ", JobStateName(job.state),
        "; only a validating or in_progress one can be cancelled"));
  }
  if (job.state != JobState::kCancelling) {
    absl::Status s = runner_->Cancel(id);
    // Lost a race with the job's end: report it as it now is.
    if (!s.ok() && s.code() != absl::StatusCode::kFailedPrecondition) return s;
  }
  return GetJob(id, batch);
}

absl::Status JobsHandler::CheckOutputFree(const std::string& output,
                                          const std::string& input) {
  if (fs::path(output) == fs::path(input)) {
    return absl::InvalidArgumentError(
        absl::StrCat("output '", output, "' is the job's input"));
  }
  ASSIGN_OR_RETURN(std::vector<JobRecord> running,
                   store_->ListJobsInStates(UnfinishedStates()));
  for (const JobRecord& j : running) {
    if (j.output_path == output || j.error_path == output ||
        j.dead_letter_path == output) {
      return absl::FailedPreconditionError(
          absl::StrCat("output '", output, "' is being written by job ", j.id,
                       " (", JobStateName(j.state), ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> JobsHandler::CreateBatch(const std::string& body) {
  ASSIGN_OR_RETURN(BatchRequest request, ParseBatchRequest(body));
  const std::string& input_file_id = request.input_file_id;
  absl::StatusOr<StoredFile> input = files_->Get(input_file_id);
  if (!input.ok()) {
    if (input.status().code() != absl::StatusCode::kNotFound) {
      return input.status();
    }
    return absl::NotFoundError(
        absl::StrCat("input_file_id: no file '", input_file_id, "'"));
  }
  if (input->purpose != kFilePurposeBatch) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input_file_id: file '", input_file_id, "' has purpose '",
        input->purpose, "'; a batch reads a file uploaded with purpose batch"));
  }
  if (absl::StatusOr<ModelVersionInfo> m = models_->Find(
          request.model, request.model_version > 0
                             ? std::optional<int64_t>(request.model_version)
                             : std::nullopt);
      !m.ok()) {
    return absl::Status(m.status().code(),
                        absl::StrCat("endpoint '", request.endpoint,
                                     "': ", m.status().message()));
  }
  JobSpec spec;
  spec.id = NewJobId();
  spec.model = request.model;
  spec.model_version = request.model_version;
  spec.options.completion_window = request.completion_window;
  spec.options.metadata = std::move(request.metadata);
  spec.input_path = input->path.string();
  spec.output_path = FilesPath(spec.id + "-output.jsonl").string();
  spec.error_path = FilesPath(spec.id + "-errors.jsonl").string();
  spec.dead_letter_path = FilesPath(spec.id + "-dead_letters.jsonl").string();
  spec.options.format = RecordFormat::kJsonl;
  spec.options.endpoint = request.endpoint;
  ASSIGN_OR_RETURN(JobRecord job, runner_->Submit(spec));
  std::string out;
  JsonWriter w(&out);
  WriteJob(job, /*batch=*/true, w);
  return out;
}

absl::StatusOr<std::string> JobsHandler::CreateJob(const std::string& body) {
  ASSIGN_OR_RETURN(NativeJobRequest request, ParseNativeJobRequest(body));
  JobSpec spec;
  spec.model = request.model;
  spec.model_version = request.model_version;
  spec.options = std::move(request.options);
  JobOptions& o = spec.options;
  const std::string& input = request.input;
  const std::string& input_file_id = request.input_file_id;
  const std::string& output = request.output;
  std::string format_hint;  // the name whose extension tells the format
  spec.id = NewJobId();
  if (IsHttpUrl(input)) {
    ASSIGN_OR_RETURN(const WebhookUrl url, CheckInputUrl(input));
    o.input_url = input;
    format_hint = url.target.substr(0, url.target.find('?'));
  } else if (!input.empty()) {
    ASSIGN_OR_RETURN(fs::path p, options_.data_roots.Resolve("input", input));
    spec.input_path = p.string();
    format_hint = spec.input_path;
  } else {
    absl::StatusOr<StoredFile> f = files_->Get(input_file_id);
    if (!f.ok()) {
      return absl::Status(
          f.status().code(),
          absl::StrCat("input_file_id: ", f.status().message()));
    }
    spec.input_path = f->path.string();
    format_hint = f->filename;
  }
  absl::StatusOr<RecordFormat> fmt =
      ResolveRecordFormat(request.format, format_hint);
  if (!fmt.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("format: ", fmt.status().message()));
  }
  o.format = *fmt;
  if (!o.webhook_url.empty() && !options_.webhooks_enabled) {
    return absl::InvalidArgumentError(
        "webhook_url: this server sends no webhooks; start ferry serve "
        "with --webhook-secret-file FILE");
  }
  const std::string ext(RecordFormatName(o.format));
  if (!o.input_url.empty()) {
    // Downloaded there by the validation pass; deleted with the job's files.
    spec.input_path = FilesPath(absl::StrCat(spec.id, "-input.", ext)).string();
  }
  if (!output.empty()) {
    ASSIGN_OR_RETURN(fs::path p, options_.data_roots.Resolve("output", output));
    spec.output_path = p.string();
  } else {
    spec.output_path =
        FilesPath(absl::StrCat(spec.id, "-output.", ext)).string();
    spec.error_path = FilesPath(spec.id + "-errors.jsonl").string();
    spec.dead_letter_path = FilesPath(spec.id + "-dead_letters.jsonl").string();
  }
  RETURN_IF_ERROR(CheckOutputFree(spec.output_path, spec.input_path));
  ASSIGN_OR_RETURN(JobRecord job, runner_->Submit(spec));
  std::string out;
  JsonWriter w(&out);
  WriteJob(job, /*batch=*/false, w);
  return out;
}

bool JobsHandler::IsHttpUrl(absl::string_view input) {
  return absl::StartsWithIgnoreCase(input, "http://") ||
         absl::StartsWithIgnoreCase(input, "https://");
}

absl::StatusOr<WebhookUrl> JobsHandler::CheckInputUrl(
    const std::string& input) const {
  absl::StatusOr<WebhookUrl> url = ParseWebhookUrl(input);
  if (!url.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("input: ", url.status().message()));
  }
  if (options_.input_url_prefixes.empty()) {
    return absl::PermissionDeniedError(absl::StrCat(
        "input '", url->display,
        "': this server downloads no inputs; start ferry serve with "
        "--input-url-prefix PREFIX to allow URLs that start with PREFIX"));
  }
  // No "." or ".." path segments (percent-encoded or not): the server may
  // resolve them and leave the prefix.
  std::string path = url->target.substr(0, url->target.find('?'));
  absl::StrReplaceAll({{"%2e", "."}, {"%2E", "."}}, &path);
  for (absl::string_view segment : absl::StrSplit(path, '/')) {
    if (segment == "." || segment == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", url->display,
                       "': the URL path has a '.' or '..' segment"));
    }
  }
  for (const std::string& prefix : options_.input_url_prefixes) {
    if (!absl::StartsWith(input, prefix)) continue;
    // The prefix must end at a boundary: http://host does not allow
    // http://host.example.com/.
    const absl::string_view rest =
        absl::string_view(input).substr(prefix.size());
    if (absl::EndsWith(prefix, "/") || rest.empty() || rest[0] == '/' ||
        rest[0] == '?') {
      return url;
    }
  }
  return absl::PermissionDeniedError(
      absl::StrCat("input '", url->display,
                   "' starts with none of the allowed URL prefixes (",
                   absl::StrJoin(options_.input_url_prefixes, ", "), ")"));
}

absl::StatusOr<std::string> JobsHandler::ReplayDeadLetters(
    const std::string& id, const std::string& body) {
  ASSIGN_OR_RETURN(JobRecord source, FindJob(id, /*batch=*/false));
  ASSIGN_OR_RETURN(std::string output, ParseReplayRequest(body));
  std::string path;
  if (!output.empty()) {
    ASSIGN_OR_RETURN(fs::path p, options_.data_roots.Resolve("output", output));
    path = p.string();
  } else {
    // Next to the source's files: <id>-replay-<fresh>-output.<format>.
    path = FilesPath(absl::StrCat(id, "-replay-", NewJobId().substr(6),
                                  "-output.", source.input_format))
               .string();
  }
  RETURN_IF_ERROR(CheckOutputFree(path, source.input_path));
  ASSIGN_OR_RETURN(JobRecord job, runner_->SubmitReplay(id, path));
  std::string out;
  JsonWriter w(&out);
  WriteJob(job, /*batch=*/false, w);
  return out;
}

}  // namespace ferry
