// fork() without exec in a process that has threads: the child starts with a
// copy of every lock as it was at that instant, and a lock another thread held
// then stays held in the child for good. glibc's malloc takes its own locks
// around fork(); the allocator of GCC 12's AddressSanitizer does not. A client
// process forked while a fault proxy's poll thread was inside that allocator
// hung at its first allocation of the same size (a Redlock client in the
// sanitizer preset, stuck in its release fan-out until the run's hard deadline).
//
// A thread that allocates and holds one mutex whenever it is not blocked (a
// proxy's poll thread lets go of its mutex only around poll()) registers that
// mutex here. Every fork() of the process then takes all registered mutexes
// first (pthread_atfork) and lets go of them in parent and child after, so no
// such thread is inside its work (and the allocator) when the process forks.
// Not covered: a registered thread's own start and exit. So the thread that
// forks must also be the one that starts and joins such threads (it is, for
// the proxies and the witness feeds: the run's coordinator), and it waits
// until a thread it started holds its mutex before it goes on (`started`
// below): a scenario forked its first actor while a witness feed's thread was
// still starting, and the actor's watchdog thread hung at its first
// allocation in the sanitizer preset (the lease lapsed, never renewed).
#pragma once

#include <cstddef>
#include <latch>
#include <mutex>

namespace locklab::harness {

// While it lives, every fork() of this process waits until `mutex` is free
// and holds it across the fork. Declare it after the mutex it names (it
// unregisters before the mutex goes), and never fork() or construct or destroy
// one while holding a registered mutex: the fork would wait for itself.
class QuietAtFork {
 public:
  explicit QuietAtFork(std::mutex& mutex);
  ~QuietAtFork();
  QuietAtFork(const QuietAtFork&) = delete;
  QuietAtFork& operator=(const QuietAtFork&) = delete;

  // How many mutexes every fork() takes now (for tests).
  static std::size_t registered();

  // The thread calls holding() once it first holds the mutex; the thread
  // that started it calls wait_until_held() before it may fork.
  void holding() { started_.count_down(); }
  void wait_until_held() { started_.wait(); }

 private:
  std::mutex* mutex_;
  std::latch started_{1};
};

}  // namespace locklab::harness
