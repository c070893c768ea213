// Memory a forked client shares with the coordinator. A fault that acts inside
// a client at a step point needs state the client and the coordinator share
// after fork(): SharedCells, an anonymous MAP_SHARED mapping made before the
// clients start (the parked clients, the holder faults, the cross-process gate,
// the step actions' counts).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace locklab::harness {

// Atomic cells in memory every forked client shares with the coordinator.
class SharedCells {
 public:
  explicit SharedCells(std::size_t count);  // throws std::bad_alloc when mmap fails
  ~SharedCells();
  SharedCells(const SharedCells&) = delete;
  SharedCells& operator=(const SharedCells&) = delete;
  std::atomic<std::int64_t>& operator[](std::size_t i) const { return cells_[i]; }

 private:
  std::atomic<std::int64_t>* cells_;
  std::size_t bytes_;
};

inline constexpr int kMaxFaultClients = 256;  // bounds::clients' maximum

}  // namespace locklab::harness
