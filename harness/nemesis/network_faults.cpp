#include "nemesis/network_faults.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "history/history.h"
#include "nemesis/topology_fault.h"
#include "support/redis_probe.h"

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

enum class NetMode { cut, delay, hold, drop };
enum class Phase { acquire, held, release };

Direction direction_of(const std::string& dir) {
  return dir == "up" ? Direction::client_to_server : dir == "down" ? Direction::server_to_client : Direction::both;
}

void apply_mode(const std::vector<TcpProxy*>& links, NetMode mode, milliseconds ms, Direction direction) {
  for (TcpProxy* link : links) switch (mode) {
      case NetMode::cut: link->cut(); break;
      case NetMode::delay: link->delay(ms, direction); break;
      case NetMode::hold: link->hold(direction); break;
      case NetMode::drop: link->drop(direction); break;
    }
}

void restore(const std::vector<TcpProxy*>& links) {
  for (TcpProxy* link : links) {
    link->pass();
    link->heal();
  }
}

// How many SET commands the server has served (INFO commandstats), or nullopt.
std::optional<long long> set_calls(RedisProbe& probe) {
  auto info = probe.read({"INFO", "commandstats"});
  if (!info || info->is_error()) return std::nullopt;
  const std::string text(info->text());
  const auto at = text.find("cmdstat_set:calls=");
  if (at == std::string::npos) return 0;  // no SET served yet
  return std::atoll(text.c_str() + at + std::string_view("cmdstat_set:calls=").size());
}

std::uint64_t held_requests(const std::vector<TcpProxy*>& links) {
  std::uint64_t bytes = 0;
  for (TcpProxy* link : links) bytes += link->counters(Direction::client_to_server).buffered;
  return bytes;
}

// What the faulted links did to their traffic so far: request or reply bytes
// read in a faulted direction (each one held, delayed or dropped there), and
// connections a cut refused a request. It grows only once the client sent or
// was sent something while the mode was on: being faulted is not yet having
// acted on anything.
std::uint64_t faulted_traffic(const std::vector<TcpProxy*>& links, NetMode mode, Direction direction) {
  std::uint64_t seen = 0;
  for (TcpProxy* link : links)
    seen += mode == NetMode::cut ? link->refused_connections() : link->counters(direction).received;
  return seen;
}

class NetFault final : public GatedFault {
 public:
  NetFault(FaultSpec spec, NetMode mode, milliseconds ms, Direction direction, int client, Phase phase,
           std::string point, milliseconds ttl)
      : GatedFault(std::move(spec), phase == Phase::release ? std::move(point) : std::string(kCsEnter), client),
        mode_(mode),
        ms_(ms),
        direction_(direction),
        client_(client),
        phase_(phase),
        ttl_(ttl),
        contender_(std::string(kCsEnter), -1) {}

  FaultNeeds needs() const override {
    FaultNeeds needs;
    needs.client_proxies = true;
    needs.lock_key = phase_ == Phase::acquire;  // took_server()
    return needs;
  }
  milliseconds allowance(milliseconds ttl) const override { return 2 * long_patience(ttl) + ms_; }
  std::string why_not_acted() const override {
    if (phase_ == Phase::acquire && traffic_seen_ == 0)
      return "client " + std::to_string(client_) + " sent nothing while its links were faulted (" + what() +
             "): its traffic never met them";
    return GatedFault::why_not_acted();
  }
  StepHook client_step_hook(int client) override {
    StepHook mine = gate_.hook(client), theirs = contender_.hook(client);
    if (!mine) return theirs;
    return [mine, theirs](std::string_view point) {
      mine(point);
      theirs(point);
    };
  }

  void before_run(NemesisContext& context) override {
    if (topology(context) == nullptr) return note(context, "no topology: nothing done");
    if (phase_ == Phase::acquire) {
      links_ = topology(context)->client_links(client_);
      apply_mode(links_, mode_, ms_, direction_);  // in effect on return: every byte read from now on meets it
      traffic_before_ = faulted_traffic(links_, mode_, direction_);
      applied_ = true;
      note(context, what() + " on client " + std::to_string(client_) + "'s links while it acquires");
      hold_the_others(context);
    }
    gate_.arm();
  }

