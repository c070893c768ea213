// Generation 0a — no lock at all (seed 004 §11, "不使用任何锁的情况下").
//
//   acquire: nothing, always succeeds      release: nothing, always "released"
//   Redis:   none
//
// The baseline every other generation is measured against: its throughput is
// the ceiling, and its critical sections overlap freely.
// Race: everything. Shown by tests/generations_0_4_test.cpp
// Generations.NoLockTwoClientsBothAcquire, and in the harness by the counter losing updates.
#pragma once

#include "lock.h"

namespace locklab {

class NoLock final : public DistributedLock {
 public:
  // Validates the config (key, ttl) like every generation; needs no server.
  static LockResult create(const LockConfig& config);

  Acquire try_acquire(std::chrono::milliseconds wait) override;
  Release release() override;

 private:
  NoLock() = default;
};

}  // namespace locklab
