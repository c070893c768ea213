// Stop a process (SIGSTOP, like a long GC pause: every thread, watchdogs
// included) and make sure it is continued (SIGCONT) whatever happens: the
// guard resumes it on destruction, so no fault leaves a process stopped.
//
// Process groups: a locklab client leads a group of its own, and the programs
// it starts (its lock's adapter, docs/adapters.md) are in it. A pause, a crash
// or a kill acts on the whole group and is confirmed for every member from
// /proc, so a paused client's adapter stops with it (its auto-extension too)
// and a dead client leaves no adapter behind.
//
// A process group does not reach a process that called setsid(). Where a
// client runs in a cgroup of its own (client_cgroup.h), a pause freezes the
// cgroup instead (every process in it, whatever its session; confirmed from
// cgroup.events or freezer.state: a frozen process does not show 'T'), and a
// crash kills the cgroup. Without one, everything is as described above.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <vector>

#include "redis/result.h"

#include "support/client_cgroup.h"

namespace locklab::harness {

class PausedProcess {
 public:
  // SIGSTOP `pid` (its whole group when it leads one) and wait until the
  // kernel reports it, and every member of its group, stopped (/proc state
  // 'T'), so the caller's next step runs against processes that are frozen.
  // When `pid` is in a locklab client cgroup, freeze that cgroup instead and
  // wait until the kernel reports it frozen.
  static Result<PausedProcess> pause(pid_t pid,
                                     std::chrono::milliseconds confirm_within = std::chrono::milliseconds{2000});

  PausedProcess(PausedProcess&& other) noexcept;
  PausedProcess& operator=(PausedProcess&& other) noexcept;
  PausedProcess(const PausedProcess&) = delete;
  PausedProcess& operator=(const PausedProcess&) = delete;
  ~PausedProcess() { resume(); }

  void resume();  // SIGCONT (to the group when it paused one), or thaws the cgroup; idempotent
  bool paused() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  bool group() const { return group_; }  // the whole process group was paused
  std::size_t members() const { return members_; }  // processes confirmed stopped (the group's or cgroup's, or 1)
  const std::optional<ClientCgroup>& cgroup() const { return cgroup_; }  // the cgroup it froze, if any

 private:
  PausedProcess(pid_t pid, bool group) : pid_(pid), group_(group) {}
  pid_t pid_ = -1;
  bool group_ = false;
  std::size_t members_ = 1;
  std::optional<ClientCgroup> cgroup_;
};

// True when /proc says every thread of `pid` is stopped by a signal ('T'); false if one is not, or it is gone.
bool process_stopped(pid_t pid);

// True when `pid` leads a process group of its own (its pgid is its pid).
bool leads_group(pid_t pid);

// The members of process group `pgid` that are alive (not zombies), from /proc.
std::vector<pid_t> live_group_members(pid_t pgid);

// True when every thread of every live member of group `pgid` is stopped (and there is one).
bool group_stopped(pid_t pgid);

// Every live process of client `pid`: its cgroup's when it has one (setsid
// children included), else its process group's.
std::vector<pid_t> client_members(pid_t pid);

// A live process in the tree under `root` (`root` included; by parent links
// in /proc) whose process group is not `pgid`: a process a signal to the
// group would not reach. nullopt when every one is in it.
std::optional<pid_t> tree_member_outside(pid_t root, pid_t pgid);

// SIGKILL every member of group `pgid` and wait until none is alive, reaping
// the dead members that are this process's children (except the leader, whose
// status is its parent's to read). False when a member outlived `within`.
bool kill_group(pid_t pgid, std::chrono::milliseconds within = std::chrono::milliseconds{2000});

// For a crash inside a process (a fault's step point): in a locklab client
// cgroup, kill the whole cgroup (cgroup.kill, at once, itself included; the v1
// freezer: SIGKILL every other process in it first). Then, when this process
// leads its group and has children (its adapter), SIGKILL the whole group at
// once, itself included, so they die together (the parent reaps the orphans:
// kill_group); otherwise _exit(code) as before.
[[noreturn]] void exit_with_group(int code);

}  // namespace locklab::harness