  void tick(NemesisContext& context) override {
    if (done_ || topology(context) == nullptr) return;
    if (phase_ == Phase::acquire) note_traffic(context);
    if (!others_.empty()) let_the_others_go_once_first(context);
    const int holder = gate_.parked();
    if (holder < 0) return;
    switch (phase_) {
      case Phase::acquire: return tick_acquire(context, holder);
      case Phase::held: return tick_held(context, holder);
      case Phase::release: return tick_release(context, holder);
    }
  }

  void undo(NemesisContext& context) override {
    contender_.release();
    restore(others_);
    others_.clear();
    if (applied_ && phase_ == Phase::acquire) note_traffic(context);
    if (applied_) {
      restore(links_);
      note(context, "links restored at the end of the run");
      if (cut_.since_ns != 0 && cut_.until_ns == 0) cut_.until_ns = monotonic_ns();
    }
  }

  // at=held: the holder was cut off past the earliest end of its lease while
  // another client was trying; only a mode that keeps its renewals from the
  // server can (a cut, or requests held or dropped on their way up, or delayed
  // by a lease or more). The other phases: acting counts.
  Bite bite(const BiteEvidence& e) const override {
    if (phase_ != Phase::held || !acted()) return GatedFault::bite(e);
    const bool reaches_up = direction_ != Direction::server_to_client;
    if (mode_ != NetMode::cut && !(reaches_up && (mode_ != NetMode::delay || ms_ >= e.ttl)))
      return {false, what() + " does not keep the holder's requests from the server for a lease"};
    const auto section = e.section_of(cut_.holder, cut_.since_ns);
    if (!section) return {false, "client " + std::to_string(cut_.holder) + " was not inside when its links failed"};
    const std::int64_t until = cut_.until_ns != 0 ? cut_.until_ns : e.end_ns;
    const std::string cut = "client " + std::to_string(cut_.holder) + "'s links failed from " + e.at(cut_.since_ns) +
                            " to " + e.at(until) + " while it was inside";
    // Another client got in meanwhile: its lease had lapsed, the race ran.
    if (const auto entered = e.other_entered(cut_.holder, cut_.since_ns, until))
      return {true, cut + "; client " + std::to_string(entered->client) + " got in at " + e.at(entered->enter_ns)};
    const std::int64_t lapse = e.latest_lease_end(*section, cut_.since_ns);
    const std::string by = " (its lease had ended by " + e.at(lapse) + ")";
    if (until <= lapse) return {false, cut + by + ": restored before that"};
    const auto hit = e.other_waiting(cut_.holder, lapse, until);
    if (!hit) return {false, cut + by + ", but no other client was trying meanwhile"};
    return {true, cut + by + "; " + contender_text(e, *hit)};
  }

 private:
  std::string what() const {
    switch (mode_) {
      case NetMode::cut: return "cut";
      case NetMode::delay: return "delay " + ms_text(ms_);
      case NetMode::hold: return "hold";
      case NetMode::drop: return "drop";
    }
    return "?";
  }

  // at=acquire: client N's request must be the one that takes the lock (a
  // late "OK" is the story), so the other clients' requests wait in their
  // links until the key is on every lock server -- or client N's attempt
  // ended, or a TTL passed.
  void hold_the_others(NemesisContext& context) {
    for (int i = 0; context.history != nullptr && i < context.history->clients(); ++i)
      if (i != client_)
        for (TcpProxy* link : topology(context)->client_links(i)) others_.push_back(link);
    for (TcpProxy* link : others_) link->hold(Direction::client_to_server);
    for (const auto& endpoint : context.endpoints)
      if (auto probe = RedisProbe::connect(endpoint)) probes_.push_back(std::move(probe).value());
    for (RedisProbe& probe : probes_) set_calls_before_.push_back(set_calls(probe).value_or(-1));
    since_ = Clock::now();
    attempts_before_ = context.history != nullptr ? context.history->slot(client_).attempts.load() : 0;
  }

