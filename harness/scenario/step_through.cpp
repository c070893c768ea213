#include "scenario/step_through.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "scenario/messages.h"

namespace locklab::harness {
namespace {

constexpr const char* kNextPrompt = "     [Enter] next step   [q Enter] play the rest ";
constexpr const char* kVerdictPrompt = "     [Enter] the verdict ";
// After the Enter the terminal's echo has moved to a new line: up one, clear the prompt.
constexpr const char* kErasePromptAfterEnter = "\x1b[1A\r\x1b[2K";
constexpr const char* kErasePrompt = "\r\x1b[2K";

}  // namespace

Playback choose_playback(bool step_through, std::chrono::milliseconds pace) {
  if (step_through && ::isatty(STDIN_FILENO) == 1 && ::isatty(STDOUT_FILENO) == 1) return Playback::step_through;
  return pace.count() > 0 ? Playback::paced : Playback::straight;
}

StepPrinter::~StepPrinter() {
  flush_now();
  for (int fd : wake_)
    if (fd >= 0) ::close(fd);
}

void StepPrinter::start(Playback playback, std::chrono::milliseconds pace) {
  playback_ = playback;
  pace_ = pace;
  if (playback_ == Playback::straight) return;
  if (playback_ == Playback::step_through && ::pipe2(wake_, O_CLOEXEC) != 0) playback_ = Playback::straight;
  if (playback_ == Playback::straight) return;
  owner_ = ::getpid();
  std::fflush(stdout);  // the header, printed through stdio, comes before the presenter's writes
  presenting_ = true;   // before the thread: no other thread runs yet
  presenter_ = std::thread([this] { present(); });
  presenter_id_ = presenter_.get_id();
}

void StepPrinter::show(std::string line) {
  {
    std::lock_guard lock(mutex_);
    if (presenting_) {
      queue_.push_back(std::move(line));
      changed_.notify_all();
      return;
    }
  }
  // No presenter (straight), or it has shown everything and left: at once.
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

void StepPrinter::finish() {
  // A forked child holds a copy of this object but not its thread: nothing to wait for.
  if (presenter_id_ == std::thread::id{} || owner_ != ::getpid()) {
    std::fflush(stdout);
    return;
  }
  {
    std::unique_lock lock(mutex_);
    finishing_ = true;
    changed_.notify_all();
    changed_.wait(lock, [this] { return done_; });
  }
  join_presenter();
}

void StepPrinter::flush_now() {
  if (presenter_id_ == std::thread::id{} || owner_ != ::getpid() || presenter_id_ == std::this_thread::get_id()) return;
  {
    std::lock_guard lock(mutex_);
    hurry_ = true;
    finishing_ = true;
    changed_.notify_all();
  }
  if (wake_[1] >= 0) {
    const char token = 'x';
    [[maybe_unused]] const ssize_t n = ::write(wake_[1], &token, 1);
  }
  join_presenter();
}

void StepPrinter::join_presenter() {
  std::lock_guard lock(join_mutex_);
  if (presenter_.joinable()) presenter_.join();
}

void StepPrinter::present() {
  for (;;) {
    std::string line;
    bool hurry = false;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return !queue_.empty() || finishing_; });
      if (queue_.empty()) break;
      line = std::move(queue_.front());
      queue_.pop_front();
      hurry = hurry_;
    }
    if (!hurry && playback_ == Playback::step_through && !wait_for_enter(std::string(translated(kNextPrompt)))) {
      std::lock_guard lock(mutex_);
      hurry_ = hurry = true;
    }
    write_out(line + "\n");
    if (!hurry && playback_ == Playback::paced) pause_between_steps();
  }
  bool hurry = false;
  {
    std::lock_guard lock(mutex_);
    hurry = hurry_;
  }
  if (!hurry && playback_ == Playback::step_through) wait_for_enter(std::string(translated(kVerdictPrompt)));
  std::lock_guard lock(mutex_);
  // A line shown while the verdict prompt waited is still queued: out first.
  while (!queue_.empty()) {
    write_out(queue_.front() + "\n");
    queue_.pop_front();
  }
  done_ = true;
  presenting_ = false;  // from now on show() prints at once
  changed_.notify_all();
}

// Canonical mode: the terminal hands over one line per read(), so each Enter is one step.
bool StepPrinter::wait_for_enter(const std::string& prompt) {
  write_out(prompt);
  pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {wake_[0], POLLIN, 0}};
  for (;;) {
    const int ready = ::poll(fds, 2, -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0 || (fds[1].revents & POLLIN) != 0) {
      write_out(kErasePrompt);
      return false;
    }
    char typed[256];
    const ssize_t n = ::read(STDIN_FILENO, typed, sizeof typed);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // end of input (Ctrl-D): nobody will press Enter again
      write_out("\n");
      return false;
    }
    write_out(kErasePromptAfterEnter);
    for (ssize_t i = 0; i < n; ++i)
      if (typed[i] == 'q' || typed[i] == 'Q') return false;
    return true;
  }
}

void StepPrinter::pause_between_steps() {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, pace_, [this] { return hurry_; });
}

void StepPrinter::write_out(const std::string& text) const {
  for (std::size_t written = 0; written < text.size();) {
    const ssize_t n = ::write(STDOUT_FILENO, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the terminal is gone: nobody to show it to
    written += static_cast<std::size_t>(n);
  }
}

}  // namespace locklab::harness
