// SPDX-License-Identifier: Apache-2.0
#include "jobs/job_runner.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/logging.h"
#include "core/status_macros.h"
#include "core/thread_priority.h"
#include "jobs/files.h"

namespace ferry {
namespace fs = std::filesystem;
namespace {

// A job's model version: 0 means the newest the model serves.
std::optional<int64_t> PinnedVersion(int64_t version) {
  return version > 0 ? std::optional<int64_t>(version) : std::nullopt;
}

std::string DefaultWorkerId() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return absl::StrCat(host[0] != '\0' ? host : "ferry", "-", ::getpid());
}

bool LiveLease(const ChunkRecord& c, absl::Time now) {
  return c.state == ChunkState::kLeased && c.lease_expiry > now;
}

}  // namespace

std::string JobPartName(int64_t index, int attempt, const char* ext) {
  return absl::StrFormat("%08d.a%d.%s", index, attempt, ext);
}

std::string NewJobId() {
  static thread_local std::mt19937_64 rng{std::random_device{}() ^
                                          static_cast<uint64_t>(::getpid())};
  return absl::StrFormat("batch_%016x%08x", rng(),
                         static_cast<uint32_t>(rng()));
}

JobRunner::JobRunner(JobStore* store, WorkQueue* queue, ModelManager* models,
                     Options options)
    : store_(store), queue_(queue), models_(models), options_([&] {
        if (options.worker_id.empty()) options.worker_id = DefaultWorkerId();
        options.parallel_chunks = std::max(1, options.parallel_chunks);
        return std::move(options);
      }()) {
  if (options_.fetch_input) {
    fetcher_ = std::make_unique<InputFetcher>(
        options_.fetch_input, options_.clock, options_.fetch_threads,
        [this](const std::string& id, const absl::Status& s) {
          Fetched(id, s);
        });
  }
}

JobRunner::~JobRunner() { Stop(); }

std::string JobRunner::WorkerId(int worker) const {
  return absl::StrCat(options_.worker_id, "-w", worker);
}

std::filesystem::path JobRunner::PartPath(const std::string& job_id,
                                          int64_t index, int attempt,
                                          const char* ext) const {
  return options_.work_dir / job_id / JobPartName(index, attempt, ext);
}

absl::StatusOr<JobRecord> JobRunner::Submit(const JobSpec& spec) {
  if (spec.model.empty()) return absl::InvalidArgumentError("model is empty");
  if (spec.input_path.empty()) {
    return absl::InvalidArgumentError("input is empty");
  }
  if (spec.output_path.empty()) {
    return absl::InvalidArgumentError("output is empty");
  }
  RETURN_IF_ERROR(ValidateJobOptions(spec.options));
  RETURN_IF_ERROR(
      models_->Find(spec.model, PinnedVersion(spec.model_version)).status());
  const absl::Time now = options_.clock->Now();
  JobRecord job;
  job.id = spec.id.empty() ? NewJobId() : spec.id;
  job.model = spec.model;
  job.model_version = spec.model_version;
  job.input_format = std::string(RecordFormatName(spec.options.format));
  job.input_path = spec.input_path;
  job.output_path = spec.output_path;
  job.error_path = spec.error_path.empty()
                       ? absl::StrCat(spec.output_path, ".errors.jsonl")
                       : spec.error_path;
  job.dead_letter_path =
      spec.dead_letter_path.empty()
          ? absl::StrCat(spec.output_path, ".dead_letters.jsonl")
          : spec.dead_letter_path;
  job.created_at = now;
  job.expires_at = now + spec.options.completion_window;
  job.options_json = JobOptionsToJson(spec.options);
  job.state = JobState::kValidating;
  RETURN_IF_ERROR(store_->CreateJob(job));
  {
    MutexLock lock(&mu_);
    to_validate_.push_back(job.id);
    wake_.SignalAll();
  }
  return job;
}

std::optional<std::string> JobRunner::NextToValidate() {
  MutexLock lock(&mu_);
  if (to_validate_.empty()) return std::nullopt;
  std::string id = std::move(to_validate_.front());
  to_validate_.pop_front();
  return id;
}