  // Client N's request took the lock on server j when the key is there, or
  // when j served a SET since the others were held: nobody else can have sent
  // it, and the key was absent at the start. The count is what makes this
  // hold on every run: a Redlock attempt that times out deletes its keys again
  // within its node timeout, a window a coordinator tick can miss on a loaded
  // machine.
  bool took_server(NemesisContext& context, std::size_t j) {
    if (probes_[j].exists(lock_key_of(context, client_)).value_or(false)) return true;
    const auto calls = set_calls(probes_[j]);
    return calls && set_calls_before_[j] >= 0 && *calls > set_calls_before_[j];
  }

  void let_the_others_go_once_first(NemesisContext& context) {
    bool everywhere = !probes_.empty();
    for (std::size_t j = 0; everywhere && j < probes_.size(); ++j) everywhere = took_server(context, j);
    const bool attempt_over =
        context.history != nullptr && context.history->slot(client_).attempts.load() > attempts_before_;
    if (!everywhere && !attempt_over && Clock::now() - since_ < ttl_) return;
    restore(others_);
    others_.clear();
    probes_.clear();
    set_calls_before_.clear();
    note(context, everywhere ? "client " + std::to_string(client_) + "'s request took the lock on every server; "
                                   "the other clients' requests let through"
                             : "the other clients' requests let through");
  }

  // at=acquire acts once the target's traffic met the faulted links (a byte
  // held, delayed or dropped there, a connection refused by the cut), not when
  // the links were faulted: a target that never sent anything was never touched.
  // Read while the mode is on: before the links are restored.
  void note_traffic(NemesisContext& context) {
    if (acted() || !applied_) return;
    const std::uint64_t now = faulted_traffic(links_, mode_, direction_);
    if (now <= traffic_before_) return;
    traffic_seen_ = now - traffic_before_;
    note_acted(context, "client " + std::to_string(client_) + "'s traffic met the faulted links (" +
                            std::to_string(now - traffic_before_) +
                            (mode_ == NetMode::cut    ? " connections refused)"
                             : mode_ == NetMode::delay ? " bytes delayed)"
                             : mode_ == NetMode::hold  ? " bytes held)"
                                                       : " bytes dropped)"));
  }

  // The acquire got through (late); the client believes it holds: let it stay
  // inside until another client took the lock that expired meanwhile.
  void tick_acquire(NemesisContext& context, int holder) {
    if (!waiting_) {
      waiting_ = true;
      note_traffic(context);
      restore(links_);
      applied_ = false;
      begin_watch(context, holder);
      note(context, "client " + std::to_string(holder) + "'s acquire returned acquired; links restored");
      return;
    }
    wait_for_other(context, holder, long_patience(ttl_));
  }

  // The holder is inside: its links fail until another client took the lock.
  void tick_held(NemesisContext& context, int holder) {
    if (!waiting_) {
      waiting_ = true;
      links_ = topology(context)->client_links(holder);
      apply_mode(links_, mode_, ms_, direction_);
      applied_ = true;
      begin_watch(context, holder);
      note_acted(context, what() + " on client " + std::to_string(holder) + "'s links while it holds the lock");
      cut_ = {holder, monotonic_ns(), 0};
      return;
    }
    if (wait_for_other(context, holder, long_patience(ttl_))) {
      restore(links_);
      applied_ = false;
      cut_.until_ns = monotonic_ns();
    }
  }

  // The holder's release goes out into the faulted link; the next holder parks
  // inside; then the release is let through, and a third client may find the
  // lock free although the second still holds it.
  void tick_release(NemesisContext& context, int holder) {
    if (stage_ == 0) {
      links_ = topology(context)->client_links(holder);
      apply_mode(links_, mode_, ms_, direction_);
      applied_ = true;
      note_acted(context, what() + " on client " + std::to_string(holder) + "'s links as it releases");
      contender_.arm(holder);
      gate_.release();
      since_ = Clock::now();
      stage_ = 1;
      return;
    }
    const int next = contender_.parked();
    if (stage_ == 1) {
      if (next < 0) {
        if (Clock::now() - since_ > long_patience(ttl_)) {
          note(context, "no other client acquired within " + ms_text(long_patience(ttl_)));
          restore(links_);
          applied_ = false;
          contender_.release();
          done_ = true;
        }
        return;
      }
      const auto pending = held_requests(links_);
      restore(links_);
      applied_ = false;
      begin_watch(context, next);
      note(context, "client " + std::to_string(next) + " acquired; client " + std::to_string(holder) +
                        "'s release let through (" + std::to_string(pending) + " request bytes were held)");
      stage_ = 2;
      return;
    }
    if (watch_over(context, next, short_patience(ttl_), contender_,
                   "a third client acquired while client " + std::to_string(next) + " still holds",
                   " while client " + std::to_string(next) + " holds"))
      done_ = true;
  }

