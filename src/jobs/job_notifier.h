// SPDX-License-Identifier: Apache-2.0
// JobNotifier: sends a job's webhook when the job reaches a terminal state.
//
// JobRunner calls Notify() (its on_terminal hook) from a worker or the
// housekeeper; Notify only queues, so the runner never waits on a receiver.
// `threads` delivery threads take events from the queue and hand each to the
// WebhookSender, which retries until a 2xx or its give-up time; a receiver
// that stays down holds one delivery thread, not the others. Jobs without a
// webhook_url are skipped. A full queue drops the event with a warning.
//
// Events are not durable: an event still queued or retrying when the process
// stops is lost (logged), and a restarted server does not re-send it.
//
// Thread-safety: Notify and Stop are safe for concurrent use. The sender
// must outlive the notifier. Stop() (also run by the destructor) stops the
// sender, so call it once no more events are wanted.
#ifndef FERRY_JOBS_JOB_NOTIFIER_H_
#define FERRY_JOBS_JOB_NOTIFIER_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "core/mutex.h"
#include "jobs/webhook/webhook.h"
#include "storage/job_store.h"

namespace ferry {

class JobNotifier {
 public:
  struct Options {
    int threads = 2;
    size_t max_queued = 1000;
    // Called on the Notify thread before the event is queued, e.g. to name
    // result files by their file ids rather than their paths.
    std::function<void(const JobRecord&, WebhookEvent*)> annotate;
  };

  // Starts the delivery threads.
  JobNotifier(WebhookSender* sender, Options options);
  ~JobNotifier();  // Stop()

  JobNotifier(const JobNotifier&) = delete;
  JobNotifier& operator=(const JobNotifier&) = delete;

  // Queues the job's event if its options name a webhook_url.
  void Notify(const JobRecord& job) ABSL_LOCKS_EXCLUDED(mu_);

  // Stops the sender (waits between retries end), drops queued events and
  // joins the threads. Idempotent.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

  // The event of a terminal job: state, counts, result paths and the time it
  // reached the state.
  static WebhookEvent EventFor(const JobRecord& job);

 private:
  void DeliveryLoop() ABSL_LOCKS_EXCLUDED(mu_);

  WebhookSender* const sender_;
  const Options options_;

  Mutex mu_;
  CondVar cv_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // (url, event)
  std::deque<std::pair<std::string, WebhookEvent>> queue_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_;
};

}  // namespace ferry

#endif  // FERRY_JOBS_JOB_NOTIFIER_H_
