#include "support/fork_quiet.h"

#include <pthread.h>

#include <algorithm>
#include <vector>

namespace locklab::harness {
namespace {

// The registered mutexes. Lock order: the registry, then each mutex in
// registration order; a registered thread never takes the registry.
struct Registry {
  std::mutex guard;
  std::vector<std::mutex*> mutexes;
};

Registry& registry() {
  static auto* const instance = new Registry;  // never destroyed: a fork may come during static destruction
  return *instance;
}

void before_fork() {
  Registry& r = registry();
  r.guard.lock();
  for (std::mutex* mutex : r.mutexes) mutex->lock();
}

// In the parent and in the child alike: the forking thread (the child's only
// thread) holds them all; a default std::mutex may be unlocked by the copy.
void after_fork() {
  Registry& r = registry();
  for (auto it = r.mutexes.rbegin(); it != r.mutexes.rend(); ++it) (*it)->unlock();
  r.guard.unlock();
}

// Installed before main(), while the process has one thread: installing on
// first use could race a fork that another thread makes meanwhile. Prepare
// handlers run in the reverse order of installation, so these run after any
// installed later (a library's own), whose locks a registered thread may take.
[[maybe_unused]] const bool g_installed = ::pthread_atfork(before_fork, after_fork, after_fork) == 0;

}  // namespace

QuietAtFork::QuietAtFork(std::mutex& mutex) : mutex_(&mutex) {
  Registry& r = registry();
  const std::lock_guard lock(r.guard);
  r.mutexes.push_back(mutex_);
}

std::size_t QuietAtFork::registered() {
  Registry& r = registry();
  const std::lock_guard lock(r.guard);
  return r.mutexes.size();
}

QuietAtFork::~QuietAtFork() {
  Registry& r = registry();
  const std::lock_guard lock(r.guard);
  r.mutexes.erase(std::remove(r.mutexes.begin(), r.mutexes.end(), mutex_), r.mutexes.end());
}

}  // namespace locklab::harness
