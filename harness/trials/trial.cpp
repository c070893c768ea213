#include "trials/trial.h"

#include "registry.h"

#include "support/conditions.h"

namespace locklab::harness {

using namespace std::chrono_literals;

Result<TrialClient> acquire_recorded(const std::string& lock_name, const LockConfig& config,
                                     const SharedHistory& history, int client, std::chrono::milliseconds wait) {
  auto made = make_lock(lock_name, config);
  if (!made) return made.error();
  TrialClient result;
  result.lock = std::move(made).value();
  CsRecord record;
  record.client = static_cast<std::uint32_t>(client);
  record.write = CsWrite::none;
  record.want_ns = record.invoke_ns = monotonic_ns();
  result.outcome = result.lock->try_acquire(wait);
  if (result.outcome != Acquire::acquired) {
    result.error = result.lock->last_error();
    return result;
  }
  record.enter_ns = monotonic_ns();
  record.stage = CsStage::inside;
  result.record = history.append(client, record);
  history.enter(client);
  return result;
}

void leave(TrialClient& client, const SharedHistory& history) {
  if (client.record == nullptr) return;
  client.record->exit_ns = monotonic_ns();
  history.exit(static_cast<int>(client.record->client));
  client.record->stage = CsStage::left;
  client.record->release = static_cast<std::uint8_t>(client.lock->release());
  client.record->released_ns = monotonic_ns();
  client.record->stage = CsStage::closed;
}

Status require_held_write(std::uint64_t held_bytes) {
  if (held_bytes > 0) return Done{};
  return Error{ErrorKind::io, "no replication bytes were held after A's attempt: A wrote nothing the replica could miss, "
                              "so the trial tested nothing"};
}

void judge_trial(const TrialClient& first, const TrialClient& second, const SharedHistory& history,
                 FailoverOutcome& outcome) {
  outcome.first_acquire = to_string(first.outcome);
  outcome.first_error = first.error;
  outcome.second_acquire = to_string(second.outcome);
  outcome.second_error = second.error;
  SafetyInput input;
  input.records = history.records();
  input.lock_has_keys = true;
  input.live_max_occupancy = history.header().max_occupancy.load();
  const Safety safety = check_safety(input);
  outcome.double_grants = safety.overlaps.pairs > 0 ? 1 : 0;
  outcome.verdict = judge(safety);
}

namespace {

// B's one attempt may wait this long.
constexpr std::chrono::milliseconds kWaitOfB{1000};

// B must try while A's lease still runs: else B gets in by the TTL alone
// (a failover slower than the lease, as Sentinel's forced fallback after a
// split vote can be), and a second grant would prove nothing.
Status within_lease(std::chrono::milliseconds lease, std::chrono::steady_clock::duration by_b) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(by_b);
  if (lease.count() == 0 || ms < lease) return Done{};
  return Error{ErrorKind::timeout, "the failover took too long: B's attempt would end " + std::to_string(ms.count()) +
                                       " ms after A acquired, past A's " + std::to_string(lease.count()) +
                                       " ms lease, so B could get in by the TTL alone and the trial would show "
                                       "nothing (run it again)"};
}

}  // namespace

Result<FailoverOutcome> run_trial(const TrialSteps& steps) {
  std::string why;
  auto history = SharedHistory::create(2, 4, &why);
  if (!history) return Error{ErrorKind::io, why};

  FailoverOutcome outcome;
  auto old_master = steps.old_master();
  if (!old_master) return old_master.error();
  outcome.old_master = *old_master;

  // A acquires while nothing it writes reaches the replica.
  if (auto held = steps.hold_replication(); !held) return held.error();
  auto first = steps.acquire(*history, 0, 0ms);
  if (!first) return first.error();
  const auto a_acquired = std::chrono::steady_clock::now();
  // A's reply can reach A before the proxy has read the stream the master
  // wrote with it: poll for the held bytes (none come if A wrote nothing).
  wait_until([&] { return steps.held_bytes() > 0; }, 2000ms);
  outcome.held_bytes = steps.held_bytes();
  if (auto tested = require_held_write(outcome.held_bytes); !tested) return tested.error();

  auto promoted = steps.fail_over();
  if (!promoted) return promoted.error();
  outcome.new_master = *promoted;
  if (steps.after_failover)
    if (auto settled = steps.after_failover(); !settled) return settled.error();

  if (auto in_time = within_lease(steps.lease, std::chrono::steady_clock::now() - a_acquired + kWaitOfB); !in_time)
    return in_time.error();
  auto second = steps.acquire(*history, 1, kWaitOfB);
  if (!second) return second.error();
  leave(*second, *history);
  leave(*first, *history);  // A's release goes to the old master, dead or demoted: an error or not its lock
  judge_trial(*first, *second, *history, outcome);
  return outcome;
}

}  // namespace locklab::harness
