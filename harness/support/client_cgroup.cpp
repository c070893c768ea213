#include "support/client_cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "support/conditions.h"

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;

// A cgroup hierarchy we may use: where it is mounted and which of its paths
// the mount shows at its mountpoint (its root, "/" unless a namespace or bind).
struct Mount {
  CgroupKind kind = CgroupKind::none;
  std::string point;
  std::string root;
};

bool has_option(const std::string& options, const std::string& wanted) {
  std::stringstream list(options);
  for (std::string option; std::getline(list, option, ',');)
    if (option == wanted) return true;
  return false;
}

// From /proc/self/mountinfo: "id parent maj:min root point options [tags] - type source super".
std::vector<Mount> read_mounts() {
  std::vector<Mount> v2, v1;
  std::ifstream info("/proc/self/mountinfo");
  for (std::string line; std::getline(info, line);) {
    std::stringstream fields(line);
    std::string id, parent, device, root, point, word;
    fields >> id >> parent >> device >> root >> point;
    while (fields >> word && word != "-") {
    }
    std::string type, source, super;
    fields >> type >> source >> super;
    if (type == "cgroup2") v2.push_back({CgroupKind::cgroup2, point, root});
    if (type == "cgroup" && has_option(super, "freezer")) v1.push_back({CgroupKind::cgroup1_freezer, point, root});
  }
  v2.insert(v2.end(), v1.begin(), v1.end());  // cgroup2 first: it is preferred
  return v2;
}

// Mounts do not change under a run: read them once.
const std::vector<Mount>& mounts() {
  static const std::vector<Mount> found = read_mounts();
  return found;
}

// The path of `pid`'s cgroup in `kind`'s hierarchy, from /proc/PID/cgroup ("" if none).
std::string cgroup_path(pid_t pid, CgroupKind kind) {
  std::ifstream file("/proc/" + (pid > 0 ? std::to_string(pid) : std::string("self")) + "/cgroup");
  for (std::string line; std::getline(file, line);) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const bool match = kind == CgroupKind::cgroup2 ? line.compare(0, first, "0") == 0 && controllers.empty()
                                                    : has_option(controllers, "freezer");
    if (match) return line.substr(second + 1);
  }
  return "";
}

// Where a hierarchy path shows on the mount ("" when the mount does not show it).
std::string on_mount(const Mount& mount, const std::string& path) {
  if (path.empty() || path.compare(0, mount.root.size(), mount.root) != 0) return "";
  std::string rest = mount.root == "/" ? path : path.substr(mount.root.size());
  if (rest == "/") rest.clear();
  return mount.point + rest;
}

bool file_exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// open + write, no allocation: usable in a child between fork and exec.
bool write_file(const char* path, const char* text, std::size_t size) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = 0;
  do {
    n = ::write(fd, text, size);
  } while (n < 0 && errno == EINTR);
  const int saved = errno;
  ::close(fd);
  errno = saved;
  return n == static_cast<ssize_t>(size);
}

bool write_text(const std::string& path, const std::string& text) { return write_file(path.c_str(), text.data(), text.size()); }

std::string read_text(const std::string& path) {
  std::ifstream file(path);
  std::stringstream all;
  all << file.rdbuf();
  return all.str();
}

// The files a kind needs in a cgroup of ours; "" when all are there, else the first one missing.
std::string missing_file(CgroupKind kind, const std::string& dir) {
  const std::vector<std::string> needed = kind == CgroupKind::cgroup2
                                              ? std::vector<std::string>{"cgroup.procs", "cgroup.freeze", "cgroup.events"}
                                              : std::vector<std::string>{"cgroup.procs", "freezer.state"};
  for (const auto& name : needed)
    if (!file_exists(dir + "/" + name)) return name;
  return "";
}

bool make_dir(const std::string& path) { return ::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST; }

// A cgroup directory goes once it has no process (a zombie may keep it busy a moment).
bool remove_cgroup_dir(const std::string& path) {
  return wait_until([&] { return ::rmdir(path.c_str()) == 0 || errno == ENOENT; }, 1000ms, 2ms);
}

// Reaps `pid` when it is a dead child of ours (an adapter orphaned to us, the subreaper).
void reap_if_ours(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return;
  const auto close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return;
  const char state = line[close + 2];
  const auto ppid = static_cast<pid_t>(std::strtol(line.c_str() + close + 3, nullptr, 10));
  if ((state == 'Z' || state == 'X') && ppid == ::getpid()) ::waitpid(pid, nullptr, WNOHANG);
}

std::atomic<int> g_run_counter{0};

