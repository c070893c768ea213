#include "counter_request.h"

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
  if (!lock) return RequestOutcome::lock_not_taken;
  if ((*lock)->try_acquire(setup.wait) != Acquire::acquired) return RequestOutcome::lock_not_taken;
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
