// SPDX-License-Identifier: Apache-2.0
#include "storage/memory_job_store.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "storage/job_store_checks.h"

namespace ferry {

bool MemoryJobStore::OlderThan(const JobRecord& a, const JobRecord& b) {
  if (a.created_at != b.created_at) return a.created_at < b.created_at;
  return a.id < b.id;
}

MemoryJobStore::Job* MemoryJobStore::FindJob(absl::string_view id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

absl::StatusOr<ChunkRecord*> MemoryJobStore::FindChunk(Job* job,
                                                       int64_t index) {
  if (index < 0 || index >= static_cast<int64_t>(job->chunks.size())) {
    return internal::ChunkNotFound(job->record.id, index);
  }
  return &job->chunks[index];
}

absl::Status MemoryJobStore::CreateJob(const JobRecord& job) {
  RETURN_IF_ERROR(internal::CheckJobId(job.id));
  MutexLock lock(&mu_);
  auto [it, inserted] = jobs_.try_emplace(job.id);
  if (!inserted) return internal::JobExists(job.id);
  it->second.record = job;
  return absl::OkStatus();
}

absl::StatusOr<JobRecord> MemoryJobStore::GetJob(absl::string_view id) {
  MutexLock lock(&mu_);
  Job* job = FindJob(id);
  if (job == nullptr) return internal::JobNotFound(id);
  return job->record;
}

absl::StatusOr<std::vector<JobRecord>> MemoryJobStore::ListJobs(
    int limit, absl::string_view after) {
  RETURN_IF_ERROR(internal::CheckLimit("ListJobs", limit));
  MutexLock lock(&mu_);
  const JobRecord* cursor = nullptr;
  if (!after.empty()) {
    Job* job = FindJob(after);
    if (job == nullptr) return internal::JobNotFound(after);
    cursor = &job->record;
  }
  std::vector<const JobRecord*> newer_first;
  for (const auto& [id, job] : jobs_) {
    // Strictly older than the cursor in (created_at, id) order.
    if (cursor == nullptr || OlderThan(job.record, *cursor)) {
      newer_first.push_back(&job.record);
    }
  }
  size_t n = std::min(newer_first.size(), static_cast<size_t>(limit));
  std::partial_sort(
      newer_first.begin(), newer_first.begin() + n, newer_first.end(),
      [](const JobRecord* a, const JobRecord* b) { return OlderThan(*b, *a); });
  std::vector<JobRecord> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(*newer_first[i]);
  return out;
}

absl::StatusOr<std::vector<JobRecord>> MemoryJobStore::ListJobsInStates(
    const std::vector<JobState>& states) {
  MutexLock lock(&mu_);
  std::vector<JobRecord> out;
  for (const auto& [id, job] : jobs_) {
    if (internal::StateIn(job.record.state, states)) {
      out.push_back(job.record);
    }
  }
  std::sort(out.begin(), out.end(), OlderThan);
  return out;
}

absl::Status MemoryJobStore::Transition(absl::string_view id,
                                        const std::vector<JobState>& from,
                                        JobState to, absl::Time now,
                                        absl::string_view error,
                                        int64_t add_failed) {
  RETURN_IF_ERROR(internal::CheckAddFailed(add_failed));
  MutexLock lock(&mu_);
  Job* job = FindJob(id);
  if (job == nullptr) return internal::JobNotFound(id);
  JobRecord& record = job->record;
  if (!internal::StateIn(record.state, from)) {
    return internal::TransitionRefused(id, record.state, from, to);
  }
  record.state = to;
  if (absl::Time* stamp = internal::StateTimestamp(record, to)) *stamp = now;
  if (!error.empty()) record.error = std::string(error);
  record.counts.failed += add_failed;
  return absl::OkStatus();
}

absl::Status MemoryJobStore::SetJobOptions(absl::string_view id,
                                           absl::string_view options_json) {
  MutexLock lock(&mu_);
  Job* job = FindJob(id);
  if (job == nullptr) return internal::JobNotFound(id);
  job->record.options_json = std::string(options_json);
  return absl::OkStatus();
}

absl::Status MemoryJobStore::AddChunks(absl::string_view job_id,
                                       const std::vector<ChunkRecord>& chunks) {
  MutexLock lock(&mu_);
  Job* job = FindJob(job_id);
  if (job == nullptr) return internal::JobNotFound(job_id);
  if (!job->chunks.empty()) {
    return internal::ChunksExist(job_id, job->chunks.size());
  }
  ASSIGN_OR_RETURN(int64_t total, internal::CheckNewChunks(job_id, chunks));
  job->chunks.reserve(chunks.size());
  for (const ChunkRecord& given : chunks) {
    // Only the layout is the caller's; lease state starts fresh.
    ChunkRecord& c = job->chunks.emplace_back();
    c.job_id = std::string(job_id);
    c.index = given.index;
    c.begin_offset = given.begin_offset;
    c.end_offset = given.end_offset;
    c.first_record = given.first_record;
    c.first_line = given.first_line;
    c.record_count = given.record_count;
    job->pending.insert(job->pending.end(), c.index);
  }
  job->record.counts.total = total;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ChunkRecord>> MemoryJobStore::ListChunks(
    absl::string_view job_id) {
  MutexLock lock(&mu_);
  Job* job = FindJob(job_id);
  if (job == nullptr) return internal::JobNotFound(job_id);
  return job->chunks;
}

std::optional<int64_t> MemoryJobStore::Available(const Job& job,
                                                 absl::Time now) {
  std::optional<int64_t> best;
  if (!job.pending.empty()) best = *job.pending.begin();
  // Leased chunks are few (about one per worker), so a scan is cheap.
  for (int64_t index : job.leased) {
    if (best.has_value() && index > *best) break;
    if (job.chunks[index].lease_expiry <= now) {
      best = index;
      break;
    }
  }
  return best;
}

absl::StatusOr<std::optional<ChunkRecord>> MemoryJobStore::Lease(
    absl::string_view worker, absl::Time now, absl::Duration lease,
    absl::string_view job_id) {
  RETURN_IF_ERROR(internal::CheckWorker(worker));
  MutexLock lock(&mu_);
  Job* chosen = nullptr;
  int64_t index = 0;
  for (auto& [id, job] : jobs_) {
    if (job.record.state != JobState::kInProgress) continue;
    if (!job_id.empty() && id != job_id) continue;
    if (chosen != nullptr && !OlderThan(job.record, chosen->record)) continue;
    if (std::optional<int64_t> i = Available(job, now)) {
      chosen = &job;
      index = *i;
    }
  }
  if (chosen == nullptr) return std::nullopt;
  ChunkRecord& c = chosen->chunks[index];
  chosen->pending.erase(index);
  chosen->leased.insert(index);
  c.state = ChunkState::kLeased;
  c.worker = std::string(worker);
  c.lease_expiry = now + lease;
  ++c.attempts;
  return c;
}

absl::Status MemoryJobStore::Renew(absl::string_view job_id, int64_t index,
                                   absl::string_view worker,
                                   absl::Time expiry) {
  MutexLock lock(&mu_);
  Job* job = FindJob(job_id);
  if (job == nullptr) return internal::JobNotFound(job_id);
  ASSIGN_OR_RETURN(ChunkRecord * c, FindChunk(job, index));
  RETURN_IF_ERROR(internal::CheckHolder(*c, worker, "renew"));
  c->lease_expiry = expiry;
  return absl::OkStatus();
}

absl::Status MemoryJobStore::Complete(absl::string_view job_id, int64_t index,
                                      absl::string_view worker,
                                      const ChunkResult& result) {
  RETURN_IF_ERROR(internal::CheckResult(result));
  MutexLock lock(&mu_);
  Job* job = FindJob(job_id);
  if (job == nullptr) return internal::JobNotFound(job_id);
  ASSIGN_OR_RETURN(ChunkRecord * c, FindChunk(job, index));
  RETURN_IF_ERROR(internal::CheckHolder(*c, worker, "complete"));
  job->leased.erase(index);
  c->state = ChunkState::kDone;
  c->lease_expiry = absl::InfinitePast();
  c->completed = result.completed;
  c->failed = result.failed;
  c->compute_seconds = result.compute_seconds;
  job->record.counts.completed += result.completed;
  job->record.counts.failed += result.failed;
  job->record.compute_seconds += result.compute_seconds;
  return absl::OkStatus();
}

absl::Status MemoryJobStore::Release(absl::string_view job_id, int64_t index,
                                     absl::string_view worker) {
  MutexLock lock(&mu_);
  Job* job = FindJob(job_id);
  if (job == nullptr) return internal::JobNotFound(job_id);
  ASSIGN_OR_RETURN(ChunkRecord * c, FindChunk(job, index));
  RETURN_IF_ERROR(internal::CheckHolder(*c, worker, "release"));
  job->leased.erase(index);
  job->pending.insert(index);
  c->state = ChunkState::kPending;
  c->worker.clear();
  c->lease_expiry = absl::InfinitePast();
  --c->attempts;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ChunkRecord>> MemoryJobStore::FreezeChunks(
    absl::string_view job_id) {
  MutexLock lock(&mu_);
  Job* job = FindJob(job_id);
  if (job == nullptr) return internal::JobNotFound(job_id);
  for (int64_t index : job->leased) {
    ChunkRecord& c = job->chunks[static_cast<size_t>(index)];
    c.state = ChunkState::kPending;
    c.worker.clear();
    c.lease_expiry = absl::InfinitePast();
    job->pending.insert(index);
  }
  job->leased.clear();
  return job->chunks;
}

absl::StatusOr<int64_t> MemoryJobStore::ReclaimLeases(
    absl::string_view worker_prefix) {
  MutexLock lock(&mu_);
  int64_t n = 0;
  for (auto& [id, job] : jobs_) {
    for (auto it = job.leased.begin(); it != job.leased.end();) {
      ChunkRecord& c = job.chunks[static_cast<size_t>(*it)];
      if (!absl::StartsWith(c.worker, worker_prefix)) {
        ++it;
        continue;
      }
      c.state = ChunkState::kPending;
      c.worker.clear();
      c.lease_expiry = absl::InfinitePast();
      job.pending.insert(*it);
      it = job.leased.erase(it);
      ++n;
    }
  }
  return n;
}

absl::StatusOr<ChunkProgress> MemoryJobStore::Progress(
    absl::string_view job_id) {
  MutexLock lock(&mu_);
  Job* job = FindJob(job_id);
  if (job == nullptr) return internal::JobNotFound(job_id);
  ChunkProgress p;
  p.pending = job->pending.size();
  p.leased = job->leased.size();
  p.done = job->chunks.size() - p.pending - p.leased;
  return p;
}

absl::Status MemoryJobStore::AddWebhook(const WebhookRecord& webhook) {
  MutexLock lock(&mu_);
  if (!webhooks_.emplace(webhook.job_id, webhook).second) {
    return internal::WebhookExists(webhook.job_id);
  }
  return absl::OkStatus();
}

absl::StatusOr<WebhookRecord> MemoryJobStore::GetWebhook(
    absl::string_view job_id) {
  MutexLock lock(&mu_);
  auto it = webhooks_.find(job_id);
  if (it == webhooks_.end()) {
    return internal::NoWebhook(job_id);
  }
  return it->second;
}

absl::StatusOr<std::vector<WebhookRecord>> MemoryJobStore::PendingWebhooks(
    int limit) {
  RETURN_IF_ERROR(internal::CheckLimit("PendingWebhooks", limit));
  MutexLock lock(&mu_);
  std::vector<WebhookRecord> out;
  for (const auto& [id, w] : webhooks_) {
    if (w.state == WebhookState::kPending) out.push_back(w);
  }
  std::sort(out.begin(), out.end(),
            [](const WebhookRecord& a, const WebhookRecord& b) {
              return std::tie(a.next_attempt_at, a.job_id) <
                     std::tie(b.next_attempt_at, b.job_id);
            });
  if (out.size() > static_cast<size_t>(limit)) out.resize(limit);
  return out;
}

absl::Status MemoryJobStore::UpdateWebhook(const WebhookRecord& webhook) {
  MutexLock lock(&mu_);
  auto it = webhooks_.find(webhook.job_id);
  if (it == webhooks_.end()) {
    return internal::NoWebhook(webhook.job_id);
  }
  it->second.state = webhook.state;
  it->second.attempts = webhook.attempts;
  it->second.next_attempt_at = webhook.next_attempt_at;
  it->second.last_error = webhook.last_error;
  return absl::OkStatus();
}

}  // namespace ferry