  // True once the episode is over (another client acquired, or the bound passed).
  bool wait_for_other(NemesisContext& context, int holder, milliseconds bound) {
    if (!watch_over(context, holder, bound, gate_, overtaken_note(holder))) return false;
    done_ = true;
    return true;
  }

  NetMode mode_;
  milliseconds ms_;
  Direction direction_;
  int client_;
  Phase phase_;
  milliseconds ttl_;
  CrossProcessGate contender_;  // at=release: the client that takes the lock while the release is held
  std::vector<TcpProxy*> links_;
  std::vector<TcpProxy*> others_;  // at=acquire: the other clients' links, held until client N's request landed
  std::vector<RedisProbe> probes_;
  std::vector<long long> set_calls_before_;  // per probe, when the others were held (-1: unreadable)
  std::int64_t attempts_before_ = 0;
  std::uint64_t traffic_before_ = 0;  // at=acquire: faulted_traffic() as the mode was set
  std::uint64_t traffic_seen_ = 0;    // at=acquire: what of it met the faulted links (0: nothing yet)
  bool applied_ = false;
  bool waiting_ = false;
  bool done_ = false;
  int stage_ = 0;
  struct {
    int holder = -1;
    std::int64_t since_ns = 0, until_ns = 0;  // at=held: the holder's links failed, and were restored
  } cut_;
};

// ---- unavailable ------------------------------------------------------------------------

// At acquire it acts once client N's acquire failed on the faulted links. At
// release it acts once the holder's release returned while its links refused
// it: the release failed as the client saw it, or the proxy refused its
// requests (connections reset, or replies dropped) whatever the client heard.
// A library that reports such a release as a clean one hides the failure: the
// record says what the client heard (`release_heard`) next to what the proxy did.
class UnavailableFault final : public GatedFault {
 public:
  UnavailableFault(FaultSpec spec, Phase phase, bool drop_reply, bool until_other, int client, milliseconds bound)
      : GatedFault(std::move(spec), std::string(kCsExit), -1),
        phase_(phase),
        drop_reply_(drop_reply),
        until_other_(until_other),
        client_(client),
        bound_(bound) {}

  FaultNeeds needs() const override {
    FaultNeeds needs;
    needs.client_proxies = true;
    return needs;
  }
  // until=other-acquired: the release's bound, then as long again kept off.
  milliseconds allowance(milliseconds) const override { return until_other_ ? 2 * bound_ : bound_; }
  StepHook client_step_hook(int client) override {
    return phase_ == Phase::release ? gate_.hook(client) : StepHook{};
  }
  nlohmann::json record() const override {
    nlohmann::json out = GatedFault::record();
    if (phase_ != Phase::release || target_ < 0) return out;
    out["refused"] = {{"what", drop_reply_ ? "reply bytes dropped" : "connections reset"}, {"count", refusals_}};
    // The connections open as the refusal began: an idle (pooled) one is left
    // open, and is reset and counted only if a request comes on it.
    if (!drop_reply_) out["refused"]["connections_open_before"] = open_before_;
    if (!release_heard_.empty()) out["release_heard"] = release_heard_;
    out["failure_hidden"] = hidden();
    return out;
  }

  void before_run(NemesisContext& context) override {
    if (topology(context) == nullptr) return note(context, "no topology: nothing done");
    if (phase_ == Phase::acquire) start(context, client_, "acquires");
    else gate_.arm();
  }