void JobRunner::Fetched(const std::string& id, const absl::Status& s) {
  if (s.ok()) {
    MutexLock lock(&mu_);
    to_validate_.push_back(id);
    wake_.SignalAll();
  } else if (!absl::IsCancelled(s)) {
    FailValidation(id, s);
  }
  // Cancelled: the job was cancelled (the housekeeper ends it) or the runner
  // is stopping (validated, and fetched, again at the next start).
}

void JobRunner::FailValidation(const std::string& id, const absl::Status& why) {
  if (store_
          ->Transition(id, {JobState::kValidating}, JobState::kFailed,
                       options_.clock->Now(), why.message())
          .ok()) {
    ReportTerminal(id);
  }
}

void JobRunner::ValidatePending() {
  while (std::optional<std::string> id = NextToValidate()) {
    if (absl::Status s = Validate(*id); !s.ok()) {
      FERRY_LOG(kWarning, "job ", *id, ": validating: ", s.ToString());
    }
  }
}

absl::Status JobRunner::Validate(const std::string& id) {
  ASSIGN_OR_RETURN(JobRecord job, store_->GetJob(id));
  if (job.state != JobState::kValidating) return absl::OkStatus();
  ASSIGN_OR_RETURN(JobOptions options, JobOptionsFromJson(job.options_json));
  absl::StatusOr<ModelVersionInfo> model =
      models_->Find(job.model, PinnedVersion(job.model_version));
  if (!model.ok() && model.status().code() == absl::StatusCode::kUnavailable) {
    return model.status();  // loading: try again later
  }
  // The validation pass: the whole file is read once, counted and cut into
  // chunks, and the column mapping is checked against the model.
  absl::Status invalid = model.status();
  std::error_code ec;
  if (invalid.ok() && !options.input_url.empty() &&
      !fs::is_regular_file(job.input_path, ec)) {
    if (fetcher_ == nullptr) {
      invalid = absl::FailedPreconditionError(
          "input_url: this runner does not download inputs");
    } else {
      // On a fetch thread; validated once it is here (Fetched).
      fetcher_->Add(id, options.input_url, job.input_path);
      return absl::OkStatus();
    }
  }
  absl::StatusOr<InputScan> scan = absl::UnknownError("not scanned");
  if (invalid.ok()) {
    scan = ScanInput(job.input_path, options.format, options.chunk_records);
    invalid = scan.status();
  }
  if (invalid.ok()) {
    options.header = scan->header;
    invalid =
        RecordCodec::Create(options.format, model->options, *scan, options.csv)
            .status();
  }
  if (!invalid.ok()) {
    FailValidation(id, invalid);
    return absl::OkStatus();
  }
  const absl::Time now = options_.clock->Now();
  // Each step may run again after a crash: the options are the same, and
  // chunks that are already stored (FAILED_PRECONDITION) were these chunks.
  RETURN_IF_ERROR(store_->SetJobOptions(id, JobOptionsToJson(options)));
  std::vector<ChunkRecord> chunks;
  chunks.reserve(scan->chunks.size());
  for (size_t i = 0; i < scan->chunks.size(); ++i) {
    const ChunkSpan& span = scan->chunks[i];
    ChunkRecord c;
    c.job_id = id;
    c.index = static_cast<int64_t>(i);
    c.begin_offset = span.begin_offset;
    c.end_offset = span.end_offset;
    c.first_record = span.first_record;
    c.first_line = span.first_line;
    c.record_count = span.record_count;
    chunks.push_back(std::move(c));
  }
  if (absl::Status added = store_->AddChunks(id, chunks);
      !added.ok() && added.code() != absl::StatusCode::kFailedPrecondition) {
    return added;
  }
  if (absl::Status moved = store_->Transition(id, {JobState::kValidating},
                                              JobState::kInProgress, now);
      !moved.ok() && moved.code() != absl::StatusCode::kFailedPrecondition) {
    return moved;  // FAILED_PRECONDITION: cancelled meanwhile, which is fine
  }
  MutexLock lock(&mu_);
  wake_.SignalAll();
  return absl::OkStatus();
}

