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
// Not covered: a registered thread's own start and exit, so the thread that
// forks must also be the one that starts and joins such threads (it is, for
// the proxies: the run's coordinator).
#pragma once

#include <cstddef>
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

 private:
  std::mutex* mutex_;
};

}  // namespace locklab::harness
