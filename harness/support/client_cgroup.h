// A cgroup per client process, where the machine allows it (issue 25, "the
// fault reaches the whole client"). A process group does not hold a client
// together: an adapter that calls setsid() (a watchdog in its own session)
// escapes every signal sent to the group. A cgroup does: whatever a process in
// it starts, setsid or not, is born in it, and the kernel freezes or kills the
// whole cgroup at once.
//
// Probed, never assumed: the mounts come from /proc/self/mountinfo, and a test
// cgroup is made to see that the files we need exist in it. Preferred: cgroup2
// (`cgroup.freeze`, confirmed by "frozen 1" in `cgroup.events`; `cgroup.kill`),
// then the v1 freezer (`freezer.state`). Without either the faults act on the
// process group as before (process_control.h).
//
// Layout: <mount><our cgroup>/locklab/run-<pid>-<n>/client-<i>. A run's
// cgroups are removed when its CgroupRun ends; a run that could not clean up
// (SIGKILL, Ctrl-C) is cleaned by the next one (its owner pid is gone).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "redis/result.h"

namespace locklab::harness {

enum class CgroupKind { none, cgroup2, cgroup1_freezer };

// "cgroup2", "cgroup1-freezer", or "process-group" for none (what the faults then use).
const char* isolation_name(CgroupKind kind);

// One client's cgroup: a directory on a cgroup2 mount or under the v1 freezer.
class ClientCgroup {
 public:
  ClientCgroup(CgroupKind kind, std::string path) : kind_(kind), path_(std::move(path)) {}
  CgroupKind kind() const { return kind_; }
  const std::string& path() const { return path_; }

  Status join(pid_t pid) const;  // moves `pid` (0: the caller) into it; async-signal-safe but for the error text
  std::vector<pid_t> pids() const;  // its live processes (zombies are not listed)
  Status freeze() const;
  Status thaw() const;
  bool frozen() const;  // the kernel says the freeze is complete ("frozen 1" / FROZEN)
  // SIGKILLs every process in it (cgroup.kill, or each pid until none is left)
  // and waits until it is empty, reaping those that were our children (an
  // orphaned adapter re-parented to us, the subreaper) but `keep`, whose status
  // its caller reads. False when a process outlived `within`.
  bool kill_all(std::chrono::milliseconds within = std::chrono::milliseconds{2000}, pid_t keep = 0) const;
  // cgroup2 only: kill at once, without waiting (a crash from inside: kills the caller too).
  bool kill_now() const;

 private:
  CgroupKind kind_;
  std::string path_;
};

// What the probe found: the kind to use, why (one line for the run document),
// and where locklab's cgroups go ("" when kind is none).
struct CgroupProbe {
  CgroupKind kind = CgroupKind::none;
  std::string why;
  std::string base;  // <mount><our cgroup>/locklab
};
CgroupProbe probe_cgroups();

// True when a run's client processes get cgroups here (probed once; false
// when LOCKLAB_NO_CGROUP is set, see CgroupRun::create).
bool client_cgroups_usable();
bool no_cgroup_asked();  // LOCKLAB_NO_CGROUP is set (not empty)

// The locklab client cgroup `pid` is in, if any (from /proc/PID/cgroup): a
// client-* directory under a run-* directory under locklab, on a probed mount.
std::optional<ClientCgroup> client_cgroup_of(pid_t pid);

// From a signal handler (async-signal-safe): kills every live client cgroup of
// this process (cgroup.kill; under the v1 freezer each member, then a thaw, so
// a frozen client dies too), so a Ctrl-C leaves no setsid watchdog behind
// (the servers' signal guard calls it; the cgroups go with the next run).
void kill_live_client_cgroups();

// One run's cgroups. Move-only; the destructor kills whatever is left in its
// client cgroups and removes them (RAII: errors and early returns included).
class CgroupRun {
 public:
  // Kind none (and why) when the machine gives no usable cgroup, or when the
  // environment sets LOCKLAB_NO_CGROUP (the process-group behaviour, on purpose).
  static CgroupRun create();
  CgroupRun(CgroupRun&& other) noexcept;
  CgroupRun& operator=(CgroupRun&&) = delete;
  CgroupRun(const CgroupRun&) = delete;
  CgroupRun& operator=(const CgroupRun&) = delete;
  ~CgroupRun();

  CgroupKind kind() const { return kind_; }
  const std::string& why() const { return why_; }
  // Makes client `index`'s cgroup. An error leaves the run usable without it.
  Result<ClientCgroup> client(int index);

 private:
  CgroupRun(CgroupKind kind, std::string why, std::string dir) : kind_(kind), why_(std::move(why)), dir_(std::move(dir)) {}
  CgroupKind kind_;
  std::string why_;
  std::string dir_;  // run-<pid>-<n>; "" when none
  std::vector<ClientCgroup> clients_;
};

}  // namespace locklab::harness