absl::StatusOr<JobRecord> JobRunner::SubmitReplay(
    const std::string& id, const std::string& output_path) {
  ASSIGN_OR_RETURN(JobRecord job, store_->GetJob(id));
  if (!IsTerminal(job.state)) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", id, " is ", JobStateName(job.state),
                     "; its dead letters are final only when it has ended"));
  }
  ASSIGN_OR_RETURN(JobOptions options, JobOptionsFromJson(job.options_json));
  ASSIGN_OR_RETURN(ModelVersionInfo model,
                   models_->Find(job.model, PinnedVersion(job.model_version)));
  InputScan scan;
  scan.format = options.format;
  scan.header = options.header;
  ASSIGN_OR_RETURN(
      std::unique_ptr<RecordCodec> codec,
      RecordCodec::Create(options.format, model.options, scan, options.csv));
  std::ifstream in(job.dead_letter_path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("job ", id,
                                            ": cannot read dead-letter file '",
                                            job.dead_letter_path, "'"));
  }
  const std::string replay_path = job.dead_letter_path + ".replay";
  AtomicFile replay;
  RETURN_IF_ERROR(AtomicFile::Open(replay_path, &replay));
  RETURN_IF_ERROR(replay.Append(codec->InputPreamble()));
  int64_t records = 0;
  std::string line;
  int64_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty()) continue;
    absl::StatusOr<std::string> record = DeadLetterRecord(line);
    if (!record.ok()) {
      return absl::DataLossError(
          absl::StrCat("dead-letter file '", job.dead_letter_path, "' line ",
                       line_number, ": ", record.status().message()));
    }
    RETURN_IF_ERROR(replay.Append(*record));
    RETURN_IF_ERROR(replay.Append("\n"));
    ++records;
  }
  if (records == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", id, " has no dead letters to replay"));
  }
  RETURN_IF_ERROR(replay.Commit());
  JobSpec spec;
  spec.model = job.model;
  spec.model_version = job.model_version;
  spec.input_path = replay_path;
  spec.output_path = output_path;
  spec.options = options;
  spec.options.header.clear();
  spec.options.replay_of = id;
  return Submit(spec);
}

absl::Status JobRunner::Cancel(const std::string& id) {
  RETURN_IF_ERROR(
      store_->Transition(id, {JobState::kValidating, JobState::kInProgress},
                         JobState::kCancelling, options_.clock->Now()));
  if (fetcher_ != nullptr) fetcher_->Cancel(id);
  MutexLock lock(&mu_);
  halted_[id] = true;
  wake_.SignalAll();
  return absl::OkStatus();
}

absl::StatusOr<JobProgress> JobRunner::Progress(const std::string& id) {
  JobProgress p;
  ASSIGN_OR_RETURN(p.job, store_->GetJob(id));
  ASSIGN_OR_RETURN(p.chunks, queue_->Progress(id));
  p.records_done = p.job.counts.completed + p.job.counts.failed;
  MutexLock lock(&mu_);
  if (IsTerminal(p.job.state)) {
    rates_.erase(id);
    return p;
  }
  for (auto it = running_.lower_bound({id, 0});
       it != running_.end() && it->first.first == id; ++it) {
    p.records_done += it->second->load(std::memory_order_relaxed);
  }
  if (p.job.state == JobState::kInProgress) {
    ProgressRate& rate = rates_[id];
    rate.Observe(options_.clock->Now(), p.records_done);
    p.records_per_second = rate.PerSecond();
    p.eta_seconds =
        EtaSeconds(p.job.counts.total - p.records_done, p.records_per_second);
  }
  return p;
}

void JobRunner::Start() {
  if (options_.reclaim_own_leases) {
    absl::StatusOr<int64_t> n =
        queue_->ReclaimLeases(absl::StrCat(options_.worker_id, "-w"));
    if (!n.ok()) {
      FERRY_LOG(kWarning,
                "cannot reclaim earlier leases: ", n.status().ToString());
    } else if (*n > 0) {
      FERRY_LOG(kInfo, "took back ", *n,
                " chunk(s) left running by an earlier process");
    }
  }
  // Jobs still validating: submitted just now, or left by a process that
  // stopped while it validated them (validation runs again from the start).
  absl::StatusOr<std::vector<JobRecord>> validating =
      store_->ListJobsInStates({JobState::kValidating});
  if (validating.ok()) {
    MutexLock lock(&mu_);
    for (const JobRecord& job : *validating) {
      if (std::find(to_validate_.begin(), to_validate_.end(), job.id) ==
          to_validate_.end()) {
        to_validate_.push_back(job.id);
      }
    }
  }
  if (fetcher_ != nullptr) fetcher_->Start();
  MutexLock lock(&mu_);
  if (started_) return;
  started_ = true;
  stopping_ = false;
  for (int i = 0; i < options_.parallel_chunks; ++i) {
    threads_.emplace_back([this, i] {
      SetThreadName(absl::StrCat("job-worker", i));
      WorkerLoop(i);
    });
  }
  threads_.emplace_back([this] {
    SetThreadName("job-housekeep");
    HousekeeperLoop();
  });
}

