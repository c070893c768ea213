#include "nemesis/client_parking.h"

#include <algorithm>
#include <thread>

#include "history/history.h"

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

std::string ms_text(std::int64_t ns) { return std::to_string(ns / 1'000'000) + " ms"; }

milliseconds pause_bound(const PauseRule& rule, milliseconds ttl) {
  return rule.max.count() > 0 ? rule.max : 10 * ttl;
}

// ", and 1 more process of its group" when the pause stopped its adapter too
// ("of its cgroup" when it froze the client's cgroup).
std::string group_text(const PausedProcess& paused) {
  if (paused.members() <= 1) return paused.cgroup() ? ", its cgroup frozen" : "";
  const std::size_t more = paused.members() - 1;
  return ", and " + std::to_string(more) + " more process" + (more == 1 ? "" : "es") + " of its " +
         (paused.cgroup() ? "cgroup, frozen" : "group");
}

}  // namespace

ClientParking::ClientParking(std::vector<Rule> rules)
    : rules_(std::move(rules)), cells_(std::make_shared<SharedCells>(3 * kMaxFaultClients)) {}

void ClientParking::park(int client, int rule) const {
  auto& state = (*cells_)[3 * static_cast<std::size_t>(client)];
  (*cells_)[3 * static_cast<std::size_t>(client) + 1].store(rule);
  (*cells_)[3 * static_cast<std::size_t>(client) + 2].store(monotonic_ns());
  state.store(kParked);
  // The coordinator stops this process while we wait here, and marks us free
  // before it continues us: we leave this loop only after the pause.
  while (state.load() == kParked) std::this_thread::sleep_for(100us);
}

void ClientParking::tick(const NemesisContext& context) {
  for (std::size_t i = 0; i < context.client_pids.size(); ++i) {
    const int client = static_cast<int>(i);
    if (stopped_.count(client) == 0 && (*cells_)[3 * i].load() == kParked) stop(context, client);
  }
  std::vector<std::pair<int, Resume>> due;  // resume() erases: decide first, act after
  for (auto& [client, stopped] : stopped_)
    if (auto why = why_resume(context, client, stopped)) due.emplace_back(client, std::move(*why));
  for (const auto& [client, why] : due) resume(client, why.why, why.exercised);
}

void ClientParking::stop(const NemesisContext& context, int client) {
  const auto i = static_cast<std::size_t>(client);
  const int rule = static_cast<int>((*cells_)[3 * i + 1].load());
  // It died meanwhile: nothing to stop, let it go if it still can.
  if (!stop_waiting(context, client, rule, (*cells_)[3 * i + 2].load())) (*cells_)[3 * i].store(kFree);
}

bool ClientParking::stop_waiting(const NemesisContext& context, int client, int rule, std::int64_t since_ns) {
  const auto i = static_cast<std::size_t>(client);
  if (i >= context.client_pids.size()) {
    events_.push_back({monotonic_ns(), "could not stop client " + std::to_string(client) + ": no process of its own"});
    return false;
  }
  auto paused = PausedProcess::pause(context.client_pids[i]);
  if (!paused) {
    events_.push_back({monotonic_ns(), "could not stop client " + std::to_string(client) + ": " + paused.error().message});
    return false;
  }
  ++stops_;
  Stopped stopped{std::move(paused).value(), rule, since_ns, {}};
  if (context.history != nullptr)
    for (int c = 0; c < context.history->clients(); ++c)
      stopped.records_then.push_back(context.history->slot(c).records.load());
  stopped.others_attempts_then = others_attempts(context, client);
  stopped.inside = context.history != nullptr && context.history->last_stage(client) == CsStage::inside;
  events_.push_back({stopped.since_ns, "SIGSTOP client " + std::to_string(client) + " (pid " +
                                           std::to_string(context.client_pids[i]) + group_text(stopped.guard) +
                                           ") at " + rules_[static_cast<std::size_t>(rule)].at});
  stopped_.emplace(client, std::move(stopped));
  return true;
}

std::optional<ClientParking::Resume> ClientParking::why_resume(const NemesisContext& context, int client,
                                                               Stopped& stopped) {
  const PauseRule& rule = rules_[static_cast<std::size_t>(stopped.rule)].pause;
  const std::int64_t waited = monotonic_ns() - stopped.since_ns;
  switch (rule.until) {
    case PauseRule::Until::time:
      if (waited >= std::chrono::nanoseconds(rule.ms).count()) return Resume{"after " + ms_text(waited)};
      break;
    case PauseRule::Until::expired:
      if (lease_over(context, client, stopped, waited)) return Resume{"the key expired, after " + ms_text(waited)};
      break;
    case PauseRule::Until::other_acquired:
      if (other_acquired(context, client, stopped))
        return Resume{"another client acquired and wrote, after " + ms_text(waited)};
      break;
    case PauseRule::Until::other_inside:
      if (other_inside(context, client, stopped))
        return Resume{"another client entered and is inside, after " + ms_text(waited)};
      break;
  }
  if (waited >= std::chrono::nanoseconds(pause_bound(rule, context.ttl)).count())
    return Resume{"the pause bound (max) ran out, after " + ms_text(waited)};
  if (rule.until != PauseRule::Until::time && others_gone(context, client)) {
    // Others that tried while it lasted were kept out by it: that is the pause at work.
    if (others_attempts(context, client) > stopped.others_attempts_then)
      return Resume{"no other client is left to change anything (they tried meanwhile), after " + ms_text(waited)};
    return Resume{"not exercised: no other client is left to change anything, after " + ms_text(waited), false};
  }
  return std::nullopt;
}

