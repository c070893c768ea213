#include "nemesis/holder_faults.h"

#include <thread>

#include "history/history.h"

namespace locklab::harness {
namespace {

using std::chrono::milliseconds;

// A hook that reaches `at` in a client `client` selects (-1: any).
bool targets(int wanted, int client) { return wanted < 0 || wanted == client; }

}  // namespace

// --- holder-crash -----------------------------------------------------------------

CrashHolderFault::CrashHolderFault(FaultSpec spec, std::string at, int client, int times)
    : spec_(std::move(spec)),
      at_(std::move(at)),
      client_(client),
      times_(times),
      cells_(std::make_shared<SharedCells>(1 + kMaxFaultClients)) {}

FaultNeeds CrashHolderFault::needs() const {
  FaultNeeds needs;
  needs.own_servers = false;
  needs.process_clients = true;
  return needs;
}

StepHook CrashHolderFault::client_step_hook(int client) {
  if (!targets(client_, client)) return {};
  return [cells = cells_, at = at_, times = times_, client](std::string_view point) {
    if (point != at) return;
    if ((*cells)[0].fetch_add(1) >= times) return;
    // The section ends here, not when the coordinator reaps us; the fault records the death at
    // that same stamp (a later reading could fall after a preemption, past the section's end).
    (*cells)[1 + static_cast<std::size_t>(client)].store(stamp_own_death());
    exit_with_group(kCrashExitCode);  // no release, no destructors: gone, watchdog and adapter (its group) and all
  };
}

static bool is_section_point(std::string_view at) {
  return at == kCsEnter || at == kCsRead || at == kCsExit;
}

// A client that died outside its section (the SETNX/EXPIRE gap) may have left
// its key with no TTL: read once, as soon as its death is seen.
void CrashHolderFault::tick(NemesisContext& context) {
  if (is_section_point(at_)) return;
  for (int c = 0; c < kMaxFaultClients && c < static_cast<int>(context.client_pids.size()); ++c) {
    if ((*cells_)[1 + static_cast<std::size_t>(c)].load() == 0 || keys_without_ttl_.count(c) != 0) continue;
    std::string found;
    bool read_all = true;  // a server that could not be read is read again on the next tick
    for (const auto& endpoint : context.endpoints) {
      auto probe = RedisProbe::connect(endpoint);
      const auto pttl = probe ? probe->pttl(lock_key_of(context, c)) : std::nullopt;
      read_all = read_all && pttl.has_value();
      if (pttl == -1) found = lock_key_of(context, c);
    }
    if (read_all || !found.empty()) keys_without_ttl_[c] = found;
  }
}

Bite CrashHolderFault::bite(const BiteEvidence& evidence) const {
  Bite first{false, why_not_acted()};
  for (int c = 0; c < kMaxFaultClients; ++c) {
    const std::int64_t died = (*cells_)[1 + static_cast<std::size_t>(c)].load();
    if (died == 0) continue;
    const auto key = keys_without_ttl_.find(c);
    Bite bite = crash_bite(evidence, c, died, key == keys_without_ttl_.end() ? "" : key->second);
    if (bite.bit) return bite;
    if (first.what == why_not_acted()) first = bite;
  }
  return first;
}

void CrashHolderFault::after_run(NemesisContext& context) {
  if (context.history != nullptr) go_ns_ = context.history->header().go_ns.load();
  events_.clear();
  for (int c = 0; c < kMaxFaultClients; ++c)
    if (const std::int64_t ns = (*cells_)[1 + static_cast<std::size_t>(c)].load(); ns > 0)
      events_.push_back({ns, "client " + std::to_string(c) + " killed at " + at_});
  std::sort(events_.begin(), events_.end(), [](const auto& a, const auto& b) { return a.ns < b.ns; });
}

nlohmann::json CrashHolderFault::record() const {
  return {{"spec", spec_.text}, {"applied", applied_json(events_, go_ns_)}};
}

std::string CrashHolderFault::why_not_acted() const { return nobody_did(client_, "reached step point " + at_); }

// --- holder-pause -----------------------------------------------------------------

PauseHolderFault::PauseHolderFault(FaultSpec spec, std::string at, int client, PauseRule rule)
    : spec_(std::move(spec)),
      at_(at),
      client_(client),
      claimed_(std::make_shared<SharedCells>(1)),
      parking_(std::make_shared<ClientParking>(std::vector<ClientParking::Rule>{{rule, std::move(at)}})) {}

FaultNeeds PauseHolderFault::needs() const {
  FaultNeeds needs;
  needs.own_servers = false;
  needs.process_clients = true;
  needs.lock_key = parking_->reads_lock_key();
  return needs;
}

StepHook PauseHolderFault::client_step_hook(int client) {
  if (!targets(client_, client)) return {};
  return [claimed = claimed_, parking = parking_, at = at_, client](std::string_view point) {
    if (point != at || (*claimed)[0].exchange(1) != 0) return;
    parking->park(client, 0);
  };
}

void PauseHolderFault::after_run(NemesisContext& context) {
  parking_->resume_all(context);
  if (context.history != nullptr) go_ns_ = context.history->header().go_ns.load();
}

nlohmann::json PauseHolderFault::record() const {
  return {{"spec", spec_.text}, {"applied", applied_json(parking_->events(), go_ns_)}};
}

// A client that parked but could not be stopped (it died first) left an event that says so.
std::string PauseHolderFault::why_not_acted() const {
  if (!parking_->events().empty()) return parking_->events().back().what;
  return nobody_did(client_, "reached step point " + at_);
}

milliseconds PauseHolderFault::allowance(milliseconds ttl) const { return parking_->longest_pause(ttl); }

// --- slow-holder ------------------------------------------------------------------

SlowHolderFault::SlowHolderFault(FaultSpec spec, int client, milliseconds ms)
    : spec_(std::move(spec)), client_(client), ms_(ms), cells_(std::make_shared<SharedCells>(2)) {}

FaultNeeds SlowHolderFault::needs() const {
  FaultNeeds needs;
  needs.own_servers = false;
  return needs;
}

StepHook SlowHolderFault::client_step_hook(int client) {
  if (!targets(client_, client)) return {};
  return [cells = cells_, ms = ms_, client](std::string_view point) {
    if (point != kCsEnter) return;
    std::int64_t none = 0;
    if (!(*cells)[0].compare_exchange_strong(none, client + 1)) return;
    (*cells)[1].store(monotonic_ns());
    std::this_thread::sleep_for(ms);  // this thread only: the process (and its watchdog) runs on
  };
}

void SlowHolderFault::after_run(NemesisContext& context) {
  if (context.history != nullptr) go_ns_ = context.history->header().go_ns.load();
  events_.clear();
  if (const std::int64_t who = (*cells_)[0].load(); who > 0)
    events_.push_back({(*cells_)[1].load(), "client " + std::to_string(who - 1) + " stays in its critical section " +
                                                std::to_string(ms_.count()) + " ms longer"});
}

nlohmann::json SlowHolderFault::record() const {
  return {{"spec", spec_.text}, {"applied", applied_json(events_, go_ns_)}};
}

// The section outlived the earliest end of its lease while another client was trying.
Bite SlowHolderFault::bite(const BiteEvidence& e) const {
  const std::int64_t who = (*cells_)[0].load();
  if (who <= 0) return {false, why_not_acted()};
  const int client = static_cast<int>(who - 1);
  const auto section = e.section_of(client, (*cells_)[1].load());
  if (!section) return {false, "client " + std::to_string(client) + "'s slow section is not on record"};
  const std::string slow = "client " + std::to_string(client) + "'s section ran from " + e.at(section->enter_ns) +
                           " to " + e.at(section->exit_ns);
  if (const auto entered = e.other_entered(client, section->enter_ns, section->exit_ns))
    return {true, slow + "; client " + std::to_string(entered->client) + " got in at " + e.at(entered->enter_ns)};
  // A watchdog lives on (the process runs): by then its lease would have
  // ended but for renewals, which is the race a renewing lock is immune to.
  const std::int64_t lapse = e.latest_lease_end(*section, 0);
  const std::string by = " (its lease would have ended by " + e.at(lapse) + ")";
  if (section->exit_ns <= lapse) return {false, slow + by + ": it left before that"};
  const auto hit = e.other_waiting(client, lapse, section->exit_ns);
  if (!hit) return {false, slow + by + ", but no other client was trying meanwhile"};
  return {true, slow + by + "; " + contender_text(e, *hit)};
}

std::string SlowHolderFault::why_not_acted() const { return nobody_did(client_, "entered its critical section"); }

}  // namespace locklab::harness
