#include "nemesis/shared_cells.h"

#include <sys/mman.h>

#include <algorithm>
#include <new>

namespace locklab::harness {

SharedCells::SharedCells(std::size_t count) : bytes_(sizeof(std::atomic<std::int64_t>) * std::max<std::size_t>(count, 1)) {
  void* base = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) throw std::bad_alloc();
  cells_ = static_cast<std::atomic<std::int64_t>*>(base);
  for (std::size_t i = 0; i < bytes_ / sizeof(std::atomic<std::int64_t>); ++i) new (&cells_[i]) std::atomic<std::int64_t>(0);
}

SharedCells::~SharedCells() { ::munmap(cells_, bytes_); }

}  // namespace locklab::harness