// The live client cgroups' directories, readable from a signal handler (no
// locks, no allocation): a Ctrl-C kills them all at once.
constexpr std::size_t kMaxLive = 256;
struct LiveKill {
  std::atomic<int> state{0};  // 0 free, 1 being written, 2 ready
  bool freezer_v1 = false;    // no cgroup.kill: each member killed, then the cgroup thawed
  char path[512] = {};        // the client cgroup's directory
};
std::array<LiveKill, kMaxLive> g_live{};

void remember_live_cgroup(const std::string& path, bool freezer_v1) {
  if (path.size() + 32 >= sizeof LiveKill::path) return;  // room for the file names the handler adds
  for (auto& slot : g_live) {
    int free = 0;
    if (!slot.state.compare_exchange_strong(free, 1)) continue;
    std::memcpy(slot.path, path.c_str(), path.size() + 1);
    slot.freezer_v1 = freezer_v1;
    slot.state.store(2);
    return;
  }
}

// dir + name into `out` (async-signal-safe; remember_live_cgroup() left room).
void join_path(char (&out)[576], const char* dir, const char* name) {
  const std::size_t d = std::strlen(dir), n = std::strlen(name);
  std::memcpy(out, dir, d);
  std::memcpy(out + d, name, n + 1);
}

// From a signal handler. cgroup2: cgroup.kill. The v1 freezer: a frozen
// process takes its SIGKILL only once thawed, so every member is sent one
// (its pids read from cgroup.procs), then the cgroup is thawed.
void kill_live_cgroup(const LiveKill& slot) {
  char path[576];
  if (!slot.freezer_v1) {
    join_path(path, slot.path, "/cgroup.kill");
    write_file(path, "1", 1);
    return;
  }
  join_path(path, slot.path, "/cgroup.procs");
  char buffer[4096];
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  const ssize_t got = fd < 0 ? 0 : ::read(fd, buffer, sizeof buffer);
  if (fd >= 0) ::close(fd);
  pid_t pid = 0;
  for (ssize_t i = 0; i <= got; ++i) {
    if (i < got && buffer[i] >= '0' && buffer[i] <= '9') {
      pid = pid * 10 + (buffer[i] - '0');
      continue;
    }
    if (pid > 0) ::kill(pid, SIGKILL);
    pid = 0;
  }
  join_path(path, slot.path, "/freezer.state");
  write_file(path, "THAWED", 6);
}

void forget_live_cgroup(const std::string& path) {
  for (auto& slot : g_live) {
    int ready = 2;
    if (slot.state.load() == 2 && path == slot.path && slot.state.compare_exchange_strong(ready, 1)) {
      slot.path[0] = '\0';
      slot.state.store(0);
    }
  }
}

// Kills and removes what a run whose owner died left (SIGKILL, Ctrl-C): run-<pid>-<n> with <pid> gone.
void remove_runs_of_dead_owners(CgroupKind kind, const std::string& base) {
  DIR* dir = ::opendir(base.c_str());
  if (dir == nullptr) return;
  std::vector<std::string> stale;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.rfind("run-", 0) != 0) continue;
    const auto owner = static_cast<pid_t>(std::strtol(name.c_str() + 4, nullptr, 10));
    if (owner > 0 && ::kill(owner, 0) != 0 && errno == ESRCH) stale.push_back(base + "/" + name);
  }
  ::closedir(dir);
  for (const auto& run : stale) {
    for (int i = 0; i < 4096 && file_exists(run + "/client-" + std::to_string(i)); ++i) {
      const ClientCgroup left(kind, run + "/client-" + std::to_string(i));
      left.kill_all(500ms);
      remove_cgroup_dir(left.path());
    }
    ::rmdir(run.c_str());
  }
}

// Tries one mount: locklab's folder under our own cgroup, a directory in it
// with the files a kind needs. The directory is left for the caller.
// A process can be moved into a leaf under `dir` (delegation, permissions,
// cgroup2's no-internal-process rule): a forked child joins a probe leaf, as a
// client will ("0": itself), and exits. A directory we may create but not
// join would fail every client at its start instead of falling back.
Status can_join(const std::string& dir) {
  const std::string leaf = dir + "/probe";
  if (!make_dir(leaf)) return Error{ErrorKind::io, "cannot create " + leaf + ": " + std::strerror(errno)};
  const std::string procs = leaf + "/cgroup.procs";
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(write_file(procs.c_str(), "0", 1) ? 0 : 1);  // async-signal-safe only
  int status = 0;
  pid_t waited = -1;
  if (pid > 0) do waited = ::waitpid(pid, &status, 0); while (waited < 0 && errno == EINTR);
  const bool joined = waited == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  ::rmdir(leaf.c_str());  // its one member is gone
  if (!joined) return Error{ErrorKind::io, "a process cannot be moved into " + leaf};
  return Done{};
}

