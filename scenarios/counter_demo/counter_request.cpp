#include "counter_request.h"

#include <algorithm>
#include <charconv>
#include <thread>

#include "redis/link.h"

#include "registry.h"

namespace locklab::scenarios {
namespace {

// GET counter, gap, SET counter+1. Runs with the lock held (or with none).
RequestOutcome read_modify_write(const CounterSetup& setup) {
  redis::Link link(setup.counter_server);
  auto got = link.command({"GET", setup.counter_key});
  if (!got || got->is_error()) return RequestOutcome::redis_failed;
  const auto text = got->string();
  if (!text) return RequestOutcome::counter_missing;
  long long number = 0;
  const auto [end, problem] = std::from_chars(text->data(), text->data() + text->size(), number);
  if (problem != std::errc{} || end != text->data() + text->size()) return RequestOutcome::redis_failed;

  std::this_thread::sleep_for(setup.gap);  // every request that read n in this window writes n+1

  auto set = link.command({"SET", setup.counter_key, std::to_string(number + 1)});
  if (!set || !set->is_status("OK")) return RequestOutcome::redis_failed;
  return RequestOutcome::incremented;
}

// Waits for the lock up to setup.wait. `error` means nothing reached the server
// (a busy moment), so asking again is safe; `unknown` (we may hold it) is not
// retried: for the blind-DEL generations a clean-up release could free another's lock.
bool acquire_within_wait(DistributedLock& lock, const CounterSetup& setup) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + setup.wait;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    const Acquire outcome = lock.try_acquire(std::max(left, std::chrono::milliseconds{0}));
    if (outcome == Acquire::acquired) return true;
    if (outcome != Acquire::error || Clock::now() >= deadline) return false;
  }
}

}  // namespace

const char* to_string(RequestOutcome outcome) {
  switch (outcome) {
    case RequestOutcome::incremented: return "incremented";
    case RequestOutcome::counter_missing: return "counter missing";
    case RequestOutcome::lock_not_taken: return "lock not taken";
    case RequestOutcome::redis_failed: return "redis failed";
  }
  return "?";
}

RequestOutcome increment_counter(const CounterSetup& setup) {
  auto lock = make_lock(setup.lock_name, setup.lock);
  if (!lock || !acquire_within_wait(**lock, setup)) return RequestOutcome::lock_not_taken;
  const RequestOutcome outcome = read_modify_write(setup);
  (*lock)->release();
  return outcome;
}

Result<std::string> read_counter(const CounterSetup& setup) {
  redis::Link link(setup.counter_server);
  auto got = link.command({"GET", setup.counter_key});
  if (!got) return got.error();
  if (got->is_error()) return Error{ErrorKind::reply, std::string(got->text())};
  return got->string().value_or("null");
}

Status reset_counter(const CounterSetup& setup) {
  redis::Link link(setup.counter_server);
  auto set = link.command({"SET", setup.counter_key, "1"});
  if (!set) return set.error();
  if (!set->is_status("OK")) return Error{ErrorKind::reply, set->describe()};
  return Done{};
}

}  // namespace locklab::scenarios