  void tick(NemesisContext& context) override {
    if (topology(context) == nullptr) return;
    if (phase_ == Phase::release && target_ < 0 && gate_.parked() >= 0) {
      start(context, gate_.parked(), "releases");
      gate_.release();
    }
    if (!applied_) return;
    if (phase_ == Phase::release) return tick_release(context);
    if (observed(context) > baseline_) {
      end_acting(context, "client " + std::to_string(target_) + "'s acquire failed (" +
                              (drop_reply_ ? "unknown outcome" : "error") + "); links restored");
    } else if (Clock::now() - since_ > bound_) {
      end(context, "no failure seen within " + ms_text(bound_) + "; links restored");
    }
  }

  void undo(NemesisContext& context) override {
    if (phase_ == Phase::release) release_heard_ = heard(context);
    if (!applied_) return;
    if (phase_ == Phase::release && kept_refusing_) return end(context, "links restored at the end of the run");
    if (phase_ == Phase::release) return settle_release(context, "at the end of the run");
    if (observed(context) > baseline_) return end_acting(context, "links restored at the end of the run");
    end(context, "links restored at the end of the run; no failure seen");
  }

 private:
  std::int64_t observed(const NemesisContext& context) const {
    if (context.history == nullptr) return 0;
    const ClientSlot& slot = context.history->slot(target_);
    return phase_ == Phase::acquire ? slot.errors.load() + slot.unknown.load() + slot.timeouts.load()
                                    : slot.release_errors.load();
  }

  // What the proxies refused the target so far: connections reset as a
  // request came (TcpProxy::refuse(): an idle one is left open), or reply bytes dropped.
  // Refusals count up to `until` only: the release returned then, and a
  // refusal after it is of the client's next request, not of its release.
  std::uint64_t proxy_refusals(Clock::time_point until = Clock::time_point::max()) const {
    std::uint64_t refused = 0;
    for (TcpProxy* link : links_)
      refused += drop_reply_ ? link->counters(Direction::server_to_client).dropped : link->refused_connections_until(until);
    return refused;
  }

  // The record of the section whose release the fault refused, once that release returned.
  std::optional<CsRecord> released_section(const NemesisContext& context) const {
    if (context.history == nullptr || target_ < 0 || records_before_ < 1) return std::nullopt;
    std::int64_t index = 0;
    for (const CsRecord& record : context.history->records()) {
      if (static_cast<int>(record.client) != target_ || ++index < records_before_) continue;
      if (record.release == kNoReleaseOutcome) return std::nullopt;
      return record;
    }
    return std::nullopt;
  }

  // When the target's release returned, or now if it has not.
  Clock::time_point release_returned_at(const NemesisContext& context) const {
    const auto section = released_section(context);
    return section ? Clock::time_point(std::chrono::nanoseconds(section->released_ns)) : Clock::now();
  }


  // The target's release() returned: its section's record is closed, or it began another.
  bool release_returned(const NemesisContext& context) const {
    if (context.history == nullptr) return false;
    return context.history->slot(target_).records.load() > records_before_ ||
           context.history->last_stage(target_) == CsStage::closed;
  }

  void tick_release(NemesisContext& context) {
    if (kept_refusing_) return tick_kept_refusing(context);
    if (observed(context) > baseline_ || release_returned(context)) return settle_release(context, "");
    if (Clock::now() - since_ > bound_) end(context, "no release returned within " + ms_text(bound_) + "; links restored");
  }

  // The release is over (or the run): acted when it failed as the client saw
  // it, or when the proxy refused any of its requests meanwhile.
  void settle_release(NemesisContext& context, const std::string& when) {
    refusals_ = proxy_refusals(release_returned_at(context)) - refusals_before_;
    failed_ = observed(context) > baseline_;
    const std::string who = "client " + std::to_string(target_) + "'s release";
    const std::string refused =
        std::to_string(refusals_) + (drop_reply_ ? " reply bytes dropped" : " connections reset as they sent a request");
    const std::string tail = "; links restored" + (when.empty() ? "" : " " + when);
    if (!failed_ && refusals_ == 0) return end(context, who + " returned and the proxy refused nothing" + tail);
    const std::string what = failed_ ? who + " failed (outcome unknown; " + refused + ")"
                                     : who + " returned without a failure while the proxy refused it (" + refused + ")";
    if (until_other_ && when.empty()) return keep_refusing(context, what);
    end_acting(context, what + tail);
  }

