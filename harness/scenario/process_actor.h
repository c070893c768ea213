// A named actor that is a whole process: fork()ed, so a story can SIGSTOP it
// (PausedProcess) and freeze every thread it has -- its watchdog included --
// the way a long GC pause or a stopped VM does. A thread Actor cannot show
// that: stopping one thread leaves the process's renewal timer running.
//
//   auto holder = ProcessActor::start(story.narrator(), "A", [&](ProcessActor::Child& me) {
//     auto lock = ...;                 // made in the child: its own connections, its own watchdog
//     lock->try_acquire(0ms);
//     me.enter(); me.tell_parent();    // "I hold it"
//     me.wait_for_parent();            // the work lasts until the story says so
//     me.leave(); lock->release();
//   });
//   holder->wait_for_child();          // A holds it
//   auto frozen = PausedProcess::pause(holder->pid());
//
// The child's narration (its commands, its background threads' commands as
// "A/background", its own lines) goes up a pipe and is relayed by the
// parent's narrator in arrival order, numbered with the parent's steps. The
// body runs in the child only: it must use `me` to narrate, never the parent's
// Narrator or Scenario::say (their copies in the child are not the story's).
// The child ends with _exit (never the parent's atexit/static destructors: they
// would stop the parent's servers), and is SIGKILLed if the parent dies.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "redis/result.h"

#include "scenario/messages.h"
#include "scenario/narrator.h"

namespace locklab::harness {

class ProcessActor {
 public:
  // What the body gets, in the child.
  class Child {
   public:
    // A step in the child's name, from the message catalog as Scenario::say.
    template <class... Args>
    void say(std::string_view english, const Args&... args) {
      narrator_.say(text(english, args...));
    }
    void enter();  // the critical-section bars of the parent's timeline
    void leave();
    void tell_parent();      // the parent's next wait_for_child() returns
    void wait_for_parent();  // returns after the parent's next tell_child() (or when the parent is gone)

   private:
    friend class ProcessActor;
    Child(Narrator& narrator, int story_fd, int control_fd)
        : narrator_(narrator), story_fd_(story_fd), control_fd_(control_fd) {}
    Narrator& narrator_;
    int story_fd_;
    int control_fd_;
  };

  // Fork from a thread that no other thread is narrating with at that moment
  // (the director, between actors): the child copies the process as it is.
  static Result<std::unique_ptr<ProcessActor>> start(Narrator& narrator, std::string name,
                                                     std::function<void(Child&)> body);

  ProcessActor(const ProcessActor&) = delete;
  ProcessActor& operator=(const ProcessActor&) = delete;
  ~ProcessActor();  // a child still running is continued and SIGKILLed; always reaped

  pid_t pid() const { return pid_; }
  const std::string& name() const { return name_; }

  // Waits for the child's next tell_parent(); false after `timeout` or if the child died.
  bool wait_for_child(std::chrono::milliseconds timeout = std::chrono::seconds{10});
  void tell_child();
  // The child was reaped by someone else (waitpid: ECHILD): gone, but how is unknown.
  static constexpr int kExitUnknown = -1;
  // Waits for the child to exit: its exit status (0 = the body returned),
  // kExitUnknown when no status could be read, nullopt on timeout.
  std::optional<int> join(std::chrono::milliseconds timeout = std::chrono::seconds{10});

 private:
  ProcessActor(Narrator& narrator, std::string name) : narrator_(narrator), name_(std::move(name)) {}
  void relay_lines();  // the parent's reader thread: until the child closes its end

  Narrator& narrator_;
  std::string name_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int story_fd_ = -1;    // parent's read end: narration and tell_parent() tokens
  int control_fd_ = -1;  // parent's write end: tell_child() tokens
  std::thread relay_;

  std::mutex mutex_;
  std::condition_variable told_;
  int tells_ = 0;      // tell_parent() tokens not yet consumed
  bool ended_ = false;  // the child closed its end (exited)
};

}  // namespace locklab::harness