void JobRunner::Stop() {
  std::vector<std::thread> threads;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    wake_.SignalAll();
    threads.swap(threads_);
  }
  // Downloads end first; a worker that validates meanwhile queues nothing
  // (the job stays validating and is fetched again at the next Start).
  if (fetcher_ != nullptr) fetcher_->Stop();
  for (std::thread& t : threads) t.join();
  MutexLock lock(&mu_);
  started_ = false;
}

bool JobRunner::Stopping(const std::string& job_id) {
  MutexLock lock(&mu_);
  if (stopping_) return true;
  auto it = halted_.find(job_id);
  return it != halted_.end() && it->second;
}

void JobRunner::WorkerLoop(int index) {
  while (true) {
    {
      MutexLock lock(&mu_);
      if (stopping_) return;
    }
    if (std::optional<std::string> id = NextToValidate()) {
      absl::Status s = Validate(*id);
      if (s.ok()) continue;
      FERRY_LOG(kWarning, "job ", *id, ": validating: ", s.ToString(),
                "; trying again");
      MutexLock lock(&mu_);
      to_validate_.push_back(*std::move(id));
      if (stopping_) return;
      options_.clock->WaitUntil(&mu_, &wake_,
                                options_.clock->Now() + options_.poll);
      continue;
    }
    if (RunOneChunk(index)) continue;
    MutexLock lock(&mu_);
    if (stopping_) return;
    options_.clock->WaitUntil(&mu_, &wake_,
                              options_.clock->Now() + options_.poll);
  }
}

void JobRunner::HousekeeperLoop() {
  while (true) {
    Housekeep();
    MutexLock lock(&mu_);
    if (stopping_) return;
    options_.clock->WaitUntil(&mu_, &wake_,
                              options_.clock->Now() + options_.poll);
  }
}

absl::StatusOr<std::shared_ptr<const JobRunner::Prepared>> JobRunner::Prepare(
    const JobRecord& job) {
  {
    MutexLock lock(&mu_);
    auto it = prepared_.find(job.id);
    if (it != prepared_.end()) return it->second;
  }
  auto p = std::make_shared<Prepared>();
  p->job = job;
  ASSIGN_OR_RETURN(p->options, JobOptionsFromJson(job.options_json));
  ASSIGN_OR_RETURN(p->model,
                   models_->Find(job.model, PinnedVersion(job.model_version)));
  InputScan scan;
  scan.format = p->options.format;
  scan.header = p->options.header;
  ASSIGN_OR_RETURN(
      p->codec, RecordCodec::Create(p->options.format, p->model.options, scan,
                                    p->options.csv));
  if (p->options.run_window) {
    absl::TimeZone tz = absl::LocalTimeZone();
    if (!p->options.time_zone.empty()) {
      absl::LoadTimeZone(p->options.time_zone, &tz);
    }
    p->zone = tz;
  }
  MutexLock lock(&mu_);
  auto [it, inserted] = prepared_.emplace(job.id, std::move(p));
  return it->second;
}

