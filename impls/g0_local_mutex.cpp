#include "g0_local_mutex.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <string>

namespace locklab {

// A mutex that any thread may unlock (std::mutex may only be unlocked by the
// thread that locked it; a lock object may acquire and release on different
// threads as long as it is used by one at a time).
struct LocalMutexLock::KeyMutex {
  std::mutex guard;
  std::condition_variable freed;
  bool held = false;
};

namespace {

// The process-wide registry: one KeyMutex per key, created on first use, kept
// for the life of the process.
std::shared_ptr<LocalMutexLock::KeyMutex> mutex_for(const std::string& key) {
  static std::mutex registry_guard;
  static std::map<std::string, std::shared_ptr<LocalMutexLock::KeyMutex>> registry;
  std::lock_guard lock(registry_guard);
  auto& slot = registry[key];
  if (!slot) slot = std::make_shared<LocalMutexLock::KeyMutex>();
  return slot;
}

}  // namespace

LockResult LocalMutexLock::create(const LockConfig& config) {
  if (auto problem = invalid_config(config, /*min_servers=*/0))
    return Error{ErrorKind::usage, "local-mutex: " + *problem};
  return std::unique_ptr<DistributedLock>(new LocalMutexLock(mutex_for(config.key)));
}

Acquire LocalMutexLock::try_acquire(std::chrono::milliseconds wait) {
  clear_error();
  std::unique_lock lock(mutex_->guard);
  const bool free = mutex_->freed.wait_for(lock, std::max(wait, std::chrono::milliseconds{0}),
                                           [this] { return !mutex_->held; });
  if (!free) return Acquire::timed_out;
  mutex_->held = held_ = true;
  return Acquire::acquired;
}

Release LocalMutexLock::release() {
  clear_error();
  if (!held_) return Release::not_owner;
  {
    std::lock_guard lock(mutex_->guard);
    mutex_->held = held_ = false;
  }
  mutex_->freed.notify_one();
  return Release::released;
}

}  // namespace locklab