  // until=other-acquired: the holder stays cut off from the servers after its
  // refused release -- its next acquire and any renewal are refused too -- so
  // what the others meet is the lock that release left behind, never its
  // owner coming back first to re-enter it (a reentrant lock would hide the stall).
  void keep_refusing(NemesisContext& context, const std::string& what) {
    note_acted(context, what + "; its links stay refused until another client acquires");
    kept_refusing_ = true;
    begin_watch(context, target_);
  }

  void tick_kept_refusing(NemesisContext& context) {
    if (overtaken(context, target_))
      return end(context, "another client acquired: client " + std::to_string(target_) + "'s links restored");
    if (Clock::now() - since_ > bound_)
      end(context, "no other client acquired within " + ms_text(bound_) + "; client " + std::to_string(target_) +
                       "'s links restored");
  }

  // The outcome the target's release answered ("" if it never returned).
  std::string heard(const NemesisContext& context) const {
    const auto section = released_section(context);
    return section ? to_string(static_cast<Release>(section->release)) : "";
  }

  bool hidden() const { return !failed_ && refusals_ > 0 && !release_heard_.empty() && release_heard_ != "error"; }

  void start(NemesisContext& context, int client, const std::string& when) {
    target_ = client;
    links_ = topology(context)->client_links(client);
    baseline_ = observed(context);
    if (context.history != nullptr) records_before_ = context.history->slot(client).records.load();
    refusals_before_ = proxy_refusals();
    open_before_ = 0;
    for (TcpProxy* link : links_) open_before_ += link->open_connections();
    if (drop_reply_) apply_mode(links_, NetMode::drop, 0ms, Direction::server_to_client);
    else  // each connection reset as a request arrives: a refusal counted is a request refused
      for (TcpProxy* link : links_) link->refuse();
    applied_ = true;
    since_ = Clock::now();
    refused_from_ns_ = monotonic_ns();
    const std::string what = std::string(drop_reply_ ? "requests applied, replies dropped" : "connections refused (reset)") +
                             " for client " + std::to_string(client) + " as it " + when;
    // Acted only once the target's request failed on these links, or the
    // proxy refused it (end_acting): being faulted is not yet having refused anything.
    note(context, what);
  }

  void end(NemesisContext& context, const std::string& what) {
    restore(links_);
    applied_ = false;
    note(context, what);
  }
  // The client's request failed on the faulted links, or was refused: the fault acted.
  void end_acting(NemesisContext& context, const std::string& what) {
    restore(links_);
    applied_ = false;
    note_acted(context, what);
  }

 public:
  // at=release: the holder's release could not reach the server, and another
  // client was trying afterwards (the key it left is what it must get past).
  // At acquire: acting counts.
  Bite bite(const BiteEvidence& e) const override {
    if (phase_ != Phase::release || !acted()) return GatedFault::bite(e);
    const std::string refused = "client " + std::to_string(target_) + "'s release was refused (from " +
                                e.at(refused_from_ns_) + ")";
    const auto hit = e.other_waiting(target_, refused_from_ns_, e.end_ns);
    if (!hit) return {false, refused + ", and no other client tried afterwards"};
    return {true, refused + "; " + contender_text(e, *hit)};
  }

 private:

  Phase phase_;
  bool drop_reply_;
  bool until_other_;     // at=release: the links stay refused until another client acquired
  bool kept_refusing_ = false;  // ... and they are now, since the release returned
  int client_;
  milliseconds bound_;
  int target_ = -1;
  std::vector<TcpProxy*> links_;
  bool applied_ = false;
  std::int64_t baseline_ = 0;
  std::int64_t records_before_ = 0;  // the target's records as its release began: its section is the last
  std::uint64_t refusals_before_ = 0;
  std::uint64_t refusals_ = 0;
  std::size_t open_before_ = 0;  // the target's connections open as the refusal began
  bool failed_ = false;
  std::string release_heard_;
  std::int64_t refused_from_ns_ = 0;  // when the target's links began to refuse
};

