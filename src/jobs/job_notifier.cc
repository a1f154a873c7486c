// SPDX-License-Identifier: Apache-2.0
#include "jobs/job_notifier.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/logging.h"
#include "core/status_macros.h"
#include "core/thread_priority.h"
#include "jobs/job_options.h"

namespace ferry {

JobNotifier::JobNotifier(WebhookSender* sender, WebhookOutbox* outbox,
                         Options options)
    : sender_(sender), outbox_(outbox), options_(std::move(options)) {
  const int n = std::max(1, options_.threads);
  for (int i = 0; i < n; ++i) {
    threads_.emplace_back([this] {
      SetThreadName("job-webhook");
      DeliveryLoop();
    });
  }
}

JobNotifier::~JobNotifier() { Stop(); }

WebhookEvent JobNotifier::EventFor(const JobRecord& job) {
  WebhookEvent e;
  e.job_id = job.id;
  e.state = std::string(JobStateName(job.state));
  e.total = job.counts.total;
  e.completed = job.counts.completed;
  e.failed = job.counts.failed;
  e.output_path = job.output_path;
  e.error_path = job.error_path;
  e.dead_letter_path = job.dead_letter_path;
  switch (job.state) {
    case JobState::kCompleted:
      e.at = job.completed_at;
      break;
    case JobState::kFailed:
      e.at = job.failed_at;
      // A job that failed validation or could not run wrote no files.
      e.output_path.clear();
      e.error_path.clear();
      e.dead_letter_path.clear();
      break;
    case JobState::kExpired:
      e.at = job.expired_at;
      break;
    case JobState::kCancelled:
      e.at = job.cancelled_at;
      break;
    default:
      e.at = job.created_at;
      break;
  }
  return e;
}

void JobNotifier::Notify(const JobRecord& job) {
  absl::StatusOr<JobOptions> options = JobOptionsFromJson(job.options_json);
  if (!options.ok()) {
    FERRY_LOG(kWarning, "job ", job.id, ": no webhook, options unreadable: ",
              options.status().ToString());
    return;
  }
  if (options->webhook_url.empty()) return;
  WebhookEvent event = EventFor(job);
  if (options_.annotate) options_.annotate(job, &event);
  WebhookRecord w;
  w.job_id = job.id;
  w.url = options->webhook_url;
  w.body = WebhookEventJson(event);
  w.created_at = options_.clock->Now();
  w.next_attempt_at = w.created_at;
  const absl::Status added = outbox_->AddWebhook(w);
  if (!added.ok() && !absl::IsAlreadyExists(added)) {
    // Recover() at the next start finds the job again.
    FERRY_LOG(kWarning, "job ", job.id,
              ": webhook not stored: ", added.ToString());
    return;
  }
  MutexLock lock(&mu_);
  ++generation_;
  cv_.SignalAll();
}

absl::Status JobNotifier::Recover(JobStore* jobs) {
  ASSIGN_OR_RETURN(
      std::vector<JobRecord> ended,
      jobs->ListJobsInStates({JobState::kCompleted, JobState::kFailed,
                              JobState::kExpired, JobState::kCancelled}));
  // Only jobs that ended within the retry budget: an older one would be
  // given up at once (and a store written before the outbox existed holds
  // jobs whose webhooks went out long ago).
  const absl::Time since =
      options_.clock->Now() - sender_->options().give_up_after;
  for (const JobRecord& job : ended) {
    if (EventFor(job).at < since) continue;
    if (!absl::IsNotFound(outbox_->GetWebhook(job.id).status())) continue;
    Notify(job);
  }
  return absl::OkStatus();
}

void JobNotifier::Stop() {
  std::vector<std::thread> threads;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    cv_.SignalAll();
    threads.swap(threads_);
  }
  // An attempt in flight ends at its own timeout.
  for (std::thread& t : threads) t.join();
}

void JobNotifier::DeliveryLoop() {
  // A few more than the threads, so that one thread finds a due webhook the
  // others are not attempting.
  const int scan = std::max(1, options_.threads) * 2 + 8;
  mu_.Lock();
  while (!stopping_) {
    const uint64_t seen = generation_;
    mu_.Unlock();
    absl::StatusOr<std::vector<WebhookRecord>> pending =
        outbox_->PendingWebhooks(scan);
    mu_.Lock();
    if (stopping_) break;
    absl::Time wake = absl::InfiniteFuture();
    if (!pending.ok()) {
      FERRY_LOG(kWarning,
                "webhooks: reading the outbox: ", pending.status().ToString());
      wake = options_.clock->Now() + options_.store_retry;
    } else {
      const absl::Time now = options_.clock->Now();
      const WebhookRecord* due = nullptr;
      for (const WebhookRecord& w : *pending) {
        if (in_flight_.count(w.job_id) > 0) continue;
        if (w.next_attempt_at <= now) {
          due = &w;
          break;
        }
        wake = std::min(wake, w.next_attempt_at);
      }
      if (due != nullptr) {
        in_flight_.insert(due->job_id);
        WebhookRecord w = *due;
        mu_.Unlock();
        AttemptOne(w);
        mu_.Lock();
        in_flight_.erase(w.job_id);
        ++generation_;
        cv_.SignalAll();
        continue;
      }
      // A full scan may hide a webhook due sooner behind the ones in flight.
      if (static_cast<int>(pending->size()) == scan) {
        wake = std::min(wake, now + options_.store_retry);
      }
    }
    if (generation_ != seen) continue;  // something changed meanwhile
    options_.clock->WaitUntil(&mu_, &cv_, wake);
  }
  mu_.Unlock();
}

void JobNotifier::AttemptOne(WebhookRecord w) {
  const absl::Status result = sender_->Attempt(w.url, w.body);
  ++w.attempts;
  const std::string what = absl::StrCat("job ", w.job_id, ": webhook");
  if (result.ok()) {
    w.state = WebhookState::kDelivered;
    w.last_error.clear();
  } else {
    w.last_error = std::string(result.message());
    const absl::Time now = options_.clock->Now();
    const std::optional<absl::Time> next =
        WebhookSender::IsRetryable(result)
            ? sender_->NextAttemptAt(w.attempts, w.created_at, now)
            : std::nullopt;
    if (!WebhookSender::IsRetryable(result)) {
      w.state = WebhookState::kGaveUp;
      FERRY_LOG(kWarning, what, " not delivered: ", result.ToString());
    } else if (!next) {
      w.state = WebhookState::kGaveUp;
      FERRY_LOG(kWarning, what, " not delivered: gave up after ", w.attempts,
                " attempts over ",
                absl::FormatDuration(sender_->options().give_up_after),
                "; last error: ", result.message());
    } else {
      w.next_attempt_at = *next;
      FERRY_LOG(kWarning, what, ": attempt ", w.attempts, " failed (next in ",
                absl::FormatDuration(w.next_attempt_at - now),
                "): ", result.message());
    }
  }
  if (absl::Status s = outbox_->UpdateWebhook(w); !s.ok()) {
    // The attempt is made again after a restart: receivers drop duplicates
    // by the event id.
    FERRY_LOG(kWarning, what, ": recording the attempt: ", s.ToString());
  }
}

}  // namespace ferry
