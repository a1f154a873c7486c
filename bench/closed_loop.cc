// SPDX-License-Identifier: Apache-2.0
#include "closed_loop.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"

namespace ferry::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// One client thread's state. The callback (another thread) sets `done` under
// `mu` and notifies; the client waits for it.
struct Client {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  absl::Status status;
  int tid = 0;
  std::vector<double> latency_ms;
  std::thread thread;
};

struct Shared {
  std::atomic<bool> stop{false};
  std::atomic<bool> measuring{false};
  std::atomic<int64_t> rows{0};
  std::atomic<int64_t> callback_ns{0};
  std::atomic<uint64_t> errors{0};
  std::atomic<int> started{0};
  std::mutex error_mu;
  std::string first_error;

  void NoteError(const absl::Status& s) {
    errors.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> l(error_mu);
    if (first_error.empty()) first_error = s.ToString();
  }
};

void ClientLoop(Client* c, int index, EnqueueFn enqueue, const Rows& rows,
                const std::string& input, Shared* shared) {
  c->tid = GetTid();
  shared->started.fetch_add(1);
  int64_t next = static_cast<int64_t>(index) * 997;
  while (!shared->stop.load(std::memory_order_relaxed)) {
    auto r = std::make_unique<Request>();
    absl::StatusOr<Tensor> t = Tensor::FromValues<float>(
        input, {1, rows.features},
        absl::MakeConstSpan(rows.row(next++), rows.features));
    if (!t.ok()) {
      shared->NoteError(t.status());
      return;
    }
    r->inputs.push_back(*std::move(t));
    r->done = [c, shared](absl::StatusOr<std::vector<Tensor>> result) {
      const auto start = SteadyClock::now();
      {
        std::lock_guard<std::mutex> l(c->mu);
        c->status = result.status();
        c->done = true;
      }
      c->cv.notify_one();
      shared->callback_ns.fetch_add(
          std::chrono::duration_cast<std::chrono::nanoseconds>(
              SteadyClock::now() - start)
              .count(),
          std::memory_order_relaxed);
    };
    const auto sent = SteadyClock::now();
    absl::Status s = enqueue(&r);
    if (!s.ok()) {
      shared->NoteError(s);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    absl::Status result;
    {
      std::unique_lock<std::mutex> l(c->mu);
      c->cv.wait(l, [c] { return c->done; });
      c->done = false;
      result = std::move(c->status);
    }
    if (!result.ok()) {
      shared->NoteError(result);
      continue;
    }
    shared->rows.fetch_add(1, std::memory_order_relaxed);
    if (shared->measuring.load(std::memory_order_relaxed)) {
      c->latency_ms.push_back(
          std::chrono::duration<double, std::milli>(SteadyClock::now() - sent)
              .count());
    }
  }
}

// A logical client (drivers mode). `sent` and the row counter belong to the
// driver that sends; the callback appends to latency_ms. The two never overlap
// for one client: the callback runs after the send and before the next one
// (ordered through Pool::mu).
struct LogicalClient {
  int64_t next = 0;
  SteadyClock::time_point sent;
  std::vector<double> latency_ms;
};

// Clients ready to send their next request.
struct Pool {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int> ready;

  void Put(int id) {
    bool was_empty;
    {
      std::lock_guard<std::mutex> l(mu);
      was_empty = ready.empty();
      ready.push_back(id);
    }
    if (was_empty) cv.notify_one();
  }
};

void DriverLoop(std::vector<LogicalClient>* clients, Pool* pool,
                EnqueueFn enqueue, const Rows& rows, const std::string& input,
                Shared* shared, int* tid) {
  *tid = GetTid();
  shared->started.fetch_add(1);
  std::vector<int> mine;
  while (!shared->stop.load(std::memory_order_relaxed)) {
    {
      std::unique_lock<std::mutex> l(pool->mu);
      pool->cv.wait_for(l, std::chrono::milliseconds(10), [&] {
        return !pool->ready.empty() || shared->stop.load();
      });
      mine.swap(pool->ready);
    }
    for (int id : mine) {
      LogicalClient& c = (*clients)[id];
      auto r = std::make_unique<Request>();
      absl::StatusOr<Tensor> t = Tensor::FromValues<float>(
          input, {1, rows.features},
          absl::MakeConstSpan(rows.row(c.next++), rows.features));
      if (!t.ok()) {
        shared->NoteError(t.status());
        return;
      }
      r->inputs.push_back(*std::move(t));
      r->done = [&c, id, pool,
                 shared](absl::StatusOr<std::vector<Tensor>> result) {
        const auto start = SteadyClock::now();
        if (!result.ok()) {
          shared->NoteError(result.status());
        } else {
          shared->rows.fetch_add(1, std::memory_order_relaxed);
          if (shared->measuring.load(std::memory_order_relaxed)) {
            c.latency_ms.push_back(
                std::chrono::duration<double, std::milli>(start - c.sent)
                    .count());
          }
        }
        pool->Put(id);
        shared->callback_ns.fetch_add(
            std::chrono::duration_cast<std::chrono::nanoseconds>(
                SteadyClock::now() - start)
                .count(),
            std::memory_order_relaxed);
      };
      c.sent = SteadyClock::now();
      absl::Status s = enqueue(&r);
      if (!s.ok()) {
        shared->NoteError(s);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        pool->Put(id);
      }
    }
    mine.clear();
  }
}

}  // namespace

