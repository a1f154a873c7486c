// SPDX-License-Identifier: Apache-2.0
#include "jobs/input_fetcher.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "gtest/gtest.h"
#include "test_util/temp_dir.h"

namespace ferry {
namespace {

namespace fs = std::filesystem;

// Records how each job's download ended; waits (real time, bounded) for it.
class Outcomes {
 public:
  InputFetcher::DoneFn Fn() {
    return [this](const std::string& id, const absl::Status& s) {
      MutexLock lock(&mu_);
      ended_[id].push_back(s);
      cv_.SignalAll();
    };
  }
  absl::Status Wait(const std::string& id) {
    const absl::Time give_up = absl::Now() + absl::Seconds(20);
    MutexLock lock(&mu_);
    while (ended_[id].empty()) {
      if (cv_.WaitWithDeadline(&mu_, give_up)) {
        return absl::DeadlineExceededError("no outcome for " + id);
      }
    }
    return ended_[id].front();
  }
  size_t Count(const std::string& id) {
    MutexLock lock(&mu_);
    return ended_[id].size();
  }

 private:
  Mutex mu_;
  CondVar cv_;
  std::map<std::string, std::vector<absl::Status>> ended_ ABSL_GUARDED_BY(mu_);
};

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A fetch that counts its calls and always answers `answer`.
InputFetcher::FetchFn Failing(std::atomic<int>* calls, absl::Status answer) {
  return [calls, answer](const std::string&, const std::string&,
                         std::function<bool()>) {
    ++*calls;
    return answer;
  };
}

// Waits (real time, bounded) until `calls` reaches `n`.
void WaitForCalls(const std::atomic<int>& calls, int n) {
  for (int i = 0; i < 20000 && calls < n; ++i) {
    absl::SleepFor(absl::Milliseconds(1));
  }
}

TEST(InputFetcherTest, ASlowDownloadDoesNotHoldUpAnother) {
  testing::TempDir dir;
  std::atomic<bool> release{false};
  Outcomes outcomes;
  InputFetcher fetcher(
      [&](const std::string& url, const std::string& path,
          std::function<bool()> stop) -> absl::Status {
        // "slow" holds its thread until released; "fast" is written at once.
        while (url == "http://h/slow" && !release && !stop()) {
          absl::SleepFor(absl::Milliseconds(1));
        }
        Write(path, url);
        return absl::OkStatus();
      },
      RealClock::Get(), 2, outcomes.Fn());
  const std::string slow = (dir.path() / "slow.csv").string();
  const std::string fast = (dir.path() / "fast.csv").string();
  fetcher.Add("a", "http://h/slow", slow);
  fetcher.Add("b", "http://h/fast", fast);
  EXPECT_TRUE(outcomes.Wait("b").ok());
  EXPECT_EQ(Read(fast), "http://h/fast");  // renamed into place, whole
  EXPECT_FALSE(fs::exists(fast + ".download"));
  EXPECT_EQ(outcomes.Count("a"), 0u);  // still downloading
  release = true;
  EXPECT_TRUE(outcomes.Wait("a").ok());
  EXPECT_EQ(Read(slow), "http://h/slow");
}

TEST(InputFetcherTest, AJobQueuedOrRunningIsNotAddedTwice) {
  testing::TempDir dir;
  std::atomic<int> calls{0};
  std::atomic<bool> release{false};
  Outcomes outcomes;
  InputFetcher fetcher(
      [&](const std::string&, const std::string& path,
          std::function<bool()>) -> absl::Status {
        ++calls;
        while (!release) absl::SleepFor(absl::Milliseconds(1));
        Write(path, "x");
        return absl::OkStatus();
      },
      RealClock::Get(), 2, outcomes.Fn());
  const std::string path = (dir.path() / "in.csv").string();
  fetcher.Add("a", "http://h/in", path);  // queued, maybe running
  WaitForCalls(calls, 1);
  fetcher.Add("a", "http://h/in", path);  // running: ignored
  release = true;
  EXPECT_TRUE(outcomes.Wait("a").ok());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(outcomes.Count("a"), 1u);
  EXPECT_EQ(Read(path), "x");
}

TEST(InputFetcherTest, TransientErrorsAreTriedThreeTimesOnTheClock) {
  testing::TempDir dir;
  FakeClock clock;
  std::atomic<int> calls{0};
  Outcomes outcomes;
  InputFetcher fetcher(
      [&](const std::string&, const std::string& path,
          std::function<bool()>) -> absl::Status {
        Write(path, "part");  // a partial body, then the failure
        ++calls;
        return absl::UnavailableError("GET http://h/in: HTTP 503");
      },
      &clock, 1, outcomes.Fn());
  const std::string path = (dir.path() / "in.csv").string();
  const absl::Time start = clock.Now();
  // Waits (real time, bounded) until `n` attempts were made and the fetch
  // thread sleeps on the clock.
  auto attempts_then_sleep = [&](int n) {
    WaitForCalls(calls, n);
    clock.BlockUntilWaiters(1);
    return calls.load();
  };
  fetcher.Add("a", "http://h/in", path);
  EXPECT_EQ(attempts_then_sleep(1), 1);  // waiting 1 s
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(attempts_then_sleep(2), 2);  // waiting 2 s
  clock.Advance(absl::Seconds(2));
  const absl::Status s = outcomes.Wait("a");
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(clock.Now() - start, absl::Seconds(3));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), "input_url: GET http://h/in")) << s;
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".download"));  // the partial is removed
}

