// Stop a process (SIGSTOP, like a long GC pause: every thread, watchdogs
// included) and make sure it is continued (SIGCONT) whatever happens: the
// guard resumes it on destruction, so no fault leaves a process stopped.
//
// Process groups: a locklab client leads a group of its own, and the programs
// it starts (its lock's adapter, docs/adapters.md) are in it. A pause, a crash
// or a kill acts on the whole group and is confirmed for every member from
// /proc, so a paused client's adapter stops with it (its auto-extension too)
// and a dead client leaves no adapter behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <vector>

#include "redis/result.h"

namespace locklab::harness {

class PausedProcess {
 public:
  // SIGSTOP `pid` (its whole group when it leads one) and wait until the
  // kernel reports it, and every member of its group, stopped (/proc state
  // 'T'), so the caller's next step runs against processes that are frozen.
  static Result<PausedProcess> pause(pid_t pid,
                                     std::chrono::milliseconds confirm_within = std::chrono::milliseconds{2000});

  PausedProcess(PausedProcess&& other) noexcept;
  PausedProcess& operator=(PausedProcess&& other) noexcept;
  PausedProcess(const PausedProcess&) = delete;
  PausedProcess& operator=(const PausedProcess&) = delete;
  ~PausedProcess() { resume(); }

  void resume();  // SIGCONT (to the group when it paused one); idempotent
  bool paused() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  bool group() const { return group_; }  // the whole process group was paused
  std::size_t members() const { return members_; }  // processes confirmed stopped (the group's, or 1)

 private:
  PausedProcess(pid_t pid, bool group) : pid_(pid), group_(group) {}
  pid_t pid_ = -1;
  bool group_ = false;
  std::size_t members_ = 1;
};

// True when /proc says every thread of `pid` is stopped by a signal ('T'); false if one is not, or it is gone.
bool process_stopped(pid_t pid);

// True when `pid` leads a process group of its own (its pgid is its pid).
bool leads_group(pid_t pid);

// The members of process group `pgid` that are alive (not zombies), from /proc.
std::vector<pid_t> live_group_members(pid_t pgid);

// True when every thread of every live member of group `pgid` is stopped (and there is one).
bool group_stopped(pid_t pgid);

// SIGKILL every member of group `pgid` and wait until none is alive, reaping
// the dead members that are this process's children (except the leader, whose
// status is its parent's to read). False when a member outlived `within`.
bool kill_group(pid_t pgid, std::chrono::milliseconds within = std::chrono::milliseconds{2000});

// For a crash inside a process (a fault's step point): when this process
// leads its group and has children (its adapter), SIGKILL the whole group at
// once, itself included, so they die together (the parent reaps the orphans:
// kill_group); otherwise _exit(code) as before.
[[noreturn]] void exit_with_group(int code);

}  // namespace locklab::harness