absl::StatusOr<Rows> LoadRows(const std::string& path, int64_t features) {
  Rows rows;
  rows.features = features;
  if (features <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("rows: features must be positive, got ", features));
  }
  if (!path.empty()) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      return absl::NotFoundError(
          absl::StrCat("--rows '", path, "': cannot open"));
    }
    std::string bytes((std::istreambuf_iterator<char>(in)),
                      std::istreambuf_iterator<char>());
    const size_t row_bytes = static_cast<size_t>(features) * sizeof(float);
    if (bytes.empty() || bytes.size() % row_bytes != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--rows '", path, "': ", bytes.size(),
          " bytes is not a whole number of ", features, "-float rows"));
    }
    rows.values.resize(bytes.size() / sizeof(float));
    std::memcpy(rows.values.data(), bytes.data(), bytes.size());
    return rows;
  }
  uint64_t state = 0x9E3779B97F4A7C15ull;
  rows.values.resize(static_cast<size_t>(4096 * features));
  for (float& v : rows.values) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<float>(state >> 40) / static_cast<float>(1 << 24) * 100.0f;
  }
  return rows;
}

absl::StatusOr<Tensor> BatchOf(const std::string& name, const Rows& rows,
                               int64_t first, int64_t batch) {
  std::vector<float> values;
  values.reserve(static_cast<size_t>(batch * rows.features));
  for (int64_t i = 0; i < batch; ++i) {
    const float* r = rows.row(first + i);
    values.insert(values.end(), r, r + rows.features);
  }
  return Tensor::FromValues<float>(name, {batch, rows.features}, values);
}

ClosedLoopWindow RunClosedLoop(EnqueueFn enqueue, const Rows& rows,
                               const ClosedLoopOptions& opts,
                               ThreadRoles* roles,
                               absl::FunctionRef<void()> at_start,
                               absl::FunctionRef<void()> at_end,
                               absl::FunctionRef<void()> stop_queue) {
  Shared shared;
  std::vector<std::unique_ptr<Client>> clients;  // client threads
  std::vector<LogicalClient> logical;            // or logical clients
  Pool pool;
  std::vector<int> driver_tids(opts.drivers, 0);
  std::vector<std::thread> drivers;
  if (opts.drivers == 0) {
    for (int k = 0; k < opts.clients; ++k) {
      clients.push_back(std::make_unique<Client>());
      Client* c = clients.back().get();
      c->latency_ms.reserve(static_cast<size_t>(opts.duration_s * 1000));
      c->thread = std::thread(ClientLoop, c, k, enqueue, std::cref(rows),
                              std::cref(opts.input), &shared);
    }
  } else {
    logical.resize(opts.clients);
    for (int k = 0; k < opts.clients; ++k) {
      logical[k].next = static_cast<int64_t>(k) * 997;
      logical[k].latency_ms.reserve(
          static_cast<size_t>(opts.duration_s * 1000));
      pool.ready.push_back(k);
    }
    for (int d = 0; d < opts.drivers; ++d) {
      drivers.emplace_back(DriverLoop, &logical, &pool, enqueue,
                           std::cref(rows), std::cref(opts.input), &shared,
                           &driver_tids[d]);
    }
  }
  const int threads = opts.drivers == 0 ? opts.clients : opts.drivers;
  while (shared.started.load() < threads) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (const auto& c : clients) roles->clients.insert(c->tid);
  for (int tid : driver_tids) roles->clients.insert(tid);

  std::this_thread::sleep_for(std::chrono::duration<double>(opts.warmup_s));
  at_start();
  const int64_t rows0 = shared.rows.load();
  const int64_t cb0 = shared.callback_ns.load();
  const auto threads0 = ThreadSamplesNow();
  const ProcessCpu cpu0 = ProcessCpuNow();
  const auto start = SteadyClock::now();
  shared.measuring.store(true);
  std::this_thread::sleep_for(std::chrono::duration<double>(opts.duration_s));
  shared.measuring.store(false);
  ClosedLoopWindow w;
  w.wall_s = SecondsSince(start);
  w.cpu = ProcessCpuNow() - cpu0;
  const auto threads1 = ThreadSamplesNow();
  w.rows = shared.rows.load() - rows0;
  w.callback_s = 1e-9 * static_cast<double>(shared.callback_ns.load() - cb0);
  at_end();
  shared.stop.store(true);
  for (auto& c : clients) c->thread.join();
  for (auto& d : drivers) d.join();
  stop_queue();
  w.threads = Breakdown(threads0, threads1, *roles);
  for (const auto& c : clients) {
    w.latency_ms.insert(w.latency_ms.end(), c->latency_ms.begin(),
                        c->latency_ms.end());
  }
  for (const auto& c : logical) {
    w.latency_ms.insert(w.latency_ms.end(), c.latency_ms.begin(),
                        c.latency_ms.end());
  }
  w.errors = shared.errors.load();
  w.first_error = shared.first_error;
  return w;
}

