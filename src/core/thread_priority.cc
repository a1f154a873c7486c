// SPDX-License-Identifier: Apache-2.0
#include "core/thread_priority.h"

#include <pthread.h>
#include <sched.h>

#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "core/logging.h"

namespace ferry {
namespace {

int SetPolicy(int policy) {
  sched_param param{};
  return pthread_setschedparam(pthread_self(), policy, &param);
}

}  // namespace

bool CanRunInBackground() {
  static const bool can = [] {
    int into = 0, back = 0;
    std::thread probe([&] {
      into = SetPolicy(SCHED_IDLE);
      if (into == 0) back = SetPolicy(SCHED_OTHER);
    });
    probe.join();
    if (into != 0 || back != 0) {
      FERRY_LOG(kWarning,
                "offline work runs at normal CPU priority: this process may "
                "not move a thread to SCHED_IDLE and back (",
                std::strerror(into != 0 ? into : back),
                "; needs CAP_SYS_NICE or `ulimit -e 20`)");
    }
    return into == 0 && back == 0;
  }();
  return can;
}

void SetThreadBackground(bool background) {
  if (!CanRunInBackground()) return;
  if (int rc = SetPolicy(background ? SCHED_IDLE : SCHED_OTHER); rc != 0) {
    FERRY_LOG(kWarning,
              "cannot switch a thread's CPU policy: ", std::strerror(rc));
  }
}

void SetThreadName(std::string_view name) {
  const std::string truncated(name.substr(0, 15));
  pthread_setname_np(pthread_self(), truncated.c_str());
}

}  // namespace ferry
