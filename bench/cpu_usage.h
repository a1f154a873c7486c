// SPDX-License-Identifier: Apache-2.0
// Where a benchmark's CPU time goes: the process's user and system time
// (getrusage) and per-thread CPU time read from another thread through each
// thread's CPU clock, grouped by the role the benchmark gave the thread
// (clients, batcher scheduler, engine instance threads, everything else).
//
// Used by bench/batcher_bench only. Linux-specific (/proc/self/task, per-thread
// CPU clocks). Free functions are safe to call from any thread; a thread that
// has exited reads as absent, so callers snapshot while the threads they care
// about are alive.
#ifndef FERRY_BENCH_CPU_USAGE_H_
#define FERRY_BENCH_CPU_USAGE_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ferry::bench {

// The calling thread's kernel id.
int GetTid();

struct ProcessCpu {
  double user_s = 0;
  double sys_s = 0;
  double total() const { return user_s + sys_s; }
};
ProcessCpu ProcessCpuNow();
ProcessCpu operator-(const ProcessCpu& a, const ProcessCpu& b);

// The whole machine's CPU time so far (/proc/stat): busy (user, nice, system,
// irq, softirq) and stolen by the hypervisor, in seconds over all cores.
struct MachineCpu {
  double busy_s = 0;
  double steal_s = 0;
};
MachineCpu MachineCpuNow();

// The ids of the process's threads now.
std::vector<int> ThreadIds();
// One thread's CPU time and context switches so far.
struct ThreadSample {
  double cpu_s = 0;
  int64_t voluntary_switches = 0;    // it blocked
  int64_t involuntary_switches = 0;  // it was preempted
};
// Every live thread, by id.
std::map<int, ThreadSample> ThreadSamplesNow();

// Which thread does what.
struct ThreadRoles {
  std::set<int> clients;
  std::set<int> batcher;    // started by DynamicBatcher::Create
  std::set<int> instances;  // those of them that ran the engine
};

// Per role: CPU seconds and context switches.
struct RoleUsage {
  double cpu_s = 0;
  int64_t voluntary = 0, involuntary = 0;
};
struct CpuBreakdown {
  RoleUsage clients, scheduler, instances, other;
  double total() const {
    return clients.cpu_s + scheduler.cpu_s + instances.cpu_s + other.cpu_s;
  }
};

// Usage between two ThreadSamplesNow() snapshots, by role: batcher threads that
// are not instance threads count as the scheduler; threads with no role (the
// main thread, OpenMP workers) as other.
CpuBreakdown Breakdown(const std::map<int, ThreadSample>& before,
                       const std::map<int, ThreadSample>& after,
                       const ThreadRoles& roles);

// "clients 49%, scheduler 13%, instance threads 29%, other 8%", with
// `client_word` in place of "clients".
std::string CpuShares(const CpuBreakdown& b, const std::string& client_word);
// "context switches per row: clients 1.0 (0.1 preempted), scheduler ..."
std::string SwitchesPerItem(const CpuBreakdown& b, double items,
                            const std::string& client_word);
std::string CpuJson(const CpuBreakdown& b);

}  // namespace ferry::bench

#endif  // FERRY_BENCH_CPU_USAGE_H_