bool JobRunner::RunOneChunk(int worker) {
  std::vector<std::string> runnable;
  {
    MutexLock lock(&mu_);
    runnable = runnable_;
  }
  const std::string wid = WorkerId(worker);
  std::optional<ChunkRecord> chunk;
  for (const std::string& id : runnable) {
    if (Stopping(id)) continue;
    absl::StatusOr<std::optional<ChunkRecord>> leased =
        queue_->Lease(wid, options_.clock->Now(), options_.lease, id);
    if (!leased.ok()) {
      FERRY_LOG(kWarning, "job ", id,
                ": cannot lease a chunk: ", leased.status().ToString());
      continue;
    }
    if (*leased) {
      chunk = std::move(*leased);
      break;
    }
  }
  if (!chunk) return false;
  const std::string& job_id = chunk->job_id;

  absl::StatusOr<JobRecord> job = store_->GetJob(job_id);
  absl::StatusOr<std::shared_ptr<const Prepared>> prepared =
      job.ok() ? Prepare(*job) : job.status();
  if (!prepared.ok()) {
    (void)queue_->Release(job_id, chunk->index, wid);
    const absl::StatusCode code = prepared.status().code();
    if (code == absl::StatusCode::kNotFound ||
        code == absl::StatusCode::kInvalidArgument) {
      // The model or the job's options are gone for good: the job cannot run.
      FERRY_LOG(kError, "job ", job_id,
                " failed: ", prepared.status().ToString());
      if (store_
              ->Transition(job_id, {JobState::kInProgress}, JobState::kFailed,
                           options_.clock->Now(), prepared.status().message())
              .ok()) {
        ReportTerminal(job_id);
      }
    }
    return false;  // e.g. the model is loading: try later
  }
  const Prepared& p = **prepared;

  auto counter = std::make_shared<std::atomic<int64_t>>(0);
  {
    MutexLock lock(&mu_);
    running_[{job_id, chunk->index}] = counter;
  }
  ChunkExecutorOptions exec;
  exec.clock = options_.clock;
  exec.backoff = options_.backoff;
  exec.max_attempts = p.options.max_attempts;
  exec.max_in_flight_records =
      options_.max_in_flight_records > 0
          ? options_.max_in_flight_records
          : std::max<int64_t>(256, 4 * p.model.options.max_batch_size);
  exec.jitter = options_.jitter;
  exec.model_version = p.model.version;
  const int64_t index = chunk->index;
  exec.keep_alive = [this, &job_id, index, &wid] {
    return queue_->Renew(job_id, index, wid,
                         options_.clock->Now() + options_.lease);
  };
  exec.keep_alive_every = options_.lease / 3;
  exec.should_stop = [this, &job_id] { return Stopping(job_id); };
  exec.records_done = counter.get();
  if (options_.worker_sched_idle) exec.background = SetThreadBackground;
  const std::string model = p.job.model;
  const std::optional<int64_t> version = PinnedVersion(p.job.model_version);
  InferFn infer = [this, model, version](InferenceRequest request,
                                         InferDone done) {
    models_->Infer(model, version, std::move(request), std::move(done));
  };
  ChunkSpan span;
  span.begin_offset = chunk->begin_offset;
  span.end_offset = chunk->end_offset;
  span.first_record = chunk->first_record;
  span.first_line = chunk->first_line;
  span.record_count = chunk->record_count;

  absl::StatusOr<ChunkOutcome> outcome = ExecuteChunk(
      p.job.input_path, p.options.format, span, *p.codec, infer, exec);
  absl::Status status = outcome.status();
  if (outcome.ok()) {
    // Writing the part files is the chunk's own work too (no lock shared
    // with the online path): at the chunk's priority.
    if (exec.background) exec.background(true);
    status = WritePart(p, index, chunk->attempts, *outcome);
    // Its memory is freed here too.
    std::string().swap(outcome->output);
    std::string().swap(outcome->errors);
    std::string().swap(outcome->dead_letters);
    if (exec.background) exec.background(false);
  }
  if (status.ok()) {
    status = queue_->Complete(job_id, index, wid, outcome->result);
    if (!status.ok()) {
      // Lost the lease: another worker ran (or runs) the chunk; its part files
      // are the same, and its completion is the one that counts.
      FERRY_LOG(kWarning, "job ", job_id, " chunk ", index, ": ",
                status.ToString());
    }
  } else {
    if (status.code() != absl::StatusCode::kCancelled) {
      FERRY_LOG(kWarning, "job ", job_id, " chunk ", index,
                " gave back: ", status.ToString());
    }
    (void)queue_->Release(job_id, index, wid);
    if (status.code() == absl::StatusCode::kDataLoss) {
      if (store_
              ->Transition(job_id, {JobState::kInProgress}, JobState::kFailed,
                           options_.clock->Now(), status.message())
              .ok()) {
        ReportTerminal(job_id);
      }
    }
  }
  MutexLock lock(&mu_);
  running_.erase({job_id, index});
  wake_.SignalAll();  // the housekeeper may finalize now
  return true;
}