// Its key was read gone since the stop (latched: a contender may take the
// key again at once), and, for a client stopped inside its section, a whole
// lease has passed since the stop. The key can expire a little before the
// section's enter stamp + lease (the SET reached the server before its reply
// came back), and the bite judges a lapse by that stamp (nemesis/bite.cpp,
// pause_inside_bite): resuming at the first sight of the gone key went on
// "before its lease had ended" on a loaded machine. A client stopped in its
// release goes on as soon as the key is gone: its late release is to meet the
// next holder while that one is still inside.
bool ClientParking::lease_over(const NemesisContext& context, int client, Stopped& stopped, std::int64_t waited) {
  if (!stopped.key_seen_gone) stopped.key_seen_gone = key_expired(context, client);
  if (!stopped.key_seen_gone) return false;
  const std::chrono::milliseconds lease = context.lease.count() > 0 ? context.lease : context.ttl;
  return !stopped.inside || waited >= std::chrono::nanoseconds(lease).count();
}

// Expired = the key the client's lock holds (lock_key_of: a library's own,
// "mutex:K") is gone from a majority of the lock servers (all of one). An
// unreadable server counts as not expired: a failed read is never a state.
bool ClientParking::key_expired(const NemesisContext& context, int client) {
  if (probes_.empty())
    for (const auto& endpoint : context.endpoints)
      if (auto probe = RedisProbe::connect(endpoint)) probes_.push_back(std::move(probe).value());
  if (probes_.empty()) return false;
  std::size_t absent = 0;
  const std::string& key = lock_key_of(context, client);
  for (auto& probe : probes_) absent += probe.exists(key) == std::optional<bool>(false) ? 1 : 0;
  return absent >= context.endpoints.size() / 2 + 1;
}

// Another client entered after this one stopped and finished its write: the
// stopped holder's work, resumed now, lands after a newer holder's.
bool ClientParking::reads_lock_key() const {
  for (const auto& rule : rules_)
    if (rule.pause.until == PauseRule::Until::expired) return true;
  return false;
}

bool ClientParking::other_acquired(const NemesisContext& context, int client, const Stopped& stopped) const {
  if (context.history == nullptr) return false;
  for (int c = 0; c < context.history->clients(); ++c) {
    if (c == client || static_cast<std::size_t>(c) >= stopped.records_then.size()) continue;
    const std::int64_t since = context.history->slot(c).records.load() - stopped.records_then[static_cast<std::size_t>(c)];
    if (since >= 2) return true;
    if (since == 1) {
      const auto stage = context.history->last_stage(c);
      if (stage && *stage != CsStage::inside) return true;
    }
  }
  return false;
}

// Another client entered after this one stopped and has not left: its newest
// section began since, and is still open.
bool ClientParking::other_inside(const NemesisContext& context, int client, const Stopped& stopped) const {
  if (context.history == nullptr) return false;
  for (int c = 0; c < context.history->clients(); ++c) {
    if (c == client || static_cast<std::size_t>(c) >= stopped.records_then.size()) continue;
    const std::int64_t since = context.history->slot(c).records.load() - stopped.records_then[static_cast<std::size_t>(c)];
    if (since >= 1 && context.history->last_stage(c) == CsStage::inside) return true;
  }
  return false;
}

bool ClientParking::others_gone(const NemesisContext& context, int client) const {
  if (context.history == nullptr) return false;
  for (int c = 0; c < context.history->clients(); ++c) {
    if (c == client) continue;
    const ClientSlot& slot = context.history->slot(c);
    if (slot.finished_ns.load() == 0 && slot.died_ns.load() == 0) return false;
  }
  return true;
}

std::int64_t ClientParking::others_attempts(const NemesisContext& context, int client) {
  std::int64_t attempts = 0;
  for (int c = 0; context.history != nullptr && c < context.history->clients(); ++c)
    if (c != client) attempts += context.history->slot(c).attempts.load();
  return attempts;
}

void ClientParking::resume(int client, const std::string& why, bool exercised) {
  auto found = stopped_.find(client);
  if (found == stopped_.end()) return;
  if (exercised) ++exercised_;
  // Free first: the client re-checks its state only once it runs again.
  (*cells_)[3 * static_cast<std::size_t>(client)].store(kFree);
  if (before_continue_) before_continue_(client);
  found->second.guard.resume();
  const std::int64_t now = monotonic_ns();
  spans_.push_back({client, rules_[static_cast<std::size_t>(found->second.rule)].at, found->second.since_ns, now});
  events_.push_back({now, "SIGCONT client " + std::to_string(client) + ": " + why});
  stopped_.erase(found);
}

void ClientParking::resume_all(const NemesisContext& context) {
  (void)context;
  while (!stopped_.empty()) resume(stopped_.begin()->first, "the run is over");
  // A client parked but never stopped (the run ended first) must not wait forever.
  for (int c = 0; c < kMaxFaultClients; ++c) (*cells_)[3 * static_cast<std::size_t>(c)].store(kFree);
}

void ClientParking::resume_all_quietly() {
  for (auto& [client, stopped] : stopped_) {
    (*cells_)[3 * static_cast<std::size_t>(client)].store(kFree);
    stopped.guard.resume();
  }
  stopped_.clear();
}

milliseconds ClientParking::longest_pause(milliseconds ttl) const {
  milliseconds longest{0};
  for (const auto& rule : rules_)
    longest = std::max(longest, rule.pause.until == PauseRule::Until::time ? rule.pause.ms : pause_bound(rule.pause, ttl));
  return longest;
}

}  // namespace locklab::harness