// client=N, between 0 and the last client; absent: `fallback`.
Result<int> client_param(const FaultSpec& spec, const FaultEnv& options, int fallback) {
  auto client = param_int(spec, "client", fallback, 0, options.clients - 1);
  if (!client) return fault_error(spec, "client must be between 0 and " + std::to_string(options.clients - 1));
  return static_cast<int>(*client);
}

}  // namespace

Result<std::unique_ptr<Fault>> make_net_fault(const FaultSpec& spec, const FaultEnv& options) {
  if (auto servers = servers_to_act_on(spec, options); !servers) return servers.error();
  if (!spec.has("mode")) return fault_error(spec, "needs mode=cut|delay|hold|drop");
  auto mode = param_choice(spec, "mode", "cut", "cut|delay|hold|drop");
  if (!mode) return mode.error();
  auto ms = param_int(spec, "ms", 0, 0, kMaxFaultMs);
  if (!ms) return ms.error();
  if ((*mode == "delay") != spec.has("ms")) return fault_error(spec, "ms=MS goes with mode=delay, and only with it");
  auto dir = param_choice(spec, "dir", "both", "up|down|both");
  if (!dir) return dir.error();
  if (*mode == "cut" && spec.has("dir")) return fault_error(spec, "a cut resets the whole link: no dir=");
  auto at = param_choice(spec, "at", "held", "acquire|held|release");
  if (!at) return at.error();
  auto target = param_choice(spec, "target", "holder", "holder");
  if (!target) return target.error();
  if (spec.has("target") && spec.has("client")) return fault_error(spec, "give client=N or target=holder, not both");
  if (*at == "acquire" && spec.has("target")) return fault_error(spec, "at=acquire acts on client=N (no holder yet)");
  auto client = client_param(spec, options, *at == "acquire" ? 0 : -1);
  if (!client) return client.error();
  if (spec.has("point") && *at != "release") return fault_error(spec, "point= goes with at=release");
  const std::string point = spec.has("point") ? spec.params.at("point") : std::string(kCsExit);
  const NetMode net_mode = *mode == "cut" ? NetMode::cut : *mode == "delay" ? NetMode::delay
                         : *mode == "hold" ? NetMode::hold : NetMode::drop;
  const Phase phase = *at == "acquire" ? Phase::acquire : *at == "held" ? Phase::held : Phase::release;
  return std::unique_ptr<Fault>(std::make_unique<NetFault>(spec, net_mode, milliseconds{*ms}, direction_of(*dir),
                                                           *client, phase, point, milliseconds{options.ttl_ms}));
}

Result<std::unique_ptr<Fault>> make_unavailable_fault(const FaultSpec& spec, const FaultEnv& options) {
  if (auto servers = servers_to_act_on(spec, options); !servers) return servers.error();
  auto at = param_choice(spec, "at", "acquire", "acquire|release");
  if (!at) return at.error();
  auto mode = param_choice(spec, "mode", "refuse", "refuse|drop-reply");
  if (!mode) return mode.error();
  if (*at == "release" && spec.has("client")) return fault_error(spec, "at=release acts on the holder (no client=)");
  auto until = param_choice(spec, "until", "release-returned", "release-returned|other-acquired");
  if (!until) return until.error();
  if (*at != "release" && spec.has("until")) return fault_error(spec, "until= goes with at=release");
  // A dropped reply still lets the request through: the holder could renew or
  // take the lock again while "cut off", which is no longer this story.
  if (*until == "other-acquired" && *mode == "drop-reply")
    return fault_error(spec, "until=other-acquired goes with mode=refuse (a dropped reply lets the request through)");
  auto client = client_param(spec, options, 0);
  if (!client) return client.error();
  // A dropped reply shows only when the client's command times out.
  const milliseconds bound{std::max(2000, options.wait_ms + options.ttl_ms) + 2 * options.ttl_ms + 2000};
  return std::unique_ptr<Fault>(std::make_unique<UnavailableFault>(
      spec, *at == "acquire" ? Phase::acquire : Phase::release, *mode == "drop-reply", *until == "other-acquired",
      *client, bound));
}

}  // namespace locklab::harness
