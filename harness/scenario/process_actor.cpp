#include "scenario/process_actor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>

#include "scenario/messages.h"
#include "scenario/step_gate.h"
#include "support/conditions.h"

namespace locklab::harness {
namespace {

void write_all(int fd, const std::string& bytes) {
  for (std::size_t written = 0; written < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the other side is gone
    written += static_cast<std::size_t>(n);
  }
}

// The child's life: narrate through the pipe, run the body, _exit.
[[noreturn]] void run_child(const std::string& name, const std::function<void(ProcessActor::Child&)>& body,
                            ProcessActor::Child& child, Narrator& narrator) {
  int status = 0;
  {
    ActorName scope(name);
    try {
      body(child);
    } catch (const SimulatedCrash& crash) {
      narrator.crashed(crash.point);
    } catch (const std::exception& e) {
      narrator.say(text("failed: {}", e.what()));
      status = 1;
    }
  }
  std::_Exit(status);  // never the parent's static destructors (its servers, its narrator)
}

}  // namespace

void ProcessActor::Child::enter() { narrator_.enter(); }
void ProcessActor::Child::leave() { narrator_.leave(); }
void ProcessActor::Child::tell_parent() { write_all(story_fd_, "T\t\t\n"); }

void ProcessActor::Child::wait_for_parent() {
  char token = 0;
  while (::read(control_fd_, &token, 1) < 0 && errno == EINTR) {
  }
}

Result<std::unique_ptr<ProcessActor>> ProcessActor::start(Narrator& narrator, std::string name,
                                                          std::function<void(Child&)> body) {
  int story[2];
  int control[2];
  // O_CLOEXEC: servers started later (exec) must not hold the pipes open.
  if (::pipe2(story, O_CLOEXEC) != 0) return Error{ErrorKind::io, std::string("pipe: ") + std::strerror(errno)};
  if (::pipe2(control, O_CLOEXEC) != 0) {
    ::close(story[0]);
    ::close(story[1]);
    return Error{ErrorKind::io, std::string("pipe: ") + std::strerror(errno)};
  }
  std::fflush(stdout);  // buffered output must not be written twice
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {story[0], story[1], control[0], control[1]}) ::close(fd);
    return Error{ErrorKind::io, std::string("fork: ") + std::strerror(errno)};
  }
  if (pid == 0) {
    ::close(story[0]);
    ::close(control[1]);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the parent dies => so does the child
    if (::getppid() != parent) std::_Exit(1);
    auto child_narrator = Narrator::forwarding_to(story[1]);
    Child child(*child_narrator, story[1], control[0]);
    run_child(name, body, child, *child_narrator);
  }
  ::close(story[1]);
  ::close(control[0]);
  std::unique_ptr<ProcessActor> actor(new ProcessActor(narrator, std::move(name)));
  actor->pid_ = pid;
  actor->story_fd_ = story[0];
  actor->control_fd_ = control[1];
  actor->relay_ = std::thread([raw = actor.get()] { raw->relay_lines(); });
  return actor;
}

void ProcessActor::relay_lines() {
  FILE* in = ::fdopen(story_fd_, "r");
  if (in == nullptr) {
    std::lock_guard lock(mutex_);
    ended_ = true;
    told_.notify_all();
    return;
  }
  char* buffer = nullptr;
  std::size_t capacity = 0;
  ssize_t length;
  while ((length = ::getline(&buffer, &capacity, in)) > 0) {
    std::string line(buffer, static_cast<std::size_t>(length));
    if (!line.empty() && line.back() == '\n') line.pop_back();
    const auto first = line.find('\t');
    const auto second = first == std::string::npos ? std::string::npos : line.find('\t', first + 1);
    if (line.empty() || second == std::string::npos) continue;
    const char kind = line[0];
    if (kind == 'T') {
      std::lock_guard lock(mutex_);
      ++tells_;
      told_.notify_all();
      continue;
    }
    std::string who = line.substr(first + 1, second - first - 1);
    if (who == "(background)") who = name_ + "/background";  // the child's timer or subscriber thread
    narrator_.relay(kind, who, line.substr(second + 1));
  }
  std::free(buffer);
  std::fclose(in);  // closes story_fd_
  std::lock_guard lock(mutex_);
  ended_ = true;
  told_.notify_all();
}

bool ProcessActor::wait_for_child(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (!told_.wait_for(lock, timeout, [this] { return tells_ > 0 || ended_; }) || tells_ == 0) return false;
  --tells_;
  return true;
}

void ProcessActor::tell_child() { write_all(control_fd_, "x"); }

std::optional<int> ProcessActor::join(std::chrono::milliseconds timeout) {
  if (reaped_) return std::nullopt;
  int status = 0;
  bool status_read = false;
  const bool exited = wait_until(
      [&] {
        const pid_t r = ::waitpid(pid_, &status, WNOHANG);
        status_read = r == pid_;
        return status_read || (r < 0 && errno == ECHILD);
      },
      timeout);
  if (!exited) return std::nullopt;
  reaped_ = true;
  if (relay_.joinable()) relay_.join();  // the child's last lines are relayed before join returns
  if (!status_read) return kExitUnknown;  // never "0": nobody saw the body return
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

ProcessActor::~ProcessActor() {
  if (!reaped_ && pid_ > 0) {
    ::kill(pid_, SIGCONT);  // a stopped process would not die before it is continued
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (control_fd_ >= 0) ::close(control_fd_);
  if (relay_.joinable()) relay_.join();
}

}  // namespace locklab::harness