Result<std::string> try_mount(const Mount& mount, const std::string& leaf) {
  const std::string own = on_mount(mount, cgroup_path(0, mount.kind));
  if (own.empty()) return Error{ErrorKind::io, mount.point + " does not show our own cgroup"};
  const std::string base = own + "/locklab";
  if (!make_dir(base)) return Error{ErrorKind::io, "cannot create " + base + ": " + std::strerror(errno)};
  remove_runs_of_dead_owners(mount.kind, base);
  const std::string dir = base + "/" + leaf;
  if (!make_dir(dir)) return Error{ErrorKind::io, "cannot create " + dir + ": " + std::strerror(errno)};
  if (const auto missing = missing_file(mount.kind, dir); !missing.empty()) {
    ::rmdir(dir.c_str());
    return Error{ErrorKind::io, dir + " has no " + missing};
  }
  if (auto joined = can_join(dir); !joined) {
    ::rmdir(dir.c_str());
    return joined.error();
  }
  return dir;
}

// The first usable mount, with a directory `leaf` made in it; kind none and why otherwise.
std::pair<CgroupProbe, std::string> first_usable(const std::string& leaf) {
  CgroupProbe probe;
  std::string tried;
  const char* only = std::getenv("LOCKLAB_CGROUP");  // one kind only (the other is never tried)
  for (const auto& mount : mounts()) {
    if (only != nullptr && *only != '\0' && std::string_view(only) != isolation_name(mount.kind)) {
      tried += (tried.empty() ? "" : "; ") + std::string(isolation_name(mount.kind)) + ": LOCKLAB_CGROUP=" + only;
      continue;
    }
    auto dir = try_mount(mount, leaf);
    if (!dir) {
      tried += (tried.empty() ? "" : "; ") + std::string(isolation_name(mount.kind)) + ": " + dir.error().message;
      continue;
    }
    probe.kind = mount.kind;
    probe.base = dir->substr(0, dir->rfind('/'));
    const bool kills = mount.kind == CgroupKind::cgroup2 && file_exists(*dir + "/cgroup.kill");
    probe.why = std::string(mount.kind == CgroupKind::cgroup2 ? "cgroup2 at " : "the cgroup v1 freezer at ") +
                mount.point + (mount.kind == CgroupKind::cgroup2 ? ": cgroup.freeze, " : ": freezer.state, ") +
                (kills ? "cgroup.kill" : "SIGKILL to every process in cgroup.procs");
    return {probe, *dir};
  }
  probe.why = "no usable cgroup (" + (tried.empty() ? std::string("no cgroup2 or v1 freezer mount") : tried) +
              "): each client's process group, its tree checked";
  return {probe, ""};
}

}  // namespace

const char* isolation_name(CgroupKind kind) {
  switch (kind) {
    case CgroupKind::cgroup2: return "cgroup2";
    case CgroupKind::cgroup1_freezer: return "cgroup1-freezer";
    case CgroupKind::none: break;
  }
  return "process-group";
}

// --- ClientCgroup ---------------------------------------------------------------

Status ClientCgroup::join(pid_t pid) const {
  char text[24];
  const int size = std::snprintf(text, sizeof text, "%d", static_cast<int>(pid));
  char path[512];
  const int length = std::snprintf(path, sizeof path, "%s/cgroup.procs", path_.c_str());
  if (length <= 0 || static_cast<std::size_t>(length) >= sizeof path || size <= 0)
    return Error{ErrorKind::usage, "cgroup path too long: " + path_};
  if (!write_file(path, text, static_cast<std::size_t>(size)))
    return Error{ErrorKind::io, "cannot move pid " + std::to_string(pid) + " into " + path_ + ": " + std::strerror(errno)};
  return Done{};
}

std::vector<pid_t> ClientCgroup::pids() const {
  std::vector<pid_t> found;
  std::ifstream procs(path_ + "/cgroup.procs");
  for (long pid = 0; procs >> pid;)
    if (pid > 0) found.push_back(static_cast<pid_t>(pid));
  return found;
}

Status ClientCgroup::freeze() const {
  const bool ok = kind_ == CgroupKind::cgroup2 ? write_text(path_ + "/cgroup.freeze", "1")
                                              : write_text(path_ + "/freezer.state", "FROZEN");
  if (!ok) return Error{ErrorKind::io, "cannot freeze " + path_ + ": " + std::strerror(errno)};
  return Done{};
}

Status ClientCgroup::thaw() const {
  const bool ok = kind_ == CgroupKind::cgroup2 ? write_text(path_ + "/cgroup.freeze", "0")
                                              : write_text(path_ + "/freezer.state", "THAWED");
  if (!ok) return Error{ErrorKind::io, "cannot thaw " + path_ + ": " + std::strerror(errno)};
  return Done{};
}