absl::Status JobRunner::WritePart(const Prepared& p, int64_t index, int attempt,
                                  const ChunkOutcome& outcome) {
  RETURN_IF_ERROR(WriteFileAtomically(PartPath(p.job.id, index, attempt, "out"),
                                      outcome.output));
  RETURN_IF_ERROR(WriteFileAtomically(PartPath(p.job.id, index, attempt, "err"),
                                      outcome.errors));
  return WriteFileAtomically(PartPath(p.job.id, index, attempt, "dead"),
                             outcome.dead_letters);
}

void JobRunner::Housekeep() {
  const absl::Time now = options_.clock->Now();
  absl::StatusOr<std::vector<JobRecord>> jobs = store_->ListJobsInStates(
      {JobState::kInProgress, JobState::kFinalizing, JobState::kCancelling});
  if (!jobs.ok()) {
    FERRY_LOG(kWarning, "job housekeeping: ", jobs.status().ToString());
    return;
  }
  std::vector<std::string> runnable;
  std::map<std::string, bool> halted;
  for (const JobRecord& job : *jobs) {
    bool finalize = false;
    if (job.state == JobState::kFinalizing) {
      finalize = true;  // a crash interrupted it: do it again
    } else if (job.state == JobState::kCancelling || now >= job.expires_at) {
      halted[job.id] = true;
      // Cancelled by another process, too: its input download ends.
      if (fetcher_ != nullptr) fetcher_->Cancel(job.id);
      {
        // At once, not after this pass: no worker may take a new chunk of it.
        MutexLock lock(&mu_);
        halted_[job.id] = true;
        runnable_.erase(std::remove(runnable_.begin(), runnable_.end(), job.id),
                        runnable_.end());
      }
      absl::StatusOr<std::vector<ChunkRecord>> chunks =
          store_->ListChunks(job.id);
      if (!chunks.ok()) continue;
      finalize = std::none_of(
          chunks->begin(), chunks->end(),
          [now](const ChunkRecord& c) { return LiveLease(c, now); });
    } else {
      absl::StatusOr<ChunkProgress> progress = queue_->Progress(job.id);
      if (!progress.ok()) continue;
      if (progress->pending == 0 && progress->leased == 0) {
        finalize = true;
      } else {
        bool in_window = true;
        absl::StatusOr<std::shared_ptr<const Prepared>> p = Prepare(job);
        if (p.ok() && (*p)->options.run_window) {
          in_window = InRunWindow(*(*p)->options.run_window, now, *(*p)->zone);
        }
        // A job outside its run window lets its running chunks go too.
        if (in_window) {
          runnable.push_back(job.id);
        } else {
          halted[job.id] = true;
        }
      }
    }
    if (finalize) {
      if (absl::Status s = Finalize(job); !s.ok()) {
        FERRY_LOG(kWarning, "job ", job.id, ": finalizing: ", s.ToString());
      }
    }
  }
  // Observe the rate of every job running here, polled or not.
  std::vector<std::string> running;
  {
    MutexLock lock(&mu_);
    for (const auto& [key, counter] : running_) {
      if (running.empty() || running.back() != key.first)
        running.push_back(key.first);
    }
  }
  for (const std::string& id : running) (void)Progress(id);
  MutexLock lock(&mu_);
  runnable_ = std::move(runnable);
  halted_ = std::move(halted);
  if (!runnable_.empty()) wake_.SignalAll();
}

void JobRunner::ReportTerminal(const std::string& id) {
  {
    MutexLock lock(&mu_);
    if (reported_[id]) return;
    reported_[id] = true;
    prepared_.erase(id);
    rates_.erase(id);
  }
  if (!options_.on_terminal) return;
  absl::StatusOr<JobRecord> job = store_->GetJob(id);
  if (job.ok()) options_.on_terminal(*job);
}

}  // namespace ferry
