#include "workload/adapter_lock.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include <nlohmann/json.hpp>

#include "support/client_cgroup.h"
#include "support/conditions.h"
#include "support/json_read.h"
#include "support/process_control.h"

namespace locklab::harness {

using namespace std::chrono;

struct AdapterLock::Reply {
  nlohmann::json json;
};

namespace {

constexpr std::size_t kMaxLine = 1 << 20;

// One line of at most 120 printable characters, for error messages.
std::string clip(std::string_view text) {
  std::string out(text.substr(0, 120));
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return text.size() > 120 ? out + "..." : out;
}

// In the child between fork and exec: async-signal-safe calls only.
[[noreturn]] void exec_child(int socket, int status_pipe, int stderr_file, char* const* args, pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the adapter dies with its client
  if (::getppid() != parent) ::_exit(127);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  if (::dup2(socket, 0) < 0 || ::dup2(socket, 1) < 0) ::_exit(127);
  if (stderr_file >= 0 && ::dup2(stderr_file, 2) < 0) ::_exit(127);
  for (int fd = 3; fd < 1024; ++fd) {  // no fd of ours survives the exec but the status pipe, until then
    if (fd != status_pipe) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  ::execvp(args[0], args);
  const int error = errno;
  [[maybe_unused]] const auto written = ::write(status_pipe, &error, sizeof error);
  ::_exit(127);
}

// The child's errno if its exec failed (read from the close-on-exec status pipe), 0 if it ran.
int exec_errno(int status_read) {
  int error = 0;
  ssize_t got = 0;
  do {
    got = ::read(status_read, &error, sizeof error);
  } while (got < 0 && errno == EINTR);
  return got == static_cast<ssize_t>(sizeof error) ? error : 0;
}

std::optional<Acquire> acquire_word(const std::string& word) {
  for (Acquire outcome : {Acquire::acquired, Acquire::timed_out, Acquire::unknown, Acquire::error}) {
    if (word == to_string(outcome)) return outcome;
  }
  return std::nullopt;
}

std::optional<Release> release_word(const std::string& word) {
  for (Release outcome : {Release::released, Release::still_held, Release::not_owner, Release::already_expired,
                          Release::error}) {
    if (word == to_string(outcome)) return outcome;
  }
  return std::nullopt;
}

}  // namespace

// The line a dying runtime names its error on: Node prints "TypeError: ..." (or "Error: ...")
// under the throwing source line and above the stack and "Node.js v20...", Python ends its
// traceback with "ValueError: ...". Else the last non-empty line that is not a stack frame.
std::string last_error_line(const std::string& text) {
  std::string named, last;
  std::size_t from = 0;
  while (from < text.size()) {
    std::size_t end = text.find('\n', from);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(from, end - from);
    from = end + 1;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const std::string_view trimmed = std::string_view(line).substr(first);
    if (trimmed.starts_with("at ") || trimmed.starts_with("Node.js v") || trimmed.starts_with("^")) continue;
    const auto colon = trimmed.find(": ");
    const auto word = trimmed.substr(0, colon);
    if (colon != std::string_view::npos && first == 0 && word.find(' ') == std::string_view::npos &&
        (word.ends_with("Error") || word.ends_with("Exception")) && named.empty())
      named = clip(trimmed);
    last = clip(trimmed);
  }
  return named.empty() ? last : named;
}

// ---- AdapterProcess ----

Result<AdapterProcess> AdapterProcess::spawn(const std::vector<std::string>& argv, const std::string& name,
                                             milliseconds exit_grace) {
  if (argv.empty() || argv[0].empty()) return Error{ErrorKind::usage, "adapter: empty command"};
  std::vector<char*> args;
  for (const auto& word : argv) args.push_back(const_cast<char*>(word.c_str()));
  args.push_back(nullptr);
  int pair[2];
  int status[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return Error{ErrorKind::io, "adapter " + name + ": socketpair: " + std::strerror(errno)};
  }
  if (::pipe2(status, O_CLOEXEC) != 0) {
    ::close(pair[0]);
    ::close(pair[1]);
    return Error{ErrorKind::io, "adapter " + name + ": pipe: " + std::strerror(errno)};
  }
  // Its stderr goes to a memory file: the line it dies on becomes the crash's reason
  // (stderr_reason()); -1 (no memfd here): it keeps ours.
  const int stderr_file = ::memfd_create("locklab-adapter-stderr", MFD_CLOEXEC);
  // Appending (the adapter shares this file description): cap_stderr() may empty it mid-run.
  if (stderr_file >= 0) (void)::fcntl(stderr_file, F_SETFL, O_APPEND);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(pair[1], status[1], stderr_file, args.data(), parent);
  const int fork_errno = errno;
  ::close(pair[1]);
  ::close(status[1]);
  AdapterProcess process(pid, pair[0], stderr_file, exit_grace);  // owns the socket (and the child, if any) from here
  const int exec_error = pid > 0 ? exec_errno(status[0]) : fork_errno;
  ::close(status[0]);
  if (exec_error != 0) {
    return Error{ErrorKind::io, "adapter " + name + ": could not start: " + std::strerror(exec_error)};
  }
  return process;
}

AdapterProcess::AdapterProcess(AdapterProcess&& other) noexcept
    : pid_(other.pid_), fd_(other.fd_), stderr_fd_(other.stderr_fd_), reaped_(other.reaped_), status_(other.status_),
      exit_grace_(other.exit_grace_), buffer_(std::move(other.buffer_)) {
  other.pid_ = -1;
  other.fd_ = -1;
  other.stderr_fd_ = -1;
}

void AdapterProcess::end() {
  if (pid_ > 0 && !reaped_) {
    if (fd_ >= 0) ::shutdown(fd_, SHUT_WR);  // the adapter's stdin reaches EOF: its cue to exit
    if (!wait_until([this] { return try_reap(); }, exit_grace_)) {
      ::kill(pid_, SIGKILL);
      while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
      }
      reaped_ = true;
    }
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (stderr_fd_ >= 0) ::close(stderr_fd_);
  stderr_fd_ = -1;
}

bool AdapterProcess::try_reap() {
  if (reaped_ || pid_ <= 0) return true;
  reaped_ = ::waitpid(pid_, &status_, WNOHANG) == pid_;
  return reaped_;
}

Status AdapterProcess::send_line(const std::string& line) {
  std::size_t sent = 0;
  while (sent < line.size()) {
    const ssize_t n = ::send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return Error{ErrorKind::timeout, "stopped reading its stdin", sent > 0};
    }
    if (n < 0) {
      return Error{ErrorKind::closed, std::string("closed its stdin (") + std::strerror(errno) + ")", sent > 0};
    }
    sent += static_cast<std::size_t>(n);
  }
  return Done{};
}

Result<std::string> AdapterProcess::read_line(AwakeBound& bound) {
  for (;;) {
    if (const auto end = buffer_.find('\n'); end != std::string::npos) {
      std::string line = buffer_.substr(0, end);
      buffer_.erase(0, end + 1);
      return line;
    }
    if (buffer_.size() > kMaxLine) return Error{ErrorKind::protocol, "printed a line longer than 1 MiB"};
    // In steps: a step the process spent stopped counts as one step. Once the
    // bound is spent, one last look that does not block (a reply that came
    // while the process was stopped is in the socket already).
    const milliseconds wait = bound.next_wait();
    pollfd ready{fd_, POLLIN, 0};
    const int polled = ::poll(&ready, 1, static_cast<int>(wait.count()));
    if (polled < 0 && errno == EINTR) continue;
    if (polled == 0 && !bound.spent()) continue;
    if (polled == 0) return Error{ErrorKind::timeout, "no answer"};
    char chunk[4096];
    const ssize_t n = polled > 0 ? ::read(fd_, chunk, sizeof chunk) : -1;
    if (n < 0 && errno == EINTR) continue;
    // ECONNRESET: it exited leaving input unread (a socket pair, not a pipe).
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return Error{ErrorKind::closed, "closed its stdout"};
    if (n < 0) return Error{ErrorKind::io, std::string("could not be read: ") + std::strerror(errno)};
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

std::string AdapterProcess::exit_description() {
  if (!wait_until([this] { return try_reap(); }, exit_grace_)) return "closed its stdout";
  if (WIFEXITED(status_)) return "exited with status " + std::to_string(WEXITSTATUS(status_));
  if (WIFSIGNALED(status_)) return "was killed by signal " + std::to_string(WTERMSIG(status_));
  return "closed its stdout";
}

bool AdapterProcess::exited_on_error() {
  if (!wait_until([this] { return try_reap(); }, exit_grace_)) return false;
  return (WIFEXITED(status_) && WEXITSTATUS(status_) != 0) || WIFSIGNALED(status_);
}

bool AdapterProcess::hung_up() {
  if (try_reap()) return true;
  pollfd ready{fd_, POLLRDHUP, 0};
  return ::poll(&ready, 1, 0) > 0 && (ready.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

void AdapterProcess::cap_stderr() {
  struct stat file {};
  if (stderr_fd_ >= 0 && ::fstat(stderr_fd_, &file) == 0 && file.st_size > (1 << 20)) (void)::ftruncate(stderr_fd_, 0);
}

std::string AdapterProcess::stderr_reason() const {
  if (stderr_fd_ < 0) return "";
  std::string text;
  char chunk[4096];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(stderr_fd_, chunk, sizeof chunk, at);
    if (n <= 0) break;
    text.append(chunk, static_cast<std::size_t>(n));
    at += n;
    if (text.size() > (1u << 20)) text.erase(0, text.size() - (1u << 19));  // the end is what counts
  }
  return last_error_line(text);
}

// ---- AdapterLock ----

Result<std::unique_ptr<AdapterLock>> AdapterLock::create(std::vector<std::string> argv, const LockConfig& config,
                                                         int client, AdapterTimeouts timeouts, std::string label) {
  if (auto problem = invalid_config(config)) return Error{ErrorKind::usage, *problem};
  if (argv.empty() || argv[0].empty()) return Error{ErrorKind::usage, "adapter: empty command"};
  std::string name = label.empty() ? argv.at(0) : std::move(label);
  auto process = AdapterProcess::spawn(argv, name, timeouts.exit_grace);
  if (!process) return process.error();
  std::unique_ptr<AdapterLock> lock(new AdapterLock(std::move(process).value(), std::move(name), config.ttl,
                                                              config.retry_interval, timeouts));
  nlohmann::json servers = nlohmann::json::array();
  for (const auto& server : config.servers) {
    nlohmann::json entry{{"host", server.endpoint.host}, {"port", server.endpoint.port}};
    if (server.cluster) entry["cluster"] = true;  // a Redis Cluster's seed: the adapter's client routes by slot
    servers.push_back(std::move(entry));
  }
  Reply init{{{"type", "init"}, {"servers", servers}, {"key", config.key}, {"client", client},
              {"ttl_ms", config.ttl.count()}}};
  lock->client_ = client;
  auto reply = lock->ask(std::move(init), "init", timeouts.init);
  if (!reply) return reply.error();
  lock->initialized_ = true;
  if (auto checked = lock->check_init(*reply); !checked) return checked.error();
  return lock;
}

Status AdapterLock::check_init(const Reply& reply) {
  const nlohmann::json& j = reply.json;
  if (text_at(j, "/type") != "init_ok" || text_at(j, "/library").empty()) {
    return broke("answered init with " + clip(j.dump()) + " (expected type init_ok and a library)", true);
  }
  if (auto contained = check_contained(); !contained) return contained;
  identity_ = {text_at(j, "/library"), text_at(j, "/version"), text_at(j, "/language"), {}, text_at(j, "/key"),
               text_at(j, "/release_window"), text_at(j, "/acquire_gap")};
  if (j.contains("capabilities") && j["capabilities"].is_object()) {
    for (const auto& [name, value] : j["capabilities"].items()) {
      if (value.is_boolean()) identity_.capabilities[name] = value.get<bool>();
    }
  }
  return Done{};
}

// Without a cgroup, a pause or a crash acts on the client's process group: an
// adapter any process of which left it (setsid; a watchdog it forks, a shell
// wrapper's child) would keep running, and extending, through both. The whole
// tree counts: the adapter's, and when we are a subreaper (a client process
// without a cgroup, client_pools.cpp) ours, where its orphans land. In a client
// cgroup every process the adapter starts is in it, setsid or not: no check;
// nor where runs put their clients in cgroups (the coordinator's probe of an
// adapter, adapter_probe.h, ends it before any fault).
Status AdapterLock::check_contained() {
  const pid_t adapter = process_.pid();
  if (adapter <= 0 || client_cgroups_usable()) return Done{};
  int subreaper = 0;
  const bool adopts = ::prctl(PR_GET_CHILD_SUBREAPER, &subreaper) == 0 && subreaper != 0;
  auto outside = tree_member_outside(adopts ? ::getpid() : adapter, ::getpgrp());
  if (!outside) return Done{};
  return broke("left its client's process group (pid " + std::to_string(*outside) +
                   ", setsid?): with no cgroup here, a pause or a crash would not reach it",
               true);
}

void AdapterLock::close() {
  process_.end();
  closed_ = true;
}

Error AdapterLock::broke(std::string what_it_did, bool request_sent) {
  broken_ = "adapter " + name_ + ": " + what_it_did;
  return Error{ErrorKind::protocol, broken_, request_sent};
}

// The adapter exited after its init: its client crashed (the service it stands for died,
// docs/adapters.md, "An adapter that dies"), with the line it died on. Every later call fails.
Error AdapterLock::exited(const char* when) {
  const std::string said = process_.stderr_reason();
  died_ = "client " + std::to_string(client_) + "'s adapter " + process_.exit_description() + " " + when +
          (said.empty() ? "" : ": the service dies on " + said);
  broken_ = "adapter " + name_ + ": " + died_;
  return Error{ErrorKind::closed, broken_, true};
}

std::string AdapterLock::said() const {
  const std::string line = process_.stderr_reason();
  return line.empty() ? "" : ": " + line;
}

// The adapter's end of the socket closed. After init, a runtime dying on an error (a
// non-zero status or a signal, with a line on its stderr) is its client crashing (#26);
// a clean exit, or a closed stdout with the process alive, is a broken adapter.
Error AdapterLock::gone(const std::string& when) {
  if (initialized_ && process_.exited_on_error() && !process_.stderr_reason().empty()) return exited(when.c_str());
  return broke(process_.exit_description() + " " + when + said(), true);
}

// The hold, in steps: a death in it is seen within a step, not at its end, so the crash
// is stamped near when the service died, before the TTL lets a contender in.
bool AdapterLock::died_within(milliseconds span) {
  const auto end = steady_clock::now() + span;
  for (auto now = steady_clock::now(); now < end; now = steady_clock::now()) {
    if (died_now()) return true;
    std::this_thread::sleep_for(std::min<nanoseconds>(end - now, milliseconds{10}));
  }
  return died_now();
}

bool AdapterLock::died_now() {
  if (!broken_.empty() || closed_ || !process_.hung_up()) return !died_.empty();
  (void)gone("during the section");
  return !died_.empty();
}

// The kit answers a release it cannot finish by this (kits' answer bound), with blocked_ms.
constexpr milliseconds kKitAnswerBound{1500};
constexpr milliseconds kBlockedTolerance{100};  // our awake count runs in 50 ms steps

// A reply with blocked_ms: the library had not returned past the kit's bound (liveness). Taken
// only on the word that says so (acquire `unknown`, release `error`) and only when we waited
// that long ourselves: the adapter's word alone would turn any cell into liveness.
Status AdapterLock::note_blocked(const Reply& reply, const char* what, bool blocked_word, milliseconds needed) {
  const auto& j = reply.json;
  if (!j.contains("blocked_ms")) return Done{};
  const auto awake = duration_cast<milliseconds>(last_awake_);
  if (!j["blocked_ms"].is_number() || !blocked_word || awake + kBlockedTolerance < needed) {
    return broke(std::string("answered ") + what + " with blocked_ms after " + std::to_string(awake.count()) +
                     " ms (blocked_ms needs outcome " + (std::string(what) == "acquire" ? "unknown" : "error") +
                     " after at least " + std::to_string(needed.count()) + " ms): " + clip(j.dump()),
                 true);
  }
  const auto ms = j["blocked_ms"].get<std::int64_t>();
  ++blocked_.calls;
  if (std::string(what) == "acquire") ++blocked_.acquires;
  if (blocked_.what.empty() || ms > blocked_.longest_ms) {
    blocked_.longest_ms = ms;
    const std::string said = text_at(j, "/error");
    blocked_.what = said.empty() ? std::string(what) + " blocked " + std::to_string(ms) + " ms past its bound" : clip(said);
  }
  return Done{};
}

Result<AdapterLock::Reply> AdapterLock::ask(Reply request, const char* what, milliseconds bound) {
  if (!broken_.empty()) return Error{ErrorKind::closed, broken_, false};
  if (closed_) return Error{ErrorKind::closed, "adapter " + name_ + ": closed (close())", false};
  process_.cap_stderr();
  const long long id = next_id_++;
  request.json["id"] = id;
  if (auto sent = process_.send_line(request.json.dump() + "\n"); !sent) {
    if (sent.error().kind == ErrorKind::closed) {
      Error error = gone(std::string("before ") + what);
      error.request_sent = sent.error().request_sent;
      return error;
    }
    return broke(sent.error().message + " before " + what, sent.error().request_sent);
  }
  return read_reply(id, what, bound);
}

// Reads until the reply to `id`, counting unasked events on the way.
Result<AdapterLock::Reply> AdapterLock::read_reply(long long id, const char* what, milliseconds bound) {
  AwakeBound awake(bound);
  for (;;) {
    auto line = process_.read_line(awake);
    if (!line && line.error().kind == ErrorKind::timeout) {
      return broke(std::string("did not answer ") + what + " within " + std::to_string(bound.count()) + " ms", true);
    }
    if (!line && line.error().kind == ErrorKind::closed) {
      return gone(std::string("before answering ") + what);
    }
    if (!line) return broke(line.error().message, true);
    auto message = nlohmann::json::parse(*line, nullptr, false);
    if (message.is_discarded()) return broke("printed a line that is not JSON: " + clip(*line), true);
    if (text_at(message, "/type") == "event") {
      if (text_at(message, "/event") == "lost") leases_lost_.fetch_add(1);
      continue;
    }
    if (!message.is_object() || !message.contains("id") || message["id"] != id) {
      return broke(std::string("answered ") + what + " (id " + std::to_string(id) + ") with " + clip(message.dump()),
                   true);
    }
    last_awake_ = awake.used();
    return Reply{std::move(message)};
  }
}

Acquire AdapterLock::try_acquire(milliseconds wait) {
  Reply request{{{"type", "acquire"}, {"ttl_ms", ttl_.count()}, {"wait_ms", wait.count()}}};
  // A library that polls waits the run's retry between attempts, as the generations do.
  if (retry_) request.json["retry_ms"] = retry_->count();
  auto reply = ask(std::move(request), "acquire", wait + timeouts_.margin);
  if (!reply) return fail(reply.error().request_sent ? Acquire::unknown : Acquire::error, reply.error().message);
  const auto outcome = acquire_word(text_at(reply->json, "/outcome"));
  if (auto blocked = note_blocked(*reply, "acquire", outcome == Acquire::unknown, wait); !blocked) {
    return fail(Acquire::unknown, blocked.error().message);
  }
  if (text_at(reply->json, "/type") != "acquire_ok" || !outcome) {
    return fail(Acquire::unknown, broke("answered acquire with " + clip(reply->json.dump()), true).message);
  }
  // A watchdog may start with the first lease: the tree is checked again.
  if (*outcome == Acquire::acquired) {
    if (auto contained = check_contained(); !contained) return fail(Acquire::unknown, contained.error().message);
    if (auto token = carried_token(*reply); !token) return fail(Acquire::unknown, token.error().message);
  }
  if (*outcome == Acquire::acquired || *outcome == Acquire::timed_out) {
    clear_error();
    return *outcome;
  }
  return fail(*outcome, "adapter " + name_ + ": acquire " + to_string(*outcome) + ": " +
                            clip(text_at(reply->json, "/error")));
}

// The token of an `acquired` whose row carries tokens to the resource; without one the section
// could not be fenced, and judging it unfenced would hide the row's claim: the adapter broke.
Status AdapterLock::carried_token(const Reply& reply) {
  token_.reset();
  if (!carry_tokens_) return Done{};
  const auto found = reply.json.find("fencing_token");
  if (found == reply.json.end() || !found->is_number_unsigned())
    return broke("answered acquired without a fencing_token (a non-negative integer): " + clip(reply.json.dump()), true);
  token_ = found->get<std::uint64_t>();
  return Done{};
}

Release AdapterLock::release() {
  token_.reset();  // the section is over: its token is no one's now
  auto reply = ask(Reply{{{"type", "release"}}}, "release", timeouts_.margin);
  if (!reply) return fail(Release::error, reply.error().message);
  const auto outcome = release_word(text_at(reply->json, "/outcome"));
  if (auto blocked = note_blocked(*reply, "release", outcome == Release::error, kKitAnswerBound); !blocked) {
    return fail(Release::error, blocked.error().message);
  }
  if (text_at(reply->json, "/type") != "release_ok" || !outcome) {
    return fail(Release::error, broke("answered release with " + clip(reply->json.dump()), true).message);
  }
  if (*outcome == Release::error) {
    return fail(Release::error, "adapter " + name_ + ": release error: " + clip(text_at(reply->json, "/error")));
  }
  clear_error();
  return *outcome;
}

Result<microseconds> AdapterLock::noop() {
  const auto began = steady_clock::now();
  auto reply = ask(Reply{{{"type", "noop"}}}, "noop", timeouts_.margin);
  if (!reply) return reply.error();
  if (text_at(reply->json, "/type") != "noop_ok") {
    return broke("answered noop with " + clip(reply->json.dump()), true);
  }
  return duration_cast<microseconds>(steady_clock::now() - began);
}

}  // namespace locklab::harness
