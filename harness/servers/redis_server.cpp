#include "servers/redis_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "servers/clock_jump.h"
#include "servers/loopback_port.h"
#include "support/client_cgroup.h"

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;

// PIDs of live servers, readable from a signal handler (no locks, no allocation).
constexpr std::size_t kMaxServers = 64;
std::array<std::atomic<pid_t>, kMaxServers> g_live_pids{};

void remember_pid(pid_t pid) {
  for (auto& slot : g_live_pids) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pid)) return;
  }
}

void forget_pid(pid_t pid) {
  for (auto& slot : g_live_pids) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

struct sigaction g_previous_int{}, g_previous_term{};

void kill_servers_and_reraise(int signo) {
  for (auto& slot : g_live_pids) {
    const pid_t pid = slot.load();
    if (pid > 0) ::kill(pid, SIGKILL);
  }
  kill_live_client_cgroups();  // a client's setsid watchdog has no parent-death signal to end it
  ::sigaction(signo, signo == SIGINT ? &g_previous_int : &g_previous_term, nullptr);
  ::raise(signo);
}

void install_signal_guard_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action{};
    action.sa_handler = kill_servers_and_reraise;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    // A signal the caller ignores (a background job's SIGINT, nohup) stays ignored.
    ::sigaction(SIGINT, nullptr, &g_previous_int);
    ::sigaction(SIGTERM, nullptr, &g_previous_term);
    if (g_previous_int.sa_handler != SIG_IGN) ::sigaction(SIGINT, &action, nullptr);
    if (g_previous_term.sa_handler != SIG_IGN) ::sigaction(SIGTERM, &action, nullptr);
    // A handler installed by someone else before us keeps working only if we
    // chain; the harness installs none, so re-raising the default is enough.
  });
}

// Temp dirs are named locklab-redis-<owner pid>-XXXXXX. A dir whose owner is
// gone was left by a process that could not clean up (SIGKILL, or a signal
// exit: unlinking a tree is not async-signal-safe); the next launcher removes it.
constexpr std::string_view kDirPrefix = "locklab-redis-";

void remove_dirs_of_dead_owners() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::temp_directory_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(kDirPrefix)) continue;
    pid_t owner = 0;
    const char* first = name.data() + kDirPrefix.size();
    const auto [end, parse_error] = std::from_chars(first, name.data() + name.size(), owner);
    if (parse_error != std::errc{} || *end != '-' || owner <= 0) continue;
    if (::kill(owner, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
    std::filesystem::remove_all(entry.path(), ec);
  }
}

bool executable(const std::string& path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0; }
bool readable(const std::string& path) { return !path.empty() && ::access(path.c_str(), R_OK) == 0; }

// True once the server on `endpoint` answers PING and is process `pid`. A port
// is only free when probed: between a crash and its restart on the same port
// (or between free_loopback_port() and the bind) another process may take it,
// and then a PING is answered by that process while ours fails to bind and
// exits. Without the process_id check a restart adopted another run's server.
bool answers_as(const redis::Endpoint& endpoint, const std::string& password, pid_t pid) {
  redis::ConnectionOptions options;
  options.endpoint = endpoint;
  options.connect_timeout = 200ms;
  options.command_timeout = 500ms;
  options.password = password;
  auto connection = redis::Connection::connect(options);
  if (!connection) return false;
  auto reply = connection->command({"PING"});
  if (!reply || !reply->is_status("PONG")) return false;
  auto info = connection->command({"INFO", "server"});
  if (!info || !info->is_string()) return false;
  const std::string_view text = info->text();
  const std::string field = "process_id:" + std::to_string(pid) + "\r\n";
  return text.find(field) != std::string_view::npos;
}

// Returns true when the child has exited (and reaps it).
bool exited(pid_t pid) {
  int status = 0;
  return ::waitpid(pid, &status, WNOHANG) == pid;
}

}  // namespace

Result<std::string> find_redis_server(const std::string& preferred) {
  if (!preferred.empty()) {
    if (executable(preferred)) return preferred;
    return Error{ErrorKind::usage, "redis-server binary not executable: " + preferred};
  }
  if (const char* env = std::getenv("LOCKLAB_REDIS_SERVER"); env != nullptr && *env != '\0') {
    if (executable(env)) return std::string(env);
    return Error{ErrorKind::usage, std::string("LOCKLAB_REDIS_SERVER is not executable: ") + env};
  }
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (executable(dir + "/redis-server")) return dir + "/redis-server";
  }
  for (const char* candidate : {"/usr/bin/redis-server", "/usr/local/bin/redis-server"})
    if (executable(candidate)) return std::string(candidate);
  return Error{ErrorKind::usage, "redis-server not found (install it: scripts/setup, or apt-get install redis-server)"};
}

