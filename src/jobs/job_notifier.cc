// SPDX-License-Identifier: Apache-2.0
#include "jobs/job_notifier.h"

#include <algorithm>

#include "core/logging.h"
#include "jobs/job_options.h"

namespace ferry {

JobNotifier::JobNotifier(WebhookSender* sender, Options options)
    : sender_(sender), options_(std::move(options)) {
  const int n = std::max(1, options_.threads);
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { DeliveryLoop(); });
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
  MutexLock lock(&mu_);
  if (stopping_) return;
  if (queue_.size() >= options_.max_queued) {
    FERRY_LOG(kWarning, "job ", job.id, ": webhook dropped, ", queue_.size(),
              " events already waiting");
    return;
  }
  queue_.emplace_back(options->webhook_url, std::move(event));
  cv_.Signal();
}

void JobNotifier::Stop() {
  std::vector<std::thread> threads;
  size_t dropped = 0;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    dropped = queue_.size();
    queue_.clear();
    cv_.SignalAll();
    threads.swap(threads_);
  }
  if (threads.empty()) return;
  sender_->Stop();
  for (std::thread& t : threads) t.join();
  if (dropped > 0) {
    FERRY_LOG(kWarning, "webhooks: ", dropped,
              " event(s) not delivered at shutdown");
  }
}

void JobNotifier::DeliveryLoop() {
  while (true) {
    std::pair<std::string, WebhookEvent> item;
    {
      MutexLock lock(&mu_);
      while (!stopping_ && queue_.empty()) cv_.Wait(&mu_);
      if (stopping_) return;
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    const absl::Status s = sender_->Deliver(item.first, item.second);
    if (!s.ok()) {
      FERRY_LOG(kWarning, "job ", item.second.job_id,
                ": webhook not delivered: ", s.ToString());
    }
  }
}

}  // namespace ferry