DirectQueue::DirectQueue(std::vector<Engine*> engines, int64_t max_rows)
    : engines_(std::move(engines)), max_rows_(std::max<int64_t>(1, max_rows)) {
  const size_t n = std::max<size_t>(1, engines_.size());
  std::vector<int> tids(n, 0);
  std::atomic<size_t> started{0};
  absl::Notification all_started;
  for (size_t i = 0; i < n; ++i) {
    Engine* engine = engines_.empty() ? nullptr : engines_[i];
    workers_.emplace_back([this, engine, i, n, &tids, &started, &all_started] {
      tids[i] = GetTid();
      if (started.fetch_add(1) + 1 == n) all_started.Notify();
      Loop(engine);
    });
  }
  all_started.WaitForNotification();
  worker_tids_ = tids;
}

DirectQueue::~DirectQueue() { Stop(); }

void DirectQueue::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) {
    if (t.joinable()) t.join();
  }
}

absl::Status DirectQueue::Enqueue(std::unique_ptr<Request>* request) {
  {
    std::lock_guard<std::mutex> l(mu_);
    queue_.push_back(std::move(*request));
  }
  cv_.notify_one();
  return absl::OkStatus();
}

void DirectQueue::Loop(Engine* engine) {
  std::vector<std::unique_ptr<Request>> batch;
  while (true) {
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      const size_t n =
          engine == nullptr
              ? queue_.size()
              : std::min(queue_.size(), static_cast<size_t>(max_rows_));
      for (size_t i = 0; i < n; ++i) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    if (engine == nullptr) {
      for (auto& r : batch) r->done(std::vector<Tensor>());
    } else {
      Run(*engine, batch);
    }
    batch.clear();
  }
}

void DirectQueue::Run(Engine& engine,
                      std::vector<std::unique_ptr<Request>>& batch) {
  const Tensor& first = batch[0]->inputs[0];
  const int64_t features = first.shape()[1];
  const int64_t n = static_cast<int64_t>(batch.size());
  std::vector<float> values;
  values.reserve(static_cast<size_t>(n * features));
  for (const auto& r : batch) {
    absl::Span<const float> v = r->inputs[0].values<float>();
    values.insert(values.end(), v.begin(), v.end());
  }
  absl::StatusOr<Tensor> input =
      Tensor::FromValues<float>(first.name(), {n, features}, values);
  const auto start = SteadyClock::now();
  absl::StatusOr<std::vector<Tensor>> out =
      input.ok() ? engine.Run(absl::MakeConstSpan(&*input, 1))
                 : absl::StatusOr<std::vector<Tensor>>(input.status());
  compute_ns_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(
                            SteadyClock::now() - start)
                            .count());
  batches_.fetch_add(1);
  rows_.fetch_add(n);
  if (!out.ok()) {
    for (auto& r : batch) r->done(out.status());
    return;
  }
  const Tensor& y = (*out)[0];
  const int64_t width = y.shape()[1];
  absl::Span<const float> all = y.values<float>();
  for (int64_t i = 0; i < n; ++i) {
    std::vector<Tensor> mine;
    absl::StatusOr<Tensor> t =
        Tensor::FromValues<float>(y.name(), {1, width},
                                  all.subspan(static_cast<size_t>(i * width),
                                              static_cast<size_t>(width)));
    if (!t.ok()) {
      batch[i]->done(t.status());
      continue;
    }
    mine.push_back(*std::move(t));
    batch[i]->done(std::move(mine));
  }
}

}  // namespace ferry::bench