std::string server_version(const redis::ConnectionOptions& options) {
  auto connection = redis::Connection::connect(options);
  if (!connection) return "unknown";
  auto reply = connection->command({"INFO", "server"});
  if (!reply || !reply->is_string()) return "unknown";
  std::stringstream lines{std::string(reply->text())};
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("redis_version:")) {
      line = line.substr(std::strlen("redis_version:"));
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return line;
    }
  }
  return "unknown";
}

RedisServer::RedisServer(ServerOptions options, std::string dir)
    : options_(std::move(options)), dir_(std::move(dir)) {}

RedisServer::~RedisServer() {
  stop();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

Result<std::unique_ptr<RedisServer>> RedisServer::start(ServerOptions options) {
  auto binary = find_redis_server(options.binary);
  if (!binary) return binary.error();
  options.binary = binary.value();
  install_signal_guard_once();
  static std::once_flag swept;
  std::call_once(swept, remove_dirs_of_dead_owners);

  std::string dir_template = (std::filesystem::temp_directory_path() /
                              (std::string(kDirPrefix) + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (::mkdtemp(dir_template.data()) == nullptr)
    return Error{ErrorKind::io, std::string("mkdtemp: ") + std::strerror(errno)};
  std::unique_ptr<RedisServer> server(new RedisServer(std::move(options), dir_template));

  // Another process may take the port between our probe and redis's bind: retry.
  Error last{ErrorKind::io, "not started"};
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto port = free_loopback_port();
    if (!port) return port.error();
    auto launched = server->launch(port.value());
    if (launched) return server;
    last = launched.error();
  }
  return last;
}

Status RedisServer::launch(int port) {
  endpoint_ = redis::Endpoint{"127.0.0.1", port};
  std::vector<std::string> args{options_.binary, "--port", std::to_string(port), "--bind", "127.0.0.1",
                                "--dir", dir_, "--logfile", dir_ + "/redis.log", "--daemonize", "no",
                                "--save", "", "--appendonly", "no", "--enable-debug-command", "local",
                                // a replica would otherwise wait 5 s before its first sync
                                "--repl-diskless-sync-delay", "0"};
  if (!options_.config_file.empty()) args.insert(args.begin() + 1, options_.config_file);
  if (options_.replica_of) {
    args.insert(args.end(), {"--replicaof", options_.replica_of->host, std::to_string(options_.replica_of->port)});
    if (!options_.password.empty()) args.insert(args.end(), {"--masterauth", options_.password});
  }
  if (!options_.password.empty()) args.insert(args.end(), {"--requirepass", options_.password});
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());

  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  auto environment = server_environment();
  if (!environment) return environment.error();
  std::vector<char*> envp;
  for (auto& entry : *environment) envp.push_back(entry.data());
  envp.push_back(nullptr);

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return Error{ErrorKind::io, std::string("fork: ") + std::strerror(errno)};
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // parent already gone
    ::setpgid(0, 0);  // a terminal's Ctrl-C reaches the parent, which stops us in order
    const int devnull = ::open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      ::dup2(devnull, STDIN_FILENO);
      ::dup2(devnull, STDOUT_FILENO);
      ::dup2(devnull, STDERR_FILENO);
    }
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  pid_ = pid;
  remember_pid(pid);

  const auto deadline = std::chrono::steady_clock::now() + options_.start_timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (exited(pid_)) {
      forget_pid(pid_);
      pid_ = -1;
      return Error{ErrorKind::io, "redis-server on port " + std::to_string(port) + " exited at start: " + log_tail(300)};
    }
    if (answers_as(endpoint_, options_.password, pid_)) return Done{};
    std::this_thread::sleep_for(10ms);
  }
  stop();
  return Error{ErrorKind::timeout, "redis-server on port " + std::to_string(port) + " did not answer PING within " +
                                       std::to_string(options_.start_timeout.count()) + " ms"};
}

