#include "nemesis/process_faults.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <new>
#include <thread>

#include "history/history.h"
#include "servers/clock_jump.h"

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

// A hook that reaches `at` in a client `client` selects (-1: any).
bool targets(int wanted, int client) { return wanted < 0 || wanted == client; }

}  // namespace

std::string nobody_did(int client, const std::string& did) {
  return client < 0 ? "no client " + did : "client " + std::to_string(client) + " never " + did;
}

// --- shared state -----------------------------------------------------------------

SharedCells::SharedCells(std::size_t count) : bytes_(sizeof(std::atomic<std::int64_t>) * std::max<std::size_t>(count, 1)) {
  void* base = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) throw std::bad_alloc();
  cells_ = static_cast<std::atomic<std::int64_t>*>(base);
  for (std::size_t i = 0; i < bytes_ / sizeof(std::atomic<std::int64_t>); ++i) new (&cells_[i]) std::atomic<std::int64_t>(0);
}

SharedCells::~SharedCells() { ::munmap(cells_, bytes_); }

nlohmann::json applied_json(const std::vector<AppliedEvent>& events, std::int64_t go_ns) {
  nlohmann::json applied = nlohmann::json::array();
  for (const auto& event : events)
    applied.push_back({{"t_ms", go_ns > 0 ? static_cast<double>((event.ns - go_ns) / 10'000) / 100.0 : 0.0},
                       {"what", event.what}});
  return applied;
}

// --- parking ----------------------------------------------------------------------

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
  for (const auto& [client, stopped] : stopped_)
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
  events_.push_back({stopped.since_ns, "SIGSTOP client " + std::to_string(client) + " (pid " +
                                           std::to_string(context.client_pids[i]) + group_text(stopped.guard) +
                                           ") at " + rules_[static_cast<std::size_t>(rule)].at});
  stopped_.emplace(client, std::move(stopped));
  return true;
}

std::optional<ClientParking::Resume> ClientParking::why_resume(const NemesisContext& context, int client,
                                                               const Stopped& stopped) {
  const PauseRule& rule = rules_[static_cast<std::size_t>(stopped.rule)].pause;
  const std::int64_t waited = monotonic_ns() - stopped.since_ns;
  switch (rule.until) {
    case PauseRule::Until::time:
      if (waited >= std::chrono::nanoseconds(rule.ms).count()) return Resume{"after " + ms_text(waited)};
      break;
    case PauseRule::Until::expired:
      if (key_expired(context, client)) return Resume{"the key expired, after " + ms_text(waited)};
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
    (*cells)[1 + static_cast<std::size_t>(client)].store(monotonic_ns());
    stamp_own_death();  // the section ends here, not when the coordinator reaps us
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

// --- clock-skew -------------------------------------------------------------------

ClockSkewFault::ClockSkewFault(FaultSpec spec, int client, milliseconds offset)
    : spec_(std::move(spec)), client_(client), offset_(offset) {}

ClockSkewFault::~ClockSkewFault() {
  std::error_code ignored;
  if (!offset_dir_.empty()) std::filesystem::remove_all(offset_dir_, ignored);
}

std::string ClockSkewFault::offset_file() {
  if (!offset_dir_.empty()) return offset_dir_ + "/clock-offset-ms";
  if (!offset_problem_.empty()) return "";
  std::string pattern = (std::filesystem::temp_directory_path() / "locklab-skew-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    offset_problem_ = "cannot make a folder for the clock offset: " + std::string(std::strerror(errno));
    return "";
  }
  offset_dir_ = pattern;
  if (auto written = write_clock_offset(offset_dir_ + "/clock-offset-ms", offset_); !written) {
    offset_problem_ = written.error().message;
    return "";
  }
  return offset_dir_ + "/clock-offset-ms";
}

std::vector<std::string> ClockSkewFault::client_environment(int client) {
  if (client != client_) return {};
  const std::string file = offset_file();
  if (file.empty()) return {};
  return {"LD_PRELOAD=" + clock_shim_path(), "LOCKLAB_CLOCK_OFFSET_FILE=" + file};
}

// The skewed client's adapter, if it runs one (any process of its cgroup, or
// of its process group without one, other than itself: a setsid watchdog
// too), must have the shim loaded, or its clock was never skewed.
void ClockSkewFault::check_adapter_clock(pid_t client_pid) {
  for (const pid_t member : client_members(client_pid)) {
    if (member == client_pid) continue;
    const bool skewed = runs_clock_shim(member);
    if (adapter_clock_ != AdapterClock::not_skewed)
      adapter_clock_ = skewed ? AdapterClock::skewed : AdapterClock::not_skewed;
    adapter_note_ = "client " + std::to_string(client_) + "'s adapter (pid " + std::to_string(member) + ") " +
                    (skewed ? "runs under the clock shim: its wall clock is off too"
                            : "does not have the clock shim loaded" +
                                  (offset_problem_.empty() ? std::string() : " (" + offset_problem_ + ")") +
                                  ": its wall clock is not skewed");
    events_.push_back({monotonic_ns(), adapter_note_});
  }
}

FaultNeeds ClockSkewFault::needs() const {
  FaultNeeds needs;
  needs.own_servers = false;
  return needs;
}

std::shared_ptr<const WallClock> ClockSkewFault::client_clock(int client) {
  if (client != client_) return nullptr;
  return std::make_shared<const SkewedClock>(offset_);
}

void ClockSkewFault::before_run(NemesisContext& context) {
  go_ns_ = monotonic_ns();
  const std::string sign = offset_.count() >= 0 ? "+" : "";
  events_.push_back({go_ns_, "client " + std::to_string(client_) + "'s wall clock runs " + sign +
                                 std::to_string(offset_.count()) + " ms off"});
  if (client_ >= static_cast<int>(context.client_pids.size())) return;  // thread mode: starts with the others
  check_adapter_clock(context.client_pids[static_cast<std::size_t>(client_)]);
  auto paused = PausedProcess::pause(context.client_pids[static_cast<std::size_t>(client_)]);
  if (!paused) {
    events_.push_back({monotonic_ns(), "could not hold client " + std::to_string(client_) + " back: " +
                                           paused.error().message});
    return;
  }
  held_back_ = std::move(paused).value();
  release_by_ = std::chrono::steady_clock::now() + 10 * context.ttl;
  events_.push_back({monotonic_ns(), "client " + std::to_string(client_) + " held back until another client holds"});
}

void ClockSkewFault::start_skewed_client(const std::string& why) {
  if (!held_back_) return;
  held_back_.reset();  // SIGCONT
  events_.push_back({monotonic_ns(), "client " + std::to_string(client_) + " starts: " + why});
}

void ClockSkewFault::holder_entered(NemesisContext&, int holder) {
  if (holder != client_) start_skewed_client("client " + std::to_string(holder) + " holds the lock");
}

void ClockSkewFault::tick(NemesisContext&) {
  if (held_back_ && std::chrono::steady_clock::now() >= release_by_) start_skewed_client("nobody else got in");
}

void ClockSkewFault::after_run(NemesisContext& context) {
  start_skewed_client("the run ended");
  if (context.history != nullptr && client_ < context.history->clients())
    skewed_attempts_ = context.history->slot(client_).attempts.load();
}

std::string ClockSkewFault::why_not_acted() const {
  if (adapter_clock_ == AdapterClock::not_skewed) return adapter_note_;
  return "client " + std::to_string(client_) + " made no acquire attempt with its skewed clock";
}

// The skewed client tried while another client's lease was live (inside its
// section, before the earliest end of its lease) and its clock, ahead, already
// read that lease as over: at a moment m with m + offset past the lease's end.
// A clock on time or behind cannot see a live lease as expired.
Bite ClockSkewFault::bite(const BiteEvidence& e) const {
  const std::int64_t offset = std::chrono::nanoseconds(offset_).count();
  if (offset <= 0) return {false, "client " + std::to_string(client_) + "'s clock is not ahead: no live lease reads as over"};
  for (const auto& section : e.records) {
    if (static_cast<int>(section.client) == client_) continue;
    // Live for sure until its earliest end; read as over by a clock ahead from
    // when that clock passes its latest end.
    const std::int64_t live_to = std::min(section.exit_ns, e.earliest_lease_end(section));
    const std::int64_t reads_over = e.latest_lease_end(section, 0) - offset;
    if (auto moment = e.waiting(client_, std::max(section.enter_ns, reads_over), live_to))
      return {true, "client " + std::to_string(client_) + " (its clock off by " + std::to_string(offset_.count()) +
                        " ms) was trying at " + e.at(*moment) + " while client " + std::to_string(section.client) +
                        " held a live lease (inside from " + e.at(section.enter_ns) + ")"};
  }
  return {false, "client " + std::to_string(client_) + " never tried while another client held a live lease"};
}

nlohmann::json ClockSkewFault::record() const {
  return {{"spec", spec_.text}, {"applied", applied_json(events_, go_ns_)}};
}

}  // namespace locklab::harness
