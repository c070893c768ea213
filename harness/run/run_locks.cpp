#include "run/run_locks.h"

#include "support/lock_counts.h"

namespace locklab::harness {
namespace {

using nlohmann::json;

// What one run lock's clients counted, summed over their slots.
LockCounts member_counts(const RunLock& member, const SharedHistory& history) {
  LockCounts counts;
  for (int i = member.first_client; i < member.first_client + member.clients && i < history.clients(); ++i) {
    const ClientSlot& slot = history.slot(i);
    counts.attempts += slot.attempts.load();
    counts.acquired += slot.acquired.load();
    counts.timeouts += slot.timeouts.load();
    counts.errors += slot.errors.load();
    counts.unknown += slot.unknown.load();
    counts.release_errors += slot.release_errors.load();
    if (slot.last_error[0] != '\0') counts.last_error = slot.last_error;
  }
  return counts;
}

}  // namespace

std::function<LockResult(const LockConfig&, int client)> client_lock_maker(const std::vector<RunLock>& locks) {
  return [locks](const LockConfig& config, int client) -> LockResult {
    for (const auto& member : locks)
      if (client >= member.first_client && client < member.first_client + member.clients)
        return member.lock.make(config, client);
    return Error{ErrorKind::usage, "client " + std::to_string(client) + " has no lock in the fleet"};
  };
}

std::vector<std::string> client_keys(const std::vector<RunLock>& locks, const std::string& key) {
  std::vector<std::string> keys;
  for (const auto& member : locks)
    for (int i = 0; i < member.clients; ++i) keys.push_back(locked_key(member.lock, key));
  return keys;
}

LockDescription run_description(const std::vector<RunLock>& locks) {
  if (locks.size() == 1) return locks.front().lock;
  LockDescription fleet;
  fleet.number = "fleet";
  fleet.summary = "a mixed fleet on one key:";
  for (const auto& member : locks) {
    fleet.name += (fleet.name.empty() ? "" : ",") + member.lock.name + ":" + std::to_string(member.clients);
    fleet.summary += " " + member.lock.name + " x" + std::to_string(member.clients);
  }
  fleet.capabilities = run_capabilities(locks);
  return fleet;
}

json fleet_json(const std::vector<RunLock>& locks, const RunOptions& options, const SharedHistory& history) {
  if (options.fleet.empty()) return nullptr;
  json fleet = json::array();
  for (const auto& member : locks) {
    json entry = lock_counts_json(member_counts(member, history));
    entry["lock"] = member.lock.name;
    entry["number"] = member.lock.number;
    entry["clients"] = {member.first_client, member.first_client + member.clients - 1};  // first and last client
    fleet.push_back(std::move(entry));
  }
  return fleet;
}

namespace {

// A violating fleet that mixes a multi-node lock with single-node ones: the
// reason the checker's figures cannot say.
void explain_mixed_nodes(Verdict& verdict, const std::vector<RunLock>& locks) {
  const RunLock* many = nullptr;
  const RunLock* one = nullptr;
  for (const auto& member : locks) (member.lock.capabilities.multi_node ? many : one) = &member;
  if (verdict.verdict != "violation" || many == nullptr || one == nullptr) return;
  verdict.reasons.push_back("fleet: " + many->lock.name + " takes a majority of the lock servers, " + one->lock.name +
                            " only the first: a majority without the first admits both at once");
}

}  // namespace

void judge_fleet(Verdict& verdict, const std::vector<RunLock>& locks, const RunOptions& options,
                 const SharedHistory& history, bool faults_injected) {
  if (options.fleet.empty()) return;
  explain_mixed_nodes(verdict, locks);
  if (faults_injected) return;
  std::vector<std::string> reasons;
  for (const auto& member : locks) {
    const LockCounts counts = member_counts(member, history);
    const std::int64_t failed = counts.errors + counts.unknown + counts.release_errors;
    if (failed == 0) continue;
    reasons.push_back("fleet: " + member.lock.name + " failed " + std::to_string(counts.errors + counts.unknown) +
                      " of " + std::to_string(counts.attempts) + " acquires and " +
                      std::to_string(counts.release_errors) + " releases on the shared key with no fault injected (" +
                      counts.last_error + "): it cannot share the key with the others");
  }
  if (reasons.empty()) return;
  verdict.verdict = "error";
  verdict.reasons.insert(verdict.reasons.begin(), reasons.begin(), reasons.end());
}

}  // namespace locklab::harness
