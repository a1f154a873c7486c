// SPDX-License-Identifier: Apache-2.0
#include "cpu_usage.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ferry::bench {
namespace {

double Seconds(const timeval& t) {
  return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
}

// The clock id pthread_getcpuclockid() builds for a thread: ~tid << 3 |
// CPUCLOCK_SCHED (2) | CPUCLOCK_PERTHREAD (4). Any thread of the process may
// read it.
double ThreadCpuSeconds(int tid) {
  const clockid_t id =
      static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6u);
  timespec ts{};
  if (clock_gettime(id, &ts) != 0) return -1;  // the thread is gone
  return static_cast<double>(ts.tv_sec) +
         1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

int GetTid() { return static_cast<int>(syscall(SYS_gettid)); }

ProcessCpu ProcessCpuNow() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return {Seconds(u.ru_utime), Seconds(u.ru_stime)};
}

ProcessCpu operator-(const ProcessCpu& a, const ProcessCpu& b) {
  return {a.user_s - b.user_s, a.sys_s - b.sys_s};
}

MachineCpu MachineCpuNow() {
  MachineCpu m;
  std::ifstream stat("/proc/stat");
  std::string cpu;
  // cpu user nice system idle iowait irq softirq steal ...
  double v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if (!(stat >> cpu) || cpu != "cpu") return m;
  for (double& x : v) stat >> x;
  const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  m.busy_s = (v[0] + v[1] + v[2] + v[5] + v[6]) * tick;
  m.steal_s = v[7] * tick;
  return m;
}

std::vector<int> ThreadIds() {
  std::vector<int> tids;
  std::error_code ec;
  for (const auto& e :
       std::filesystem::directory_iterator("/proc/self/task", ec)) {
    tids.push_back(std::atoi(e.path().filename().c_str()));
  }
  return tids;
}

std::map<int, ThreadSample> ThreadSamplesNow() {
  std::map<int, ThreadSample> out;
  for (int tid : ThreadIds()) {
    ThreadSample s;
    s.cpu_s = ThreadCpuSeconds(tid);
    if (s.cpu_s < 0) continue;
    std::ifstream status(absl::StrCat("/proc/self/task/", tid, "/status"));
    std::string line;
    while (std::getline(status, line)) {
      if (absl::StartsWith(line, "voluntary_ctxt_switches:")) {
        s.voluntary_switches = std::atoll(line.c_str() + 24);
      } else if (absl::StartsWith(line, "nonvoluntary_ctxt_switches:")) {
        s.involuntary_switches = std::atoll(line.c_str() + 27);
      }
    }
    out[tid] = s;
  }
  return out;
}

CpuBreakdown Breakdown(const std::map<int, ThreadSample>& before,
                       const std::map<int, ThreadSample>& after,
                       const ThreadRoles& roles) {
  CpuBreakdown b;
  for (const auto& [tid, end] : after) {
    auto it = before.find(tid);
    const ThreadSample start = it == before.end() ? ThreadSample{} : it->second;
    RoleUsage* role = &b.other;
    if (roles.clients.count(tid)) {
      role = &b.clients;
    } else if (roles.instances.count(tid)) {
      role = &b.instances;
    } else if (roles.batcher.count(tid)) {
      role = &b.scheduler;
    }
    role->cpu_s += end.cpu_s - start.cpu_s;
    role->voluntary += end.voluntary_switches - start.voluntary_switches;
    role->involuntary += end.involuntary_switches - start.involuntary_switches;
  }
  return b;
}

std::string CpuShares(const CpuBreakdown& b, const std::string& client_word) {
  const double t = b.total();
  if (t <= 0) return "no CPU recorded";
  auto pct = [t](double x) { return 100.0 * x / t; };
  return absl::StrFormat(
      "%s %.0f%%, scheduler %.0f%%, instance threads %.0f%%, other %.0f%%",
      client_word, pct(b.clients.cpu_s), pct(b.scheduler.cpu_s),
      pct(b.instances.cpu_s), pct(b.other.cpu_s));
}

std::string SwitchesPerItem(const CpuBreakdown& b, double items,
                            const std::string& client_word) {
  if (items <= 0) return "no items";
  auto one = [items](const char* name, const RoleUsage& r) {
    return absl::StrFormat(
        "%s %.2f (%.2f preempted)", name,
        static_cast<double>(r.voluntary + r.involuntary) / items,
        static_cast<double>(r.involuntary) / items);
  };
  return absl::StrCat(
      one(client_word.c_str(), b.clients), ", ", one("scheduler", b.scheduler),
      ", ", one("instance threads", b.instances), ", ", one("other", b.other));
}

std::string CpuJson(const CpuBreakdown& b) {
  auto one = [](const RoleUsage& r) {
    return absl::StrFormat(
        "{\"cpu_s\":%.4f,\"voluntary_switches\":%d,"
        "\"involuntary_switches\":%d}",
        r.cpu_s, r.voluntary, r.involuntary);
  };
  return absl::StrCat(
      "{\"clients\":", one(b.clients), ",\"scheduler\":", one(b.scheduler),
      ",\"instances\":", one(b.instances), ",\"other\":", one(b.other), "}");
}

}  // namespace ferry::bench
