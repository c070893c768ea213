// Stop a process (SIGSTOP, like a long GC pause: every thread, watchdogs
// included) and make sure it is continued (SIGCONT) whatever happens: the
// guard resumes it on destruction, so no fault leaves a process stopped.
#pragma once

#include <sys/types.h>

#include <chrono>

#include "redis/result.h"

namespace locklab::harness {

class PausedProcess {
 public:
  // SIGSTOP `pid` and wait until the kernel reports it stopped (/proc/<pid>/stat
  // state 'T'), so the caller's next step runs against a process that is frozen.
  static Result<PausedProcess> pause(pid_t pid,
                                     std::chrono::milliseconds confirm_within = std::chrono::milliseconds{2000});

  PausedProcess(PausedProcess&& other) noexcept;
  PausedProcess& operator=(PausedProcess&& other) noexcept;
  PausedProcess(const PausedProcess&) = delete;
  PausedProcess& operator=(const PausedProcess&) = delete;
  ~PausedProcess() { resume(); }

  void resume();  // SIGCONT; idempotent
  bool paused() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

 private:
  explicit PausedProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
};

// True when /proc says `pid` is stopped by a signal ('T'); false if it is not, or is gone.
bool process_stopped(pid_t pid);

}  // namespace locklab::harness
