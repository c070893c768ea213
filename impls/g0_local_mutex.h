// Generation 0b — a process-local mutex per key (seed 004 §11, "使用本地锁":
// Java's `synchronized` on the request handler).
//
//   acquire: lock this process's mutex for `key`, waiting up to `wait`
//   release: unlock it
//   Redis:   none
//
// Race: the mutex lives in one process's memory. Threads of that process
// exclude each other; a second process has its own mutex and walks straight
// in. The seed's demo: 100 requests over three instances behind a gateway
// leave the counter at 58, not 101. Shown by tests/generations_0_4_test.cpp
// LocalMutex.ExcludesThreadsOfOneProcess and LocalMutex.DoesNotExcludeAnotherProcess.
#pragma once

#include <memory>

#include "lock.h"

namespace locklab {

class LocalMutexLock final : public DistributedLock {
 public:
  // Validates the config (key, ttl) like every generation; needs no server.
  static LockResult create(const LockConfig& config);

  // Waits on the key's mutex (no polling). wait 0 = one try. Not reentrant:
  // the holder asking again waits out `wait` and gets timed_out.
  Acquire try_acquire(std::chrono::milliseconds wait) override;
  // not_owner when this object does not hold the mutex.
  Release release() override;

  struct KeyMutex;  // one per key, shared by every lock object of this process

 private:
  explicit LocalMutexLock(std::shared_ptr<KeyMutex> mutex) : mutex_(std::move(mutex)) {}

  std::shared_ptr<KeyMutex> mutex_;
  bool held_ = false;
};

}  // namespace locklab
