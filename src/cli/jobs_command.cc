// SPDX-License-Identifier: Apache-2.0
#include "cli/jobs_command.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "api/json_writer.h"
#include "cli/progress_text.h"
#include "core/status_macros.h"
#include "jobs/files.h"
#include "jobs/webhook/http_post.h"
#include "simdjson.h"

namespace ferry {
namespace {

using simdjson::dom::element;

// A non-2xx answer of the server becomes an error carrying its message.
absl::StatusOr<std::string> Answer(absl::string_view method,
                                   absl::string_view path, HttpReply reply) {
  if (reply.status / 100 != 2) {
    std::string message = reply.body;
    simdjson::dom::parser parser;
    element doc;
    std::string_view text;
    if (parser.parse(reply.body).get(doc) == simdjson::SUCCESS &&
        doc["error"].get_string().get(text) == simdjson::SUCCESS) {
      message = std::string(text);
    } else if (parser.parse(reply.body).get(doc) == simdjson::SUCCESS &&
               doc["error"]["message"].get_string().get(text) ==
                   simdjson::SUCCESS) {
      message = std::string(text);
    }
    return absl::UnknownError(absl::StrCat(method, " ", path, ": HTTP ",
                                           reply.status, ": ", message));
  }
  return std::move(reply.body);
}

HttpPostOptions CallOptions() {
  HttpPostOptions http;
  http.timeout = absl::Minutes(10);  // a submit reads the whole input once
  return http;
}

std::string UrlOf(const JobsCommandOptions& o, absl::string_view path) {
  return absl::StrCat(absl::StripSuffix(o.server, "/"), path);
}

// One call to the server.
absl::StatusOr<std::string> Call(const JobsCommandOptions& o,
                                 absl::string_view method,
                                 absl::string_view path,
                                 absl::string_view body = "",
                                 absl::string_view content_type = "") {
  ASSIGN_OR_RETURN(
      HttpReply reply,
      HttpCall(method, UrlOf(o, path), body,
               content_type.empty() && !body.empty() ? "application/json"
                                                     : content_type,
               {}, CallOptions()));
  return Answer(method, path, std::move(reply));
}

std::string Str(element e, const char* key) {
  std::string_view v;
  if (e[key].get_string().get(v) == simdjson::SUCCESS) return std::string(v);
  return "";
}

int64_t Int(element e, const char* key) {
  int64_t v = 0;
  if (e[key].get_int64().get(v) == simdjson::SUCCESS) return v;
  return 0;
}

// "batch_x  in_progress  fraud_xgb  1200/5000 (24.0%)  failed 3"
std::string Summary(element job) {
  element counts = job["request_counts"];
  const int64_t total = Int(counts, "total");
  const int64_t done = job["progress"].is_object()
                           ? Int(job["progress"], "records_done")
                           : Int(counts, "completed") + Int(counts, "failed");
  std::string line = absl::StrFormat(
      "%s  %-11s  %s  %d/%d (%.1f%%)  failed %d", Str(job, "id"),
      Str(job, "status"), Str(job, "model"), done, total,
      total > 0 ? 100.0 * static_cast<double>(done) / total : 0.0,
      Int(counts, "failed"));
  double rate = 0, eta = -1;
  if (job["progress"]["records_per_second"].get_double().get(rate) ==
      simdjson::SUCCESS) {
    if (job["progress"]["eta_seconds"].get_double().get(eta) !=
        simdjson::SUCCESS) {
      eta = -1;
    }
    absl::StrAppend(&line, "  ", RateText(rate), " rec/s  ETA ", EtaText(eta));
  }
  // Why a job failed (validation, download, ...): its first error.
  if (Str(job, "status") == "failed") {
    simdjson::dom::array errors;
    if (job["errors"]["data"].get_array().get(errors) == simdjson::SUCCESS) {
      for (element e : errors) {
        const std::string message = Str(e, "message");
        if (!message.empty()) {
          absl::StrAppend(&line, "  error: ", message);
          break;
        }
      }
    }
  }
  return line;
}

bool Terminal(const std::string& status) {
  return status == "completed" || status == "failed" || status == "expired" ||
         status == "cancelled";
}

// Streams the file from disk as a multipart upload: memory does not grow
// with it.
absl::StatusOr<std::string> Upload(const JobsCommandOptions& o) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(o.upload, ec)) {
    return absl::NotFoundError(
        absl::StrCat("--file: cannot read '", o.upload, "': not a file"));
  }
  std::mt19937_64 rng{std::random_device{}()};
  const std::string boundary = absl::StrFormat("ferry-%016x", rng());
  std::string filename = o.upload;
  if (size_t slash = filename.rfind('/'); slash != std::string::npos) {
    filename = filename.substr(slash + 1);
  }
  HttpBodyFile body;
  body.prefix = absl::StrCat(
      "--", boundary,
      "\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n",
      "--", boundary, "\r\nContent-Disposition: form-data; name=\"file\"; ",
      "filename=\"", filename,
      "\"\r\nContent-Type: application/octet-stream\r\n\r\n");
  body.path = o.upload;
  body.suffix = absl::StrCat("\r\n--", boundary, "--\r\n");
  ASSIGN_OR_RETURN(
      HttpReply answer,
      HttpUpload("POST", UrlOf(o, "/v1/files"), body,
                 absl::StrCat("multipart/form-data; boundary=", boundary),
                 CallOptions()));
  ASSIGN_OR_RETURN(std::string reply,
                   Answer("POST", "/v1/files", std::move(answer)));
  simdjson::dom::parser parser;
  element doc;
  if (parser.parse(reply).get(doc) != simdjson::SUCCESS) {
    return absl::InternalError("the server's file object is not JSON");
  }
  return Str(doc, "id");
}