TEST(InputFetcherTest, StopCutsAWaitBetweenAttemptsShort) {
  testing::TempDir dir;
  std::atomic<int> calls{0};
  Outcomes outcomes;
  InputFetcher fetcher(
      Failing(&calls, absl::UnavailableError("GET http://h/in: HTTP 503")),
      RealClock::Get(), 1, outcomes.Fn());
  fetcher.Add("a", "http://h/in", (dir.path() / "in.csv").string());
  WaitForCalls(calls, 1);
  const absl::Time start = absl::Now();
  fetcher.Stop();  // during the 1 s wait after the first attempt
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(500));
  EXPECT_EQ(outcomes.Wait("a").code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(calls, 1);
}

TEST(InputFetcherTest, OtherErrorsAreFinalAtOnce) {
  testing::TempDir dir;
  std::atomic<int> calls{0};
  Outcomes outcomes;
  InputFetcher fetcher(Failing(&calls, absl::FailedPreconditionError(
                                           "GET http://h/in: HTTP 404")),
                       RealClock::Get(), 1, outcomes.Fn());
  fetcher.Add("a", "http://h/in", (dir.path() / "in.csv").string());
  const absl::Status s = outcomes.Wait("a");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_EQ(calls, 1);
}

TEST(InputFetcherTest, StopAbandonsRunningDownloadsAndDropsQueuedOnes) {
  testing::TempDir dir;
  std::atomic<int> calls{0};
  Outcomes outcomes;
  InputFetcher fetcher(
      [&](const std::string&, const std::string& path,
          std::function<bool()> stop) -> absl::Status {
        ++calls;
        Write(path, "part");
        while (!stop()) absl::SleepFor(absl::Milliseconds(1));
        return absl::CancelledError("abandoned");
      },
      RealClock::Get(), 1, outcomes.Fn());
  const std::string a = (dir.path() / "a.csv").string();
  fetcher.Add("a", "http://h/a", a);
  fetcher.Add("b", "http://h/b", (dir.path() / "b.csv").string());
  WaitForCalls(calls, 1);
  fetcher.Stop();
  EXPECT_EQ(outcomes.Wait("a").code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(outcomes.Count("b"), 0u);  // dropped, never started
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(fs::exists(a + ".download"));
  // Stopped, it takes nothing; started again, it does.
  fetcher.Add("c", "http://h/c", (dir.path() / "c.csv").string());
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(calls, 1);
  fetcher.Start();
  fetcher.Add("c", "http://h/c", (dir.path() / "c.csv").string());
  WaitForCalls(calls, 2);
  EXPECT_EQ(calls, 2);
  fetcher.Stop();
  EXPECT_EQ(outcomes.Wait("c").code(), absl::StatusCode::kCancelled);
}

TEST(InputFetcherTest, CancelEndsThatJobsDownloadOnly) {
  testing::TempDir dir;
  std::atomic<int> calls{0};
  Outcomes outcomes;
  InputFetcher fetcher(
      [&](const std::string& url, const std::string& path,
          std::function<bool()> stop) -> absl::Status {
        ++calls;
        Write(path, "part");
        while (!stop()) absl::SleepFor(absl::Milliseconds(1));
        return absl::CancelledError(url + ": abandoned");
      },
      RealClock::Get(), 1, outcomes.Fn());
  fetcher.Add("a", "http://h/a", (dir.path() / "a.csv").string());
  fetcher.Add("b", "http://h/b", (dir.path() / "b.csv").string());
  fetcher.Add("c", "http://h/c", (dir.path() / "c.csv").string());
  WaitForCalls(calls, 1);  // "a" runs, "b" and "c" wait (one thread)
  fetcher.Cancel("b");     // queued: dropped
  fetcher.Cancel("a");     // running: stops
  EXPECT_EQ(outcomes.Wait("a").code(), absl::StatusCode::kCancelled);
  EXPECT_FALSE(fs::exists(dir.path() / "a.csv.download"));
  WaitForCalls(calls, 2);    // "c" next, not "b"
  fetcher.Cancel("nobody");  // no such download: nothing happens
  EXPECT_EQ(outcomes.Count("c"), 0u);
  fetcher.Cancel("c");
  EXPECT_EQ(outcomes.Wait("c").code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(outcomes.Count("b"), 0u);
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace ferry
