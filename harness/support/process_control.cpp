#include "support/process_control.h"

#include <signal.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include "support/conditions.h"

namespace locklab::harness {

bool process_stopped(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  // "pid (comm) S ...": comm may hold spaces and parentheses; the state follows the last ')'.
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'T';
}

Result<PausedProcess> PausedProcess::pause(pid_t pid, std::chrono::milliseconds confirm_within) {
  if (pid <= 0) return Error{ErrorKind::usage, "cannot pause pid " + std::to_string(pid)};
  if (::kill(pid, SIGSTOP) != 0)
    return Error{ErrorKind::io, "SIGSTOP " + std::to_string(pid) + ": " + std::strerror(errno)};
  PausedProcess guard(pid);  // from here on, any early return resumes it
  if (!wait_until([pid] { return process_stopped(pid); }, confirm_within, std::chrono::milliseconds{1}))
    return Error{ErrorKind::timeout, "process " + std::to_string(pid) + " did not stop"};
  return guard;
}

PausedProcess::PausedProcess(PausedProcess&& other) noexcept : pid_(std::exchange(other.pid_, -1)) {}

PausedProcess& PausedProcess::operator=(PausedProcess&& other) noexcept {
  if (this != &other) {
    resume();
    pid_ = std::exchange(other.pid_, -1);
  }
  return *this;
}

void PausedProcess::resume() {
  if (pid_ > 0) ::kill(pid_, SIGCONT);
  pid_ = -1;
}

}  // namespace locklab::harness