absl::StatusOr<std::string> SubmitBody(const JobsCommandOptions& o) {
  std::string body;
  JsonWriter w(&body);
  w.BeginObject();
  w.Key("model").String(o.model);
  if (o.version > 0) w.Key("version").Int(o.version);
  if (!o.upload.empty()) {
    ASSIGN_OR_RETURN(std::string file_id, Upload(o));
    w.Key("input_file_id").String(file_id);
  } else {
    w.Key("input").String(o.input);
  }
  if (!o.output.empty()) w.Key("output").String(o.output);
  if (!o.format.empty()) w.Key("format").String(o.format);
  if (!o.id_column.empty()) w.Key("id_column").String(o.id_column);
  if (!o.columns.empty()) {
    w.Key("columns").BeginArray();
    for (const std::string& c : o.columns) w.String(c);
    w.EndArray();
  }
  if (o.keep_columns) w.Key("keep_columns").Bool(true);
  if (o.chunk_size > 0) w.Key("chunk_size").Int(o.chunk_size);
  if (o.max_attempts > 0) w.Key("max_attempts").Int(o.max_attempts);
  if (!o.completion_window.empty()) {
    w.Key("completion_window").String(o.completion_window);
  }
  if (!o.run_window.empty()) w.Key("run_window").String(o.run_window);
  if (!o.time_zone.empty()) w.Key("time_zone").String(o.time_zone);
  if (!o.webhook_url.empty()) w.Key("webhook_url").String(o.webhook_url);
  if (!o.metadata.empty()) {
    w.Key("metadata").BeginObject();
    for (const std::string& kv : o.metadata) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat("--metadata '", kv, "' must be key=value"));
      }
      w.Key(kv.substr(0, eq)).String(kv.substr(eq + 1));
    }
    w.EndObject();
  }
  w.EndObject();
  return body;
}

