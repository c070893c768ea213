#include "sweeps/cell_pool.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <new>
#include <vector>

namespace locklab::harness {
namespace {

// The tasks still to run, shared by the workers (an anonymous shared
// mapping made before they fork): each takes the next one when it is free, so
// a worker that drew long tasks does not keep the others waiting at the end.
class CellQueue {
 public:
  CellQueue() {
    void* shared = ::mmap(nullptr, sizeof(std::atomic<std::size_t>), PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared != MAP_FAILED) next_ = new (shared) std::atomic<std::size_t>(0);
  }
  ~CellQueue() {
    if (next_ != nullptr) ::munmap(next_, sizeof(std::atomic<std::size_t>));
  }
  CellQueue(const CellQueue&) = delete;
  CellQueue& operator=(const CellQueue&) = delete;
  bool shared() const { return next_ != nullptr; }
  std::size_t take() { return next_->fetch_add(1); }

 private:
  std::atomic<std::size_t>* next_ = nullptr;
};

// The tasks `queue` hands this worker, in a process of its own, so the clients
// a cell forks never share a parent with another cell's threads.
void run_worker(std::size_t count, CellQueue& queue, const std::function<void(std::size_t)>& task) {
  for (std::size_t i = queue.take(); i < count; i = queue.take()) task(i);
}

}  // namespace

Status run_pool(std::size_t count, int workers, const std::function<void(std::size_t)>& task) {
  workers = std::min<int>(workers, static_cast<int>(std::max<std::size_t>(count, 1)));
  CellQueue queue;
  if (!queue.shared()) return Error{ErrorKind::io, "cannot map the matrix's cell queue"};
  if (workers <= 1) {
    run_worker(count, queue, task);
    return Done{};
  }
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<pid_t> children;
  const pid_t parent = ::getpid();
  for (int w = 0; w < workers; ++w) {
    const pid_t child = ::fork();
    if (child < 0) {
      for (pid_t started : children) ::waitpid(started, nullptr, 0);
      return Error{ErrorKind::io, "fork failed"};
    }
    if (child == 0) {
      // A matrix stopped by a signal takes its workers with it: SIGTERM runs a
      // worker's server guard (its redis-servers go), and its clients die with it.
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(1);
      run_worker(count, queue, task);
      std::fflush(stderr);
      ::_exit(0);
    }
    children.push_back(child);
  }
  for (pid_t child : children) ::waitpid(child, nullptr, 0);
  return Done{};
}

}  // namespace locklab::harness
