#include "support/process_control.h"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <utility>

#include "support/conditions.h"

namespace locklab::harness {
namespace {

// The fields of /proc/<pid>/stat we need.
struct ProcStat {
  char state = '?';
  pid_t ppid = 0;
  pid_t pgrp = 0;
};

std::optional<ProcStat> proc_stat_at(const std::string& path) {
  std::ifstream stat(path);
  std::string line;
  if (!std::getline(stat, line)) return std::nullopt;
  // "pid (comm) S ppid pgrp ...": comm may hold spaces and parentheses; the state follows the last ')'.
  const auto close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return std::nullopt;
  ProcStat parsed;
  parsed.state = line[close + 2];
  char* next = nullptr;
  parsed.ppid = static_cast<pid_t>(std::strtol(line.c_str() + close + 3, &next, 10));
  parsed.pgrp = static_cast<pid_t>(std::strtol(next, nullptr, 10));
  return parsed;
}

std::optional<ProcStat> proc_stat(pid_t pid) { return proc_stat_at("/proc/" + std::to_string(pid) + "/stat"); }

bool dead(char state) { return state == 'Z' || state == 'X'; }

// True when every live thread of `pid` is stopped. /proc/<pid>/stat shows only
// the main thread: a Node adapter or a watchdog thread may still be running.
bool every_thread_stopped(pid_t pid) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(tasks.c_str());
  if (dir == nullptr) return false;
  bool any = false, all = true;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const auto stat = proc_stat_at(tasks + "/" + entry->d_name + "/stat");
    if (!stat || dead(stat->state)) continue;  // a thread that ended meanwhile
    any = true;
    if (stat->state != 'T') all = false;
  }
  ::closedir(dir);
  return any && all;
}

// Every process in /proc whose group is `pgid`, with its stat.
std::vector<std::pair<pid_t, ProcStat>> group_members(pid_t pgid) {
  std::vector<std::pair<pid_t, ProcStat>> members;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return members;
  while (const dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    if (auto stat = proc_stat(static_cast<pid_t>(pid)); stat && stat->pgrp == pgid)
      members.emplace_back(static_cast<pid_t>(pid), *stat);
  }
  ::closedir(proc);
  return members;
}

// Reaps the members of `pgid` that died as our children, the leader excepted.
void reap_dead_members(pid_t pgid) {
  for (const auto& [pid, stat] : group_members(pgid))
    if (pid != pgid && dead(stat.state) && stat.ppid == ::getpid()) ::waitpid(pid, nullptr, WNOHANG);
}

}  // namespace

bool process_stopped(pid_t pid) { return every_thread_stopped(pid); }

bool leads_group(pid_t pid) { return pid > 0 && ::getpgid(pid) == pid; }

std::vector<pid_t> live_group_members(pid_t pgid) {
  std::vector<pid_t> live;
  for (const auto& [pid, stat] : group_members(pgid))
    if (!dead(stat.state)) live.push_back(pid);
  return live;
}

bool group_stopped(pid_t pgid) {
  bool any = false;
  for (const auto& [pid, stat] : group_members(pgid)) {
    if (dead(stat.state)) continue;
    if (stat.state != 'T' || !every_thread_stopped(pid)) return false;
    any = true;
  }
  return any;
}

bool kill_group(pid_t pgid, std::chrono::milliseconds within) {
  if (pgid <= 1) return false;
  ::kill(-pgid, SIGKILL);
  return wait_until([pgid] {
    reap_dead_members(pgid);
    return live_group_members(pgid).empty();
  }, within);
}

std::optional<pid_t> tree_member_outside(pid_t root, pid_t pgid) {
  std::vector<std::pair<pid_t, ProcStat>> all;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return std::nullopt;
  while (const dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    if (auto stat = proc_stat(static_cast<pid_t>(pid)); stat && !dead(stat->state))
      all.emplace_back(static_cast<pid_t>(pid), *stat);
  }
  ::closedir(proc);
  std::vector<pid_t> tree{root};  // grows as children are found: breadth first
  for (std::size_t i = 0; i < tree.size(); ++i)
    for (const auto& [pid, stat] : all) {
      if (stat.ppid == tree[i]) tree.push_back(pid);
      if (pid == tree[i] && stat.pgrp != pgid) return pid;
    }
  return std::nullopt;
}

