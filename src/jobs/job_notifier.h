// SPDX-License-Identifier: Apache-2.0
// JobNotifier: sends a job's webhook when the job reaches a terminal state,
// durably.
//
// Notify() (the JobRunner's on_terminal hook, on a worker or the housekeeper)
// writes the job's event into the store's WebhookOutbox and returns: the
// runner never waits on a receiver. Delivery threads make one attempt at a
// time (WebhookSender::Attempt) on whichever pending webhook is due, and
// write the outcome back: delivered, given up (a permanent error, or
// `give_up_after` since the job ended), or the time of the next attempt
// (exponential backoff with jitter). A receiver that stays down costs one
// attempt per backoff step, not a thread. Because the schedule lives in the
// store, a server that stops while a receiver is down sends the event after
// its restart, and Recover() finds the jobs that ended just before a crash
// without an outbox entry. Jobs without a webhook_url are skipped.
//
// Thread-safety: Notify, Recover and Stop are safe for concurrent use. The
// sender and the outbox must outlive the notifier. Stop() (also run by the
// destructor) ends the delivery threads once their attempts in flight end.
#ifndef FERRY_JOBS_JOB_NOTIFIER_H_
#define FERRY_JOBS_JOB_NOTIFIER_H_

#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "jobs/webhook/webhook.h"
#include "storage/job_store.h"

namespace ferry {

class JobNotifier {
 public:
  struct Options {
    int threads = 2;  // attempts in flight at once
    // Called before the event is stored, e.g. to name result files by their
    // file ids rather than their paths.
    std::function<void(const JobRecord&, WebhookEvent*)> annotate;
    Clock* clock = RealClock::Get();
    // After a store error the delivery threads wait this long.
    absl::Duration store_retry = absl::Seconds(1);
  };

  // Starts the delivery threads; they send what the outbox holds pending.
  JobNotifier(WebhookSender* sender, WebhookOutbox* outbox, Options options);
  ~JobNotifier();  // Stop()

  JobNotifier(const JobNotifier&) = delete;
  JobNotifier& operator=(const JobNotifier&) = delete;

  // Stores the job's event (if its options name a webhook_url) and wakes a
  // delivery thread. A job that already has one keeps it.
  void Notify(const JobRecord& job) ABSL_LOCKS_EXCLUDED(mu_);

  // For a starting server: Notify for every job of `jobs` that ended within
  // the sender's give_up_after, has a webhook_url and no outbox entry (it
  // ended just before a crash).
  absl::Status Recover(JobStore* jobs) ABSL_LOCKS_EXCLUDED(mu_);

  // Stops the sender and joins the threads; pending webhooks stay in the
  // outbox for the next start. Idempotent.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

  // The event of a terminal job: state, counts, result paths and the time it
  // reached the state.
  static WebhookEvent EventFor(const JobRecord& job);

 private:
  void DeliveryLoop() ABSL_LOCKS_EXCLUDED(mu_);
  // One attempt, and its outcome written back to the outbox.
  void AttemptOne(WebhookRecord webhook);

  WebhookSender* const sender_;
  WebhookOutbox* const outbox_;
  const Options options_;

  Mutex mu_;
  CondVar cv_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Jobs whose webhook a thread is attempting now.
  std::set<std::string> in_flight_ ABSL_GUARDED_BY(mu_);
  // Bumped by Notify and by every finished attempt: a thread that read the
  // outbox before the bump reads it again instead of sleeping.
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::thread> threads_;
};

}  // namespace ferry

#endif  // FERRY_JOBS_JOB_NOTIFIER_H_
