// SPDX-License-Identifier: Apache-2.0
#include "cli/run_command.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "cli/progress_text.h"
#include "core/status_macros.h"
#include "jobs/files.h"
#include "jobs/job_runner.h"
#include "repository/model_manager.h"
#include "storage/sqlite_job_store.h"

namespace ferry {
namespace {

namespace fs = std::filesystem;

// Blocks SIGINT and SIGTERM in every thread and turns them into a flag. The
// watcher polls with a timeout so it can be told to exit without a signal.
class InterruptWatcher {
 public:
  InterruptWatcher() {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
    thread_ = std::thread([this] {
      const timespec tick{0, 100'000'000};
      while (!done_.load()) {
        if (sigtimedwait(&signals_, nullptr, &tick) > 0) {
          interrupted_.store(true);
        }
      }
    });
  }
  ~InterruptWatcher() {
    done_.store(true);
    thread_.join();
  }
  bool interrupted() const { return interrupted_.load(); }

 private:
  sigset_t signals_;
  std::atomic<bool> interrupted_{false};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

absl::StatusOr<int> Run(const RunCommandOptions& o,
                        const EngineRegistry& engines, std::ostream& out,
                        std::ostream& err) {
  const fs::path state_dir = o.state_dir.empty()
                                 ? fs::path(o.output + ".ferry-state")
                                 : fs::path(o.state_dir);
  const fs::path db_path = state_dir / "jobs.db";

  // The signal mask must be set before any thread starts, so the model's
  // threads inherit it and only the watcher sees SIGINT/SIGTERM.
  InterruptWatcher interrupts;

  // One process per state directory: with the lock held, chunks a killed
  // earlier run left leased can be taken back at once.
  ASSIGN_OR_RETURN(DirectoryLock lock, DirectoryLock::Acquire(state_dir));
  std::error_code ec;
  const bool had_state = fs::exists(db_path, ec);
  std::unique_ptr<SqliteJobStore> store;
  std::optional<JobRecord> existing;
  if (had_state) {
    ASSIGN_OR_RETURN(store, SqliteJobStore::Open(db_path.string()));
    ASSIGN_OR_RETURN(std::vector<JobRecord> jobs, store->ListJobs(1));
    if (!jobs.empty()) existing = jobs.front();
    if (existing && !IsTerminal(existing->state) && !o.resume) {
      return absl::FailedPreconditionError(
          absl::StrCat("an earlier run into '", o.output,
                       "' was interrupted (state in '", state_dir.string(),
                       "'); pass --resume to continue it, or remove "
                       "that directory to start over"));
    }
    if (existing && IsTerminal(existing->state) && !o.resume) {
      // A finished run: start afresh.
      store.reset();
      existing.reset();
      for (const char* name : {"jobs.db", "jobs.db-wal", "jobs.db-shm"}) {
        fs::remove(state_dir / name, ec);
      }
      fs::remove_all(state_dir / "parts", ec);
    }
  }
  fs::create_directories(state_dir, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("cannot create state directory '",
                                            state_dir.string(),
                                            "': ", ec.message()));
  }
  if (!store) {
    ASSIGN_OR_RETURN(store, SqliteJobStore::Open(db_path.string()));
  }

  ModelManager manager(o.model_repository, &engines, {});
  RETURN_IF_ERROR(manager.Load(o.model));

  JobRunner::Options ro;
  ro.work_dir = state_dir / "parts";
  ro.worker_id = "local";
  ro.reclaim_own_leases = true;
  ro.parallel_chunks = o.parallel_chunks;
  ro.poll = absl::Milliseconds(50);
  JobRunner runner(store.get(), store.get(), &manager, ro);

  std::string job_id;
  if (existing) {
    if (existing->model != o.model ||
        fs::absolute(existing->input_path) != fs::absolute(o.input)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--resume: the run in '", state_dir.string(), "' scores '",
          existing->input_path, "' with model '", existing->model, "', not '",
          o.input, "' with '", o.model, "'"));
    }
    job_id = existing->id;
    out << "ferry run: resuming job " << job_id << " ("
        << existing->counts.completed + existing->counts.failed << " of "
        << existing->counts.total << " records already done)\n";
  } else {
    JobSpec spec;
    spec.model = o.model;
    spec.model_version = o.version;
    spec.input_path = o.input;
    spec.output_path = o.output;
    spec.error_path = o.errors;
    spec.dead_letter_path = o.dead_letters;
    ASSIGN_OR_RETURN(spec.options.format,
                     ResolveRecordFormat(o.format, o.input));
    spec.options.csv.id_column = o.id_column;
    spec.options.csv.columns = o.columns;
    spec.options.csv.keep_columns = o.keep_columns;
    spec.options.chunk_records = o.chunk_size;
    spec.options.max_attempts = o.max_attempts;
    // A local run has no completion window to speak of.
    spec.options.completion_window = absl::Hours(24 * 365);
    ASSIGN_OR_RETURN(JobRecord job, runner.Submit(spec));
    if (job.state == JobState::kFailed) {
      return absl::InvalidArgumentError(job.error);
    }
    job_id = job.id;
  }