// Our own environment, plus the clock shim's two variables when asked for. Built
// before fork(): the child may only make async-signal-safe calls.
Result<std::vector<std::string>> RedisServer::server_environment() const {
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    if (options_.clock_shim && (text.starts_with("LD_PRELOAD=") || text.starts_with(LOCKLAB_CLOCK_OFFSET_ENV "=")))
      continue;
    environment.emplace_back(text);
  }
  if (!options_.clock_shim) return environment;
  if (!readable(LOCKLAB_CLOCK_SHIM_PATH))
    return Error{ErrorKind::usage, std::string("clock shim not built: ") + LOCKLAB_CLOCK_SHIM_PATH};
  // The offset file exists before the server does (a restart keeps the offset in force).
  if (::access(clock_offset_file().c_str(), F_OK) != 0) {
    std::ofstream zero(clock_offset_file());
    zero << "0\n";
    if (!zero) return Error{ErrorKind::io, "cannot write " + clock_offset_file()};
  }
  for (auto& variable : clock_shim_environment(clock_offset_file())) environment.push_back(std::move(variable));
  return environment;
}

redis::ConnectionOptions RedisServer::connection_options() const {
  redis::ConnectionOptions options;
  options.endpoint = endpoint_;
  options.password = options_.password;
  return options;
}

std::string RedisServer::log_tail(std::size_t max_bytes) const {
  std::ifstream log(dir_ + "/redis.log");
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  if (text.size() > max_bytes) text = text.substr(text.size() - max_bytes);
  return text;
}

void RedisServer::pause() {
  if (pid_ > 0) ::kill(pid_, SIGSTOP);
}

void RedisServer::resume() {
  if (pid_ > 0) ::kill(pid_, SIGCONT);
}

void RedisServer::crash() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  forget_pid(pid_);
  pid_ = -1;
}

void RedisServer::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGCONT);  // a paused server cannot act on SIGTERM
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!exited(pid_)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      break;
    }
    std::this_thread::sleep_for(5ms);
  }
  forget_pid(pid_);
  pid_ = -1;
}

Status RedisServer::restart() {
  stop();
  return launch(endpoint_.port);
}

Result<ServerList> start_masters(std::size_t count, const ServerOptions& options) {
  ServerList servers;
  for (std::size_t i = 0; i < count; ++i) {
    auto server = RedisServer::start(options);
    if (!server) return server.error();  // the ones already started stop with `servers`
    servers.push_back(std::move(server).value());
  }
  return servers;
}

namespace {

Status wait_for_replication_link(const RedisServer& replica, std::chrono::milliseconds timeout) {
  auto link = redis::Connection::connect(replica.connection_options());
  if (!link) return link.error();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto info = link->command({"INFO", "replication"});
    if (info && info->text().find("master_link_status:up") != std::string_view::npos) return Done{};
    std::this_thread::sleep_for(20ms);
  }
  return Error{ErrorKind::timeout, "replica " + replica.endpoint().to_string() + " did not connect to its master in time"};
}

// "Link up" is not yet "acknowledging": a freshly synced replica may take a
// second to send its first REPLCONF ACK, and a WAIT with a short timeout would
// count it as missing. One write + a long WAIT makes the set ready for WAIT.
Status wait_for_first_acknowledgement(const RedisServer& master, std::size_t replicas,
                                             std::chrono::milliseconds timeout) {
  auto connection = redis::Connection::connect(master.connection_options());
  if (!connection) return connection.error();
  const std::string key = "locklab:replication-warm-up";
  auto acked = connection->command({"SET", key, "1"});
  if (acked) acked = connection->command({"WAIT", std::to_string(replicas), std::to_string(timeout.count())});
  if (!acked) return acked.error();
  (void)connection->command({"DEL", key});
  if (acked->integer() < static_cast<long long>(replicas))
    return Error{ErrorKind::timeout, "replicas did not acknowledge a write within " + std::to_string(timeout.count()) + " ms"};
  return Done{};
}

}  // namespace

Result<ServerList> start_master_with_replicas(std::size_t replicas, const ServerOptions& options) {
  auto servers = start_masters(1, options);
  if (!servers) return servers.error();
  ServerOptions replica_options = options;
  replica_options.replica_of = servers->front()->endpoint();
  for (std::size_t i = 0; i < replicas; ++i) {
    auto replica = RedisServer::start(replica_options);
    if (!replica) return replica.error();
    servers->push_back(std::move(replica).value());
  }
  for (std::size_t i = 1; i < servers->size(); ++i)
    if (auto up = wait_for_replication_link(*(*servers)[i], options.start_timeout); !up) return up.error();
  if (auto acking = wait_for_first_acknowledgement(*servers->front(), replicas, options.start_timeout); !acking)
    return acking.error();
  return servers;
}

}  // namespace locklab::harness
