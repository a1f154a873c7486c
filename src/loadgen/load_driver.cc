// SPDX-License-Identifier: Apache-2.0
#include "loadgen/load_driver.h"

#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <deque>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

namespace ferry {
namespace {

using SteadyClock = std::chrono::steady_clock;

double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

// What the driver shares with the transport's callbacks; outlives RunLoad
// when a drain times out (the callbacks hold it).
struct State {
  Transport* transport = nullptr;
  int64_t rows_per_request = 1;
  LatencyRecorder recorder;
  std::atomic<bool> stop{false};
  std::atomic<int64_t> in_flight{0};

  void Record(SteadyClock::time_point sent, const CallResult& r) {
    if (r.ok) {
      const double us =
          std::chrono::duration<double, std::micro>(SteadyClock::now() - sent)
              .count();
      recorder.RecordSuccess(us, rows_per_request);
    } else {
      recorder.RecordError(r.error);
    }
  }

  // Closed loop: each answer sends the next call.
  static void SendClosed(const std::shared_ptr<State>& self) {
    if (self->stop.load()) return;
    self->in_flight.fetch_add(1);
    const SteadyClock::time_point sent = SteadyClock::now();
    self->transport->Send([self, sent](CallResult r) {
      self->Record(sent, r);
      SendClosed(self);
      self->in_flight.fetch_sub(1);
    });
  }
};

struct Window {
  double seconds = 0;
  WindowSamples samples;
  double throughput() const {
    return seconds > 0 ? samples.latencies_us.size() / seconds : 0;
  }
  double mean_latency() const {
    if (samples.latencies_us.empty()) return 0;
    double sum = 0;
    for (double v : samples.latencies_us) sum += v;
    return sum / samples.latencies_us.size();
  }
};

bool Agree(const std::deque<Window>& windows, int n, double tolerance) {
  if (static_cast<int>(windows.size()) < n) return false;
  auto within = [&](auto metric) {
    double mean = 0;
    for (int i = 0; i < n; ++i) mean += metric(windows[windows.size() - 1 - i]);
    mean /= n;
    if (mean <= 0) return false;
    for (int i = 0; i < n; ++i) {
      const double v = metric(windows[windows.size() - 1 - i]);
      if (std::abs(v - mean) > tolerance * mean) return false;
    }
    return true;
  };
  return within([](const Window& w) { return w.throughput(); }) &&
         within([](const Window& w) { return w.mean_latency(); });
}

}  // namespace

LoadResult RunLoad(Transport* transport, const LoadOptions& options) {
  auto state = std::make_shared<State>();
  state->transport = transport;
  state->rows_per_request = options.rows_per_request;
  LoadResult result;

  std::thread sender;
  if (options.arrivals.has_value()) {
    result.target_rate = options.arrivals->rate;
    sender = std::thread(
        [state, arrivals = *options.arrivals, cap = options.max_in_flight] {
          ArrivalSchedule schedule(arrivals);
          const SteadyClock::time_point start = SteadyClock::now();
          while (!state->stop.load()) {
            const SteadyClock::time_point at =
                start + absl::ToChronoNanoseconds(schedule.Next());
            std::this_thread::sleep_until(at);
            if (state->stop.load()) break;
            if (state->in_flight.load() >= cap) {
              state->recorder.RecordError("generator backlog");
              continue;
            }
            state->in_flight.fetch_add(1);
            state->transport->Send([state, at](CallResult r) {
              state->Record(at, r);
              state->in_flight.fetch_sub(1);
            });
          }
        });
  } else {
    result.concurrency = options.concurrency;
    for (int i = 0; i < options.concurrency; ++i) State::SendClosed(state);
  }

  std::this_thread::sleep_for(absl::ToChronoNanoseconds(options.warmup));
  state->recorder.Take();
  std::deque<Window> windows;
  const double cpu_start = ProcessCpuSeconds();
  SteadyClock::time_point window_start = SteadyClock::now();
  const SteadyClock::time_point measure_start = window_start;
  const int keep = std::max(1, options.stable_windows);
  for (int i = 0; i < std::max(1, options.max_windows); ++i) {
    std::this_thread::sleep_for(absl::ToChronoNanoseconds(options.window));
    Window w;
    w.samples = state->recorder.Take();
    const SteadyClock::time_point now = SteadyClock::now();
    w.seconds = std::chrono::duration<double>(now - window_start).count();
    window_start = now;
    windows.push_back(std::move(w));
    ++result.windows_run;
    if (static_cast<int>(windows.size()) > keep) windows.pop_front();
    if (Agree(windows, keep, options.stability)) {
      result.stable = true;
      break;
    }
  }
  const double measured =
      std::chrono::duration<double>(SteadyClock::now() - measure_start).count();
  const double cpu = ProcessCpuSeconds() - cpu_start;

  state->stop.store(true);
  if (sender.joinable()) sender.join();
  const SteadyClock::time_point drain_end =
      SteadyClock::now() + absl::ToChronoNanoseconds(options.drain_timeout);
  while (state->in_flight.load() > 0 && SteadyClock::now() < drain_end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  result.abandoned = state->in_flight.load();

  std::vector<double> latencies;
  for (Window& w : windows) {
    result.seconds += w.seconds;
    result.rows += w.samples.rows;
    latencies.insert(latencies.end(), w.samples.latencies_us.begin(),
                     w.samples.latencies_us.end());
    for (const auto& [code, n] : w.samples.errors) {
      result.errors[code] += n;
      result.failed += n;
    }
  }
  result.windows = static_cast<int>(windows.size());
  result.requests = static_cast<int64_t>(latencies.size());
  if (result.seconds > 0) {
    result.requests_per_s = result.requests / result.seconds;
    result.rows_per_s = result.rows / result.seconds;
  }
  result.latency = Summarize(&latencies);
  if (measured > 0) result.client_cpu_cores = cpu / measured;
  return result;
}

}  // namespace ferry