std::vector<pid_t> client_members(pid_t pid) {
  if (const auto cgroup = client_cgroup_of(pid)) return cgroup->pids();
  return live_group_members(pid);
}

namespace {

// A crash from inside a client cgroup: every process in it dies, a setsid
// watchdog too. cgroup.kill takes us with it at once; the v1 freezer has no
// such file, so every other process first (we go next, below). Alone in it,
// we only _exit below, as without a cgroup (the same exit status).
void kill_own_cgroup() {
  const auto cgroup = client_cgroup_of(::getpid());
  if (!cgroup) return;
  const auto members = cgroup->pids();
  if (members.size() <= 1) return;
  if (cgroup->kill_now()) return;
  for (const pid_t pid : members)
    if (pid != ::getpid()) ::kill(pid, SIGKILL);
}

}  // namespace

void exit_with_group(int code) {
  // No /proc scan of every process here: the crash must be as abrupt as before
  // (a watchdog thread of ours must not get to renew anything on the way out).
  kill_own_cgroup();
  siginfo_t info{};
  const bool has_children = ::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0;
  if (has_children && ::getpgrp() == ::getpid()) ::kill(0, SIGKILL);  // the group, us included, at once
  ::_exit(code);
}

namespace {

// Freezes `cgroup` and waits until the kernel says every process in it is frozen.
Status freeze_confirmed(const ClientCgroup& cgroup, std::chrono::milliseconds confirm_within) {
  if (auto frozen = cgroup.freeze(); !frozen) return frozen;
  if (wait_until([&] { return cgroup.frozen(); }, confirm_within, std::chrono::milliseconds{1})) return Done{};
  (void)cgroup.thaw();
  return Error{ErrorKind::timeout, "cgroup " + cgroup.path() + " did not freeze"};
}

}  // namespace

Result<PausedProcess> PausedProcess::pause(pid_t pid, std::chrono::milliseconds confirm_within) {
  if (pid <= 0) return Error{ErrorKind::usage, "cannot pause pid " + std::to_string(pid)};
  if (auto cgroup = client_cgroup_of(pid)) {
    if (auto frozen = freeze_confirmed(*cgroup, confirm_within); !frozen) return frozen.error();
    PausedProcess guard(pid, false);
    guard.members_ = cgroup->pids().size();
    guard.cgroup_ = std::move(cgroup);
    return guard;
  }
  const bool group = leads_group(pid);
  if (::kill(group ? -pid : pid, SIGSTOP) != 0)
    return Error{ErrorKind::io, "SIGSTOP " + std::to_string(pid) + ": " + std::strerror(errno)};
  PausedProcess guard(pid, group);  // from here on, any early return resumes it
  auto stopped = [pid, group] { return group ? group_stopped(pid) : process_stopped(pid); };
  if (!wait_until(stopped, confirm_within, std::chrono::milliseconds{1}))
    return Error{ErrorKind::timeout, (group ? "process group " : "process ") + std::to_string(pid) + " did not stop"};
  if (group) guard.members_ = live_group_members(pid).size();
  return guard;
}

PausedProcess::PausedProcess(PausedProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), group_(other.group_), members_(other.members_),
      cgroup_(std::move(other.cgroup_)) {}

PausedProcess& PausedProcess::operator=(PausedProcess&& other) noexcept {
  if (this != &other) {
    resume();
    pid_ = std::exchange(other.pid_, -1);
    group_ = other.group_;
    members_ = other.members_;
    cgroup_ = std::move(other.cgroup_);
  }
  return *this;
}

void PausedProcess::resume() {
  if (pid_ > 0 && cgroup_) (void)cgroup_->thaw();
  else if (pid_ > 0) ::kill(group_ ? -pid_ : pid_, SIGCONT);
  pid_ = -1;
}

}  // namespace locklab::harness
