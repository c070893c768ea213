#include "g0_no_lock.h"

namespace locklab {

LockResult NoLock::create(const LockConfig& config) {
  if (auto problem = invalid_config(config, /*min_servers=*/0))
    return Error{ErrorKind::usage, "no-lock: " + *problem};
  return std::unique_ptr<DistributedLock>(new NoLock());
}

Acquire NoLock::try_acquire(std::chrono::milliseconds /*wait*/) {
  clear_error();
  return Acquire::acquired;
}

Release NoLock::release() {
  clear_error();
  return Release::released;
}

}  // namespace locklab
