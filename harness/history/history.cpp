#include "history/history.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>
#include <utility>

namespace locklab::harness {

static_assert(std::atomic<std::int64_t>::is_always_lock_free, "shared-memory atomics must be lock-free");
static_assert(std::atomic<std::int32_t>::is_always_lock_free, "shared-memory atomics must be lock-free");

std::int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {
std::size_t align_up(std::size_t n) { return (n + 63) / 64 * 64; }
}  // namespace

std::optional<SharedHistory> SharedHistory::create(int clients, std::size_t capacity, std::string* why) {
  if (clients <= 0 || capacity == 0) {
    if (why) *why = "shared history needs at least one client and one record";
    return std::nullopt;
  }
  const std::size_t bytes = align_up(sizeof(SharedHeader)) + align_up(sizeof(ClientSlot) * clients) +
                            sizeof(CsRecord) * capacity * static_cast<std::size_t>(clients);
  // Anonymous shared pages are zero-filled and only backed when touched, so a
  // generous capacity costs address space, not memory.
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    if (why) *why = std::string("mmap shared history: ") + std::strerror(errno);
    return std::nullopt;
  }
  return SharedHistory(base, bytes, clients, capacity);
}

SharedHistory::SharedHistory(void* base, std::size_t bytes, int clients, std::size_t capacity)
    : base_(base), bytes_(bytes), clients_(clients), capacity_(capacity) {
  auto* bytes_base = static_cast<unsigned char*>(base);
  header_ = new (bytes_base) SharedHeader();
  slots_ = reinterpret_cast<ClientSlot*>(bytes_base + align_up(sizeof(SharedHeader)));
  for (int i = 0; i < clients; ++i) new (&slots_[i]) ClientSlot();
  records_ = reinterpret_cast<CsRecord*>(bytes_base + align_up(sizeof(SharedHeader)) +
                                         align_up(sizeof(ClientSlot) * clients));
}

SharedHistory::SharedHistory(SharedHistory&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)),
      bytes_(other.bytes_),
      clients_(other.clients_),
      capacity_(other.capacity_),
      header_(other.header_),
      slots_(other.slots_),
      records_(other.records_) {}

SharedHistory::~SharedHistory() {
  if (base_ != nullptr) ::munmap(base_, bytes_);
}

CsRecord* SharedHistory::append(int client, const CsRecord& record) const {
  ClientSlot& own = slot(client);
  const auto index = own.records.load(std::memory_order_relaxed);
  if (static_cast<std::size_t>(index) >= capacity_) {
    own.truncated.store(1);
    return nullptr;
  }
  CsRecord* stored = &records_of(client)[index];
  *stored = record;
  own.records.store(index + 1, std::memory_order_release);
  return stored;
}

void SharedHistory::set_error(int client, const std::string& message) const {
  char* out = slot(client).last_error;
  const std::size_t n = std::min(message.size(), sizeof(ClientSlot::last_error) - 1);
  std::memcpy(out, message.data(), n);
  out[n] = '\0';
}

void SharedHistory::enter(int client) const {
  const int now_inside = header_->occupancy.fetch_add(1) + 1;
  int seen = header_->max_occupancy.load();
  while (now_inside > seen && !header_->max_occupancy.compare_exchange_weak(seen, now_inside)) {
  }
  slot(client).inside.store(1);
  header_->holder.store(client);
  header_->last_enter_ns.store(monotonic_ns());
}

void SharedHistory::exit(int client) const {
  int expected = client;
  header_->holder.compare_exchange_strong(expected, -1);
  slot(client).inside.store(0);
  header_->occupancy.fetch_sub(1);
}

void SharedHistory::forget_dead(int client) const {
  std::int64_t unseen = 0;
  slot(client).died_ns.compare_exchange_strong(unseen, monotonic_ns());
  leave_dead(client);
}

// Whoever gets here first (the dying client, the coordinator that saw it dead,
// the one that reaps it) takes it out of the occupancy; the others find it out.
void SharedHistory::leave_dead(int client) const {
  if (slot(client).inside.exchange(0) == 0) return;
  int expected = client;
  header_->holder.compare_exchange_strong(expected, -1);
  header_->occupancy.fetch_sub(1);
}

namespace {

// The calling client process's history and index (set once after fork; null elsewhere).
std::atomic<const SharedHistory*> own_history{nullptr};
std::atomic<int> own_index{-1};

// Stamps `cell` with now unless it holds a stamp already; the stamp it holds.
std::int64_t stamp_first(std::atomic<std::int64_t>& cell) {
  std::int64_t seen = 0;
  const std::int64_t now = monotonic_ns();
  return cell.compare_exchange_strong(seen, now) ? now : seen;
}

}  // namespace

std::int64_t SharedHistory::stamp_killed(int client) const {
  const std::int64_t stamp = stamp_first(slot(client).dead_by_ns);
  leave_dead(client);
  return stamp;
}

void SharedHistory::become_own(int client) const {
  own_index.store(client);
  own_history.store(this);
}

std::int64_t stamp_own_death() {
  const SharedHistory* own = own_history.load();
  if (own == nullptr) return monotonic_ns();
  return own->stamp_killed(own_index.load());  // the same stamp, by the client itself just before _exit
}

std::vector<CsRecord> SharedHistory::records() const {
  const std::int64_t now = monotonic_ns();
  std::vector<CsRecord> all;
  for (int client = 0; client < clients_; ++client) {
    const ClientSlot& own = slot(client);
    const auto count = static_cast<std::size_t>(own.records.load(std::memory_order_acquire));
    const CsRecord* first = records_of(client);
    const auto from = all.size();
    all.insert(all.end(), first, first + std::min(count, capacity_));
    // The last moment a client that never left its section could have acted.
    const std::int64_t died = own.died_ns.load(), finished = own.finished_ns.load();
    const std::int64_t dead_by = own.dead_by_ns.load();
    const std::int64_t last_act = died > 0 ? (dead_by > 0 ? std::min(dead_by, died) : died) : finished > 0 ? finished : now;
    for (auto it = all.begin() + static_cast<std::ptrdiff_t>(from); it != all.end(); ++it) {
      if (it->stage == CsStage::inside) it->exit_ns = std::max(last_act, it->enter_ns);
      if (it->stage != CsStage::closed) it->released_ns = it->exit_ns;
    }
  }
  std::sort(all.begin(), all.end(), [](const CsRecord& a, const CsRecord& b) { return a.enter_ns < b.enter_ns; });
  return all;
}

std::optional<CsStage> SharedHistory::last_stage(int client) const {
  const auto count = static_cast<std::size_t>(slot(client).records.load(std::memory_order_acquire));
  if (count == 0) return std::nullopt;
  CsRecord& last = records_of(client)[std::min(count, capacity_) - 1];
  return std::atomic_ref<CsStage>(last.stage).load(std::memory_order_acquire);
}

void SharedHistory::set_stage(CsRecord& record, CsStage stage) {
  std::atomic_ref<CsStage>(record.stage).store(stage, std::memory_order_release);
}

}  // namespace locklab::harness