  const bool tty = ::isatty(STDERR_FILENO) == 1;
  const std::string mode =
      o.progress == "auto" ? (tty ? "bar" : "lines") : o.progress;
  const absl::Time start = absl::Now();
  absl::Time last_line = start;
  int64_t start_done = -1;
  runner.Start();
  JobProgress p;
  while (true) {
    ASSIGN_OR_RETURN(p, runner.Progress(job_id));
    if (start_done < 0) start_done = p.records_done;
    if (IsTerminal(p.job.state) || interrupts.interrupted()) break;
    const absl::Time now = absl::Now();
    // The runner's rate over the last minute, so the ETA follows changes.
    const double rate = p.records_per_second.value_or(0);
    const int64_t total = p.job.counts.total;
    const double eta = p.eta_seconds.value_or(-1);
    const double frac =
        total > 0 ? static_cast<double>(p.records_done) / total : 0;
    if (mode == "bar") {
      const int width = 30;
      const int filled = static_cast<int>(frac * width);
      err << absl::StrFormat("\r[%s%s] %5.1f%% %d/%d  %s rec/s  ETA %s ",
                             std::string(filled, '#'),
                             std::string(width - filled, ' '), frac * 100,
                             p.records_done, total, RateText(rate),
                             EtaText(eta))
          << std::flush;
    } else if (mode == "lines" && now - last_line >= absl::Seconds(5)) {
      last_line = now;
      err << absl::StrFormat(
                 "ferry run: %d/%d records (%.1f%%), %s rec/s, ETA %s\n",
                 p.records_done, total, frac * 100, RateText(rate),
                 EtaText(eta))
          << std::flush;
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  runner.Stop();
  if (mode == "bar") err << "\n";
  manager.Shutdown(absl::Seconds(5));
  if (!IsTerminal(p.job.state)) {
    err << "ferry run: interrupted; " << p.records_done << " of "
        << p.job.counts.total << " records done. Continue with the same "
        << "command and --resume.\n";
    return 130;
  }
  ASSIGN_OR_RETURN(JobRecord job, store->GetJob(job_id));
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  const int64_t ran = job.counts.completed + job.counts.failed - start_done;
  const std::string cost =
      o.price_per_instance_hour > 0
          ? absl::StrFormat(
                ", cost %.4f",
                job.compute_seconds * o.price_per_instance_hour / 3600.0)
          : "";
  out << absl::StrFormat(
      "ferry run: %s. %d records: %d scored, %d failed, in %.2f s (%s rec/s); "
      "compute %.2f s%s\n"
      "  output:       %s\n  errors:       %s\n  dead letters: %s\n",
      JobStateName(job.state), job.counts.total, job.counts.completed,
      job.counts.failed, seconds,
      RateText(seconds > 0 ? static_cast<double>(ran) / seconds : 0),
      job.compute_seconds, cost, job.output_path, job.error_path,
      job.dead_letter_path);
  if (job.state != JobState::kCompleted) {
    if (!job.error.empty()) err << "ferry run: " << job.error << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

CLI::App* AddRunCommand(CLI::App& app, RunCommandOptions* o) {
  CLI::App* cmd = app.add_subcommand(
      "run", "Score a CSV or JSONL file with a model as a durable offline job");
  cmd->add_option("--model-repository", o->model_repository,
                  "Directory laid out as <model>/config.pbtxt")
      ->required();
  cmd->add_option("--model", o->model, "Model name")->required();
  cmd->add_option("--version", o->version, "Model version (default: latest)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--input", o->input, "Input file (.csv or .jsonl)")
      ->required();
  cmd->add_option("--output", o->output, "Output file")->required();
  cmd->add_option("--errors", o->errors,
                  "Error file (default <output>.errors.jsonl)");
  cmd->add_option("--dead-letters", o->dead_letters,
                  "Dead-letter file (default <output>.dead_letters.jsonl)");
  cmd->add_option("--format", o->format, "csv or jsonl (default: extension)")
      ->check(CLI::IsMember({"csv", "jsonl"}));
  cmd->add_option("--id-column", o->id_column,
                  "CSV column that identifies a record (default: row number)");
  cmd->add_option("--columns", o->columns,
                  "CSV feature columns, in model order (default: all but the "
                  "id column)")
      ->delimiter(',');
  cmd->add_flag("--keep-columns", o->keep_columns,
                "Copy the input columns into the output");
  cmd->add_option("--chunk-size", o->chunk_size, "Records per chunk")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-attempts", o->max_attempts,
                  "Attempts per record for transient failures")
      ->check(CLI::Range(1, 100));
  cmd->add_flag("--resume", o->resume,
                "Continue an interrupted run from its state directory");
  cmd->add_option("--state-dir", o->state_dir,
                  "Job store and part files (default <output>.ferry-state)");
  cmd->add_option("--parallel-chunks", o->parallel_chunks,
                  "Chunks processed at once")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--price-per-instance-hour", o->price_per_instance_hour,
                  "For the cost in the summary");
  cmd->add_option("--progress", o->progress,
                  "auto (bar on a terminal, else lines), bar, lines, none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}));
  cmd->footer(
      "Example:\n"
      "  ferry run --model-repository example-models --model fraud_xgb \\\n"
      "      --input transactions.csv --output scores.csv\n"
      "Interrupted (Ctrl-C, crash)? Run the same command with --resume.");
  return cmd;
}

int RunRunCommand(const RunCommandOptions& options,
                  const EngineRegistry& engines, std::ostream& out,
                  std::ostream& err) {
  absl::StatusOr<int> code = Run(options, engines, out, err);
  if (!code.ok()) {
    err << "ferry run: " << code.status().message() << "\n";
    return 1;
  }
  return *code;
}

}  // namespace ferry