bool ClientCgroup::frozen() const {
  if (kind_ == CgroupKind::cgroup1_freezer) return read_text(path_ + "/freezer.state").rfind("FROZEN", 0) == 0;
  return read_text(path_ + "/cgroup.events").find("frozen 1") != std::string::npos;
}

bool ClientCgroup::kill_now() const {
  if (kind_ != CgroupKind::cgroup2) return false;
  char path[512];
  const int length = std::snprintf(path, sizeof path, "%s/cgroup.kill", path_.c_str());
  return length > 0 && static_cast<std::size_t>(length) < sizeof path && write_file(path, "1", 1);
}

bool ClientCgroup::kill_all(std::chrono::milliseconds within, pid_t keep) const {
  std::vector<pid_t> seen = pids();
  const bool at_once = kill_now();
  return wait_until([&] {
    const auto live = pids();
    if (!at_once)
      for (const pid_t pid : live) ::kill(pid, SIGKILL);  // and any child it forked meanwhile, next round
    // A v1-frozen process does not die until thawed; the kill is pending by then.
    if (!at_once && kind_ == CgroupKind::cgroup1_freezer) (void)thaw();
    seen.insert(seen.end(), live.begin(), live.end());
    for (const pid_t pid : seen)
      if (pid != keep) reap_if_ours(pid);
    return live.empty();
  }, within, std::chrono::milliseconds{1});
}

// --- probing and finding --------------------------------------------------------

CgroupProbe probe_cgroups() {
  const std::string leaf = "probe-" + std::to_string(::getpid()) + "-" + std::to_string(g_run_counter.fetch_add(1));
  auto [probe, dir] = first_usable(leaf);
  if (!dir.empty()) ::rmdir(dir.c_str());
  return probe;
}

bool no_cgroup_asked() {
  const char* off = std::getenv("LOCKLAB_NO_CGROUP");
  return off != nullptr && *off != '\0';
}

bool client_cgroups_usable() {
  static const bool usable = probe_cgroups().kind != CgroupKind::none;  // the machine does not change under us
  return usable && !no_cgroup_asked();
}

std::optional<ClientCgroup> client_cgroup_of(pid_t pid) {
  if (pid <= 0) return std::nullopt;
  for (const auto& mount : mounts()) {
    const std::string path = cgroup_path(pid, mount.kind);
    const auto leaf = path.rfind('/');
    if (leaf == std::string::npos || path.compare(leaf + 1, 7, "client-") != 0) continue;
    if (path.find("/locklab/run-") == std::string::npos) continue;
    const std::string dir = on_mount(mount, path);
    if (!dir.empty()) return ClientCgroup(mount.kind, dir);
  }
  return std::nullopt;
}

// --- CgroupRun ------------------------------------------------------------------

CgroupRun CgroupRun::create() {
  // For a user who wants the process-group behaviour, and for the tests of it on a machine that has cgroups.
  if (no_cgroup_asked())
    return CgroupRun(CgroupKind::none, "LOCKLAB_NO_CGROUP is set: each client's process group, its tree checked", "");
  const std::string leaf = "run-" + std::to_string(::getpid()) + "-" + std::to_string(g_run_counter.fetch_add(1));
  auto [probe, dir] = first_usable(leaf);
  return CgroupRun(probe.kind, probe.why, dir);
}

CgroupRun::CgroupRun(CgroupRun&& other) noexcept
    : kind_(other.kind_), why_(std::move(other.why_)), dir_(std::exchange(other.dir_, "")),
      clients_(std::move(other.clients_)) {
  other.clients_.clear();
}

void kill_live_client_cgroups() {
  for (auto& slot : g_live)
    if (slot.state.load() == 2) kill_live_cgroup(slot);
}

CgroupRun::~CgroupRun() {
  for (const auto& client : clients_) {
    forget_live_cgroup(client.path());
    client.kill_all();
    remove_cgroup_dir(client.path());
  }
  if (!dir_.empty()) remove_cgroup_dir(dir_);
}

Result<ClientCgroup> CgroupRun::client(int index) {
  if (kind_ == CgroupKind::none) return Error{ErrorKind::usage, why_};
  const std::string path = dir_ + "/client-" + std::to_string(index);
  if (!make_dir(path)) return Error{ErrorKind::io, "cannot create " + path + ": " + std::strerror(errno)};
  clients_.emplace_back(kind_, path);
  if (kind_ == CgroupKind::cgroup1_freezer || file_exists(path + "/cgroup.kill"))
    remember_live_cgroup(path, kind_ == CgroupKind::cgroup1_freezer);
  return clients_.back();
}

}  // namespace locklab::harness
