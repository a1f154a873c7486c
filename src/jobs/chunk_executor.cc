// SPDX-License-Identifier: Apache-2.0
#include "jobs/chunk_executor.h"

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/mutex.h"
#include "core/status_macros.h"

namespace ferry {
namespace {

// One record's fate.
struct Slot {
  RawRecord unparsed;  // the record, when it could not be parsed
  std::optional<ParsedRecord> parsed;
  bool failed = false;
  bool dead = false;  // transient failure that exhausted its attempts
  const char* code = "";

  const RawRecord& raw() const { return parsed ? parsed->raw : unparsed; }
  absl::Status error;
  int attempts = 0;
};

// Consecutive parsed records sent as one request.
struct Group {
  std::vector<size_t> slots;
  std::vector<const ParsedRecord*> records;
  int attempts = 0;
  bool finished = false;
  std::optional<InferenceResponse> response;  // until formatted
};

// Answers from infer callbacks, handed to the executing thread.
class Mailbox {
 public:
  void Post(size_t group, absl::StatusOr<InferenceResponse> response)
      ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    items_.emplace_back(group, std::move(response));
    cv_.Signal();
  }
  // Waits until something arrives or `deadline` passes, then takes all.
  std::vector<std::pair<size_t, absl::StatusOr<InferenceResponse>>> Take(
      Clock* clock, absl::Time deadline) ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    while (items_.empty()) {
      if (clock->WaitUntil(&mu_, &cv_, deadline)) break;
    }
    std::vector<std::pair<size_t, absl::StatusOr<InferenceResponse>>> out;
    out.swap(items_);
    return out;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  std::vector<std::pair<size_t, absl::StatusOr<InferenceResponse>>> items_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<ChunkOutcome> ExecuteChunk(const std::string& input_path,
                                          RecordFormat format,
                                          const ChunkSpan& span,
                                          const RecordCodec& codec,
                                          const InferFn& infer,
                                          const ChunkExecutorOptions& options) {
  Clock* clock = options.clock;
  if (clock == nullptr) return absl::InvalidArgumentError("no clock");
  std::function<double()> jitter = options.jitter;
  if (!jitter) {
    auto rng = std::make_shared<std::mt19937_64>(
        static_cast<uint64_t>(span.first_record) * 0x9e3779b97f4a7c15ULL + 1);
    jitter = [rng] {
      return std::uniform_real_distribution<double>(-1.0, 1.0)(*rng);
    };
  }
  // Lowers the thread's priority for the chunk's own work (reading, parsing,
  // waiting for answers, formatting) and restores it around calls that take
  // locks the online path or the runner share, and on every way out.
  struct Priority {
    const std::function<void(bool)>& set;
    bool background = false;
    void Background(bool b) {
      if (set && b != background) {
        set(b);
        background = b;
      }
    }
    ~Priority() { Background(false); }
  } priority{options.background};
  auto count_done = [&](int64_t n) {
    if (options.records_done != nullptr) {
      options.records_done->fetch_add(n, std::memory_order_relaxed);
    }
  };

  // Records are read and parsed a request's worth at a time, each group sent
  // as soon as it is parsed: the model has offline rows to batch within
  // microseconds of the chunk starting, not after the whole chunk is parsed.
  priority.Background(true);
  std::unique_ptr<RecordReader> reader;
  {
    absl::StatusOr<std::unique_ptr<RecordReader>> opened =
        RecordReader::Open(input_path, format, span);
    if (!opened.ok()) return opened.status();
    reader = *std::move(opened);
  }
  // Reserved once: groups point into it, so it must never reallocate.
  std::vector<Slot> slots;
  slots.reserve(static_cast<size_t>(span.record_count));
  bool input_done = false;
  // A deque: split groups are appended while references to others are held.
  std::deque<Group> groups;
  const size_t per_request =
      static_cast<size_t>(std::max(1, codec.max_records_per_request()));

  ChunkOutcome outcome;
  auto fail_group = [&](Group& g, const char* code, const absl::Status& error,
                        bool dead) {
    for (size_t i : g.slots) {
      Slot& s = slots[i];
      s.failed = true;
      s.dead = dead;
      s.code = code;
      s.error = error;
      s.attempts = g.attempts;
    }
    g.finished = true;
    count_done(static_cast<int64_t>(g.slots.size()));
  };

  const absl::Time started = clock->Now();
  Mailbox mailbox;
  std::deque<size_t> ready;
  std::multimap<absl::Time, size_t> retries;  // due time → group
  size_t finished = 0;
  int64_t in_flight = 0;
  bool stopping = false;
  absl::Status abandon;
  absl::Time next_check = started + options.keep_alive_every;

  // Reads records until one request's worth parses (or the input ends) and
  // queues them as a group. Records that do not parse fail at once. A read
  // error, or more records than the validation pass counted, stops the chunk.
  auto parse_group = [&] {
    Group group;
    while (group.slots.size() < per_request) {
      absl::StatusOr<std::optional<RawRecord>> raw = reader->Next();
      if (!raw.ok() || !raw->has_value()) {
        input_done = true;
        if (!raw.ok()) {
          stopping = true;
          abandon = raw.status();
        } else if (static_cast<int64_t>(slots.size()) != span.record_count) {
          stopping = true;
          abandon = absl::DataLossError(absl::StrCat(
              "chunk at byte ", span.begin_offset, " of '", input_path,
              "' holds ", slots.size(),
              " records, the validation pass "
              "counted ",
              span.record_count, "; was the input changed while the job ran?"));
        }
        break;
      }
      if (static_cast<int64_t>(slots.size()) == span.record_count) {
        input_done = true;
        stopping = true;
        abandon = absl::DataLossError(absl::StrCat(
            "chunk at byte ", span.begin_offset, " of '", input_path,
            "' holds more than the ", span.record_count,
            " records the validation pass counted; was the input changed "
            "while the job ran?"));
        break;
      }
      Slot& slot = slots.emplace_back();
      absl::StatusOr<ParsedRecord> parsed = codec.Parse(**raw);
      if (parsed.ok()) {
        slot.parsed = *std::move(parsed);
        group.slots.push_back(slots.size() - 1);
        group.records.push_back(&*slot.parsed);
      } else {
        slot.unparsed = **std::move(raw);
        slot.failed = true;
        slot.code = "invalid_record";
        slot.error = parsed.status();
        slot.attempts = 0;
        count_done(1);
      }
    }
    if (!group.slots.empty()) {
      groups.push_back(std::move(group));
      ready.push_back(groups.size() - 1);
    }
  };

  while (true) {
    absl::Time now = clock->Now();
    if (now >= next_check) {
      next_check = now + options.keep_alive_every;
      priority.Background(false);  // the runner's calls take its locks
      if (options.keep_alive) {
        if (absl::Status s = options.keep_alive(); !s.ok()) {
          stopping = true;
          abandon = s;
        }
      }
      if (!stopping && options.should_stop && options.should_stop()) {
        stopping = true;
        abandon = absl::CancelledError("the job is stopping");
      }
      priority.Background(true);
    }
    if (stopping && in_flight == 0) return abandon;
    // Retries that are due join the ready queue.
    while (!stopping && !retries.empty() && retries.begin()->first <= now) {
      ready.push_back(retries.begin()->second);
      retries.erase(retries.begin());
    }
    // Send while the in-flight bound allows, parsing more when nothing is
    // ready.
    while (!stopping) {
      if (ready.empty()) {
        if (input_done || in_flight >= options.max_in_flight_records) break;
        parse_group();
        continue;
      }
      Group& g = groups[ready.front()];
      const int64_t n = static_cast<int64_t>(g.records.size());
      if (in_flight > 0 && in_flight + n > options.max_in_flight_records) {
        break;
      }
      const size_t id = ready.front();
      ready.pop_front();
      absl::StatusOr<InferenceRequest> request =
          codec.BuildRequest(absl::MakeConstSpan(g.records));
      ++g.attempts;
      if (!request.ok()) {
        fail_group(g, "invalid_request", request.status(), false);
        ++finished;
        continue;
      }
      request->offline = true;
      in_flight += n;
      // Enqueueing takes the batcher's lock, which the online path shares:
      // never held at idle priority.
      priority.Background(false);
      infer(*std::move(request),
            [&mailbox, id](absl::StatusOr<InferenceResponse> response) {
              mailbox.Post(id, std::move(response));
            });
      priority.Background(true);
    }
    if (stopping && in_flight == 0) return abandon;
    if (input_done && finished == groups.size()) break;
    absl::Time wake = next_check;
    if (!retries.empty()) wake = std::min(wake, retries.begin()->first);
    // The mailbox's lock is taken by whichever thread delivers results (the
    // batcher's completion thread, which online results share): never held
    // at idle priority.
    priority.Background(false);
    auto taken = mailbox.Take(clock, wake);
    priority.Background(true);
    for (auto& [id, response] : taken) {
      Group& g = groups[id];
      in_flight -= static_cast<int64_t>(g.records.size());
      if (response.ok()) {
        // Formatted after the loop, off the online path's priority.
        g.response = *std::move(response);
        g.finished = true;
        for (size_t i : g.slots) slots[i].attempts = g.attempts;
        count_done(static_cast<int64_t>(g.slots.size()));
        ++finished;
        continue;
      }
      const absl::Status& error = response.status();
      if (!IsTransientFailure(error)) {
        fail_group(g, "invalid_request", error, false);
        ++finished;
      } else if (g.attempts >= options.max_attempts) {
        fail_group(g, "inference_failed", error, true);
        ++finished;
      } else if (stopping) {
        // Not retried: the chunk is being abandoned and will run again.
        ++finished;
      } else {
        const absl::Time due =
            clock->Now() + RetryBackoff(g.attempts, options.backoff, jitter());
        if (g.slots.size() == 1) {
          retries.emplace(due, id);
          continue;
        }
        // One bad record must not take its neighbours down with it: the
        // records retry one per request.
        g.finished = true;
        ++finished;
        // (`g` stays valid: a deque keeps its elements in place.)
        for (size_t k = 0; k < g.slots.size(); ++k) {
          Group& single = groups.emplace_back();
          single.slots.push_back(g.slots[k]);
          single.records.push_back(g.records[k]);
          single.attempts = g.attempts;
          retries.emplace(due, groups.size() - 1);
        }
      }
    }
  }
  if (stopping) return abandon;

  // Every record has its answer: the rest is this chunk's own CPU work.
  // Split groups' records come back as single groups at the end: format the
  // groups in record order, straight into the output.
  std::vector<Group*> ordered;
  for (Group& g : groups) {
    if (g.response) ordered.push_back(&g);
  }
  std::sort(ordered.begin(), ordered.end(), [](const Group* a, const Group* b) {
    return a->slots.front() < b->slots.front();
  });
  for (Group* g : ordered) {
    const size_t before = outcome.output.size();
    absl::Status written = codec.AppendResults(absl::MakeConstSpan(g->records),
                                               *g->response, &outcome.output);
    g->response.reset();
    if (!written.ok()) {
      outcome.output.resize(before);
      for (size_t i : g->slots) {
        slots[i].failed = true;
        slots[i].code = "invalid_response";
        slots[i].error = written;
      }
    }
  }
  for (const Slot& s : slots) {
    if (!s.failed) {
      ++outcome.result.completed;
      continue;
    }
    ++outcome.result.failed;
    const absl::string_view id =
        s.parsed ? absl::string_view(s.parsed->id) : absl::string_view();
    codec.AppendError(s.raw(), id, s.code, s.error, s.attempts,
                      &outcome.errors);
    if (s.dead) {
      codec.AppendDeadLetter(s.raw(), id, s.error, s.attempts,
                             options.model_version, &outcome.dead_letters);
    }
  }
  outcome.result.compute_seconds =
      absl::ToDoubleSeconds(clock->Now() - started);
  return outcome;  // `priority` restores the thread's CPU policy
}

}  // namespace ferry