// Polls until the job ends; progress lines on `err`. Returns the final job.
absl::StatusOr<std::string> Wait(const JobsCommandOptions& o,
                                 const std::string& id, std::ostream& err) {
  const absl::Time start = absl::Now();
  absl::Time last = absl::InfinitePast();
  while (true) {
    ASSIGN_OR_RETURN(std::string body, Call(o, "GET", "/v1/jobs/" + id));
    simdjson::dom::parser parser;
    element job;
    if (parser.parse(body).get(job) != simdjson::SUCCESS) {
      return absl::InternalError("the server's job object is not JSON");
    }
    if (Terminal(Str(job, "status"))) return body;
    if (absl::Now() - last >= absl::Seconds(5)) {
      last = absl::Now();
      err << Summary(job) << "\n" << std::flush;
    }
    if (o.timeout_s > 0 && absl::Now() - start > absl::Seconds(o.timeout_s)) {
      return absl::DeadlineExceededError(
          absl::StrCat("job ", id, " did not end within ", o.timeout_s, " s"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

// Streams a server file to `path` (whole or not at all: it arrives under a
// temporary name, renamed once complete), or to `out` for "" or "-". Memory
// does not grow with the file.
absl::Status Fetch(const JobsCommandOptions& o, const std::string& file_id,
                   const std::string& path, std::ostream& out) {
  const bool to_out = path.empty() || path == "-";
  const std::string partial =
      to_out ? (std::filesystem::temp_directory_path() /
                absl::StrCat("ferry-download-", getpid(), "-", file_id))
                   .string()
             : absl::StrCat(path, ".part-", getpid());
  const absl::StatusOr<uint64_t> got =
      HttpDownload(UrlOf(o, absl::StrCat("/v1/files/", file_id, "/content")),
                   partial, CallOptions());
  std::error_code ec;
  if (!got.ok()) {
    std::filesystem::remove(partial, ec);
    return got.status();
  }
  if (!to_out) return RenameDurably(partial, path);
  {
    std::ifstream in(partial, std::ios::binary);
    std::vector<char> piece(1 << 20);
    while (in && out) {
      in.read(piece.data(), static_cast<std::streamsize>(piece.size()));
      out.write(piece.data(), in.gcount());
    }
  }
  std::filesystem::remove(partial, ec);
  if (!out) return absl::UnavailableError("cannot write the file to stdout");
  return absl::OkStatus();
}

absl::StatusOr<int> Run(const JobsCommandOptions& o, std::ostream& out,
                        std::ostream& err) {
  const std::string& a = o.action;
  std::string body;
  if (a == "submit" || a == "replay-dead-letters") {
    if (a == "submit") {
      if (o.input.empty() == o.upload.empty()) {
        return absl::InvalidArgumentError(
            "give exactly one of --input (a path on the server, or a URL it "
            "downloads) and --file (a local file to upload)");
      }
      ASSIGN_OR_RETURN(std::string request, SubmitBody(o));
      ASSIGN_OR_RETURN(body, Call(o, "POST", "/v1/jobs", request));
    } else {
      std::string request;
      JsonWriter w(&request);
      w.BeginObject().Key("output").String(o.output).EndObject();
      ASSIGN_OR_RETURN(
          body, Call(o, "POST", "/v1/jobs/" + o.job + "/replay-dead-letters",
                     request));
    }
    simdjson::dom::parser parser;
    element job;
    if (parser.parse(body).get(job) != simdjson::SUCCESS) {
      return absl::InternalError("the server's job object is not JSON");
    }
    const std::string id = Str(job, "id");
    if (!o.wait) {
      out << (o.json ? body : id) << "\n";
      return Str(job, "status") == "failed" ? 1 : 0;
    }
    ASSIGN_OR_RETURN(body, Wait(o, id, err));
  } else if (a == "status") {
    ASSIGN_OR_RETURN(body, Call(o, "GET", "/v1/jobs/" + o.job));
  } else if (a == "cancel") {
    ASSIGN_OR_RETURN(body, Call(o, "POST", "/v1/jobs/" + o.job + "/cancel"));
  } else if (a == "wait") {
    ASSIGN_OR_RETURN(body, Wait(o, o.job, err));
  } else if (a == "list") {
    ASSIGN_OR_RETURN(body,
                     Call(o, "GET", absl::StrCat("/v1/jobs?limit=", o.limit)));
    if (o.json) {
      out << body << "\n";
      return 0;
    }
    simdjson::dom::parser parser;
    element list;
    simdjson::dom::array data;
    if (parser.parse(body).get(list) != simdjson::SUCCESS ||
        list["data"].get_array().get(data) != simdjson::SUCCESS) {
      return absl::InternalError("the server's job list is not JSON");
    }
    for (element job : data) out << Summary(job) << "\n";
    return 0;
  } else if (a == "download") {
    ASSIGN_OR_RETURN(body, Call(o, "GET", "/v1/jobs/" + o.job));
    simdjson::dom::parser parser;
    element job;
    if (parser.parse(body).get(job) != simdjson::SUCCESS) {
      return absl::InternalError("the server's job object is not JSON");
    }
    const std::string output_id = Str(job, "output_file_id");
    if (output_id.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("job ", o.job, " is ", Str(job, "status"),
                       "; its output is not ready"));
    }
    RETURN_IF_ERROR(Fetch(o, output_id, o.output_file, out));
    const std::string errors_id = Str(job, "error_file_id");
    if (!o.errors_file.empty() && !errors_id.empty()) {
      RETURN_IF_ERROR(Fetch(o, errors_id, o.errors_file, out));
    }
    return 0;
  }
  simdjson::dom::parser parser;
  element job;
  if (parser.parse(body).get(job) != simdjson::SUCCESS) {
    return absl::InternalError("the server's job object is not JSON");
  }
  out << (o.json ? body : Summary(job)) << "\n";
  if (a == "wait" || o.wait) return Str(job, "status") == "completed" ? 0 : 1;
  return 0;
}

}  // namespace

CLI::App* AddJobsCommand(CLI::App& app, JobsCommandOptions* o) {
  CLI::App* cmd = app.add_subcommand(
      "jobs", "Submit and follow offline jobs on a running `ferry serve`");
  cmd->require_subcommand(1);
  cmd->add_option("--server", o->server, "The server's HTTP address")
      ->capture_default_str();
  auto json = [o](CLI::App* sub) {
    sub->add_flag("--json", o->json, "Print the server's JSON object");
  };
  auto job_arg = [o](CLI::App* sub) {
    sub->add_option("job", o->job, "Job id")->required();
  };

  CLI::App* submit = cmd->add_subcommand("submit", "Create a job");
  submit->add_option("--model", o->model, "Model name")->required();
  submit->add_option("--version", o->version, "Model version");
  submit->add_option("--input", o->input,
                     "Input path on the server (under a --data-root), or an "
                     "http(s) URL the server downloads (under an "
                     "--input-url-prefix)");
  submit->add_option("--file", o->upload, "A local input file to upload");
  submit->add_option("--output", o->output,
                     "Output path on the server (under a --data-root; default: "
                     "a file of the server's, fetched with `download`)");
  submit->add_option("--format", o->format, "csv or jsonl");
  submit->add_option("--id-column", o->id_column, "CSV id column");
  submit->add_option("--columns", o->columns, "CSV feature columns")
      ->delimiter(',');
  submit->add_flag("--keep-columns", o->keep_columns, "Copy input columns");
  submit->add_option("--chunk-size", o->chunk_size, "Records per chunk");
  submit->add_option("--max-attempts", o->max_attempts,
                     "Attempts per record for transient failures");
  submit->add_option("--completion-window", o->completion_window, "e.g. 24h");
  submit->add_option("--run-window", o->run_window, "e.g. 02:00-06:00");
  submit->add_option("--time-zone", o->time_zone, "For the run window");
  submit->add_option("--webhook-url", o->webhook_url,
                     "POSTed a signed event when the job ends");
  submit->add_option("--metadata", o->metadata, "key=value (repeatable)");
  submit->add_flag("--wait", o->wait, "Wait until the job ends");
  json(submit);

  CLI::App* status = cmd->add_subcommand("status", "Show a job");
  job_arg(status);
  json(status);
  CLI::App* list = cmd->add_subcommand("list", "List jobs, newest first");
  list->add_option("--limit", o->limit, "At most this many");
  json(list);
  CLI::App* cancel = cmd->add_subcommand("cancel", "Cancel a job");
  job_arg(cancel);
  json(cancel);
  CLI::App* wait = cmd->add_subcommand(
      "wait", "Wait until a job ends (exit 0 only if it completed)");
  job_arg(wait);
  wait->add_option("--timeout", o->timeout_s, "Give up after this many s");
  json(wait);
  CLI::App* download = cmd->add_subcommand(
      "download", "Fetch a finished job's output (and error) file");
  job_arg(download);
  download->add_option("--output-file", o->output_file,
                       "Where to write the output (default: stdout)");
  download->add_option("--errors-file", o->errors_file,
                       "Where to write the error file");
  CLI::App* replay = cmd->add_subcommand(
      "replay-dead-letters", "A new job over a finished job's dead letters");
  job_arg(replay);
  replay->add_option("--output", o->output, "Output path on the server")
      ->required();
  replay->add_flag("--wait", o->wait, "Wait until the new job ends");
  json(replay);

  for (CLI::App* sub : {submit, status, list, cancel, wait, download, replay}) {
    sub->callback([o, sub] { o->action = sub->get_name(); });
  }
  return cmd;
}

int RunJobsCommand(const JobsCommandOptions& options, std::ostream& out,
                   std::ostream& err) {
  absl::StatusOr<int> code = Run(options, out, err);
  if (!code.ok()) {
    err << "ferry jobs " << options.action << ": " << code.status().message()
        << "\n";
    return 1;
  }
  return *code;
}

}  // namespace ferry
