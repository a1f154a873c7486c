// SPDX-License-Identifier: Apache-2.0
// Background CPU priority for a thread: SCHED_IDLE runs it only on CPU time no
// other thread wants. Offline work (job workers' parsing, offline batches'
// engine calls while online requests are about) uses it so that online
// latency does not suffer.
#ifndef FERRY_CORE_THREAD_PRIORITY_H_
#define FERRY_CORE_THREAD_PRIORITY_H_

#include <string_view>

namespace ferry {

// Whether this process may move a thread to SCHED_IDLE and back to
// SCHED_OTHER. Leaving SCHED_IDLE needs CAP_SYS_NICE or an RLIMIT_NICE that
// allows nice 0 (sched(7)); an unprivileged process with the default limit
// would stay stuck in SCHED_IDLE. Probed once, in a throwaway thread.
bool CanRunInBackground();

// Moves the calling thread to SCHED_IDLE (true) or back to SCHED_OTHER
// (false). Does nothing when CanRunInBackground() is false (logged once).
void SetThreadBackground(bool background);

// Names the calling thread for `top -H`, `ps -L`, perf and gdb: `name`
// truncated to the kernel's 15 bytes.
void SetThreadName(std::string_view name);

}  // namespace ferry

#endif  // FERRY_CORE_THREAD_PRIORITY_H_
