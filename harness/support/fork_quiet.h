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
// such thread is inside the allocator, or anywhere else, when the process forks.
#pragma once

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

 private:
  std::mutex* mutex_;
};

}  // namespace locklab::harness
