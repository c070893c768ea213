#include "nemesis/node_faults.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "history/history.h"
#include "nemesis/caught_waiters.h"
#include "nemesis/held_contender.h"
#include "nemesis/node_fault_params.h"
#include "nemesis/split_votes.h"
#include "servers/clock_jump.h"
#include "servers/cluster_failover_topology.h"
#include "support/process_control.h"
#include "support/redis_probe.h"

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// The value that keeps a node away from the holder ("it answered the holder too late").
constexpr const char* kBlocker = "locklab:not-for-the-holder";

// Failed attempts of one client (-1: of all): errors and unknown outcomes.
std::int64_t failed_attempts(const NemesisContext& context, int client) {
  if (context.history == nullptr) return 0;
  std::int64_t total = 0;
  for (int i = 0; i < context.history->clients(); ++i)
    if (client < 0 || i == client) total += context.history->slot(i).errors.load() + context.history->slot(i).unknown.load();
  return total;
}

// "0,2,3": appended one number at a time (GCC 12 warns falsely on "," + std::string).
void append_node(std::string& list, std::size_t node) {
  if (!list.empty()) list.push_back(',');
  list.append(std::to_string(node));
}

// Keep the holder off some nodes: before the run, nodes [from, N) carry a key
// of nobody's, so the first holder reaches only nodes [0, from) -- a bare
// majority when from = N/2 + 1 ("the other nodes answered it too late"). Once
// the fault has acted, the blockers go and a contender may use those nodes.
class Blockers {
 public:
  explicit Blockers(std::size_t from) : from_(from) {}
  bool any(std::size_t nodes) const { return from_ < nodes; }
  // Each returns "" when every blocked node took the change, else what did not: a blocker left
  // in place keeps a contender off a node the story frees (and a missing one lets the holder on).
  std::string place(const NemesisContext& context) { return set(context, true); }
  std::string lift(const NemesisContext& context) { return set(context, false); }
  bool blocked(std::size_t node) const { return node >= from_; }

 private:
  std::string set(const NemesisContext& context, bool on) {
    if (placed_ == on) return "";
    placed_ = on;
    std::string failed;
    for (std::size_t j = from_; j < context.endpoints.size(); ++j)
      for (const auto& key : lock_keys(context))  // every lock of a fleet is kept off
        if (auto done = set_on(context.endpoints[j], key, on); !done)
          failed += (failed.empty() ? "" : "; ") + std::string("node ") + std::to_string(j) + ": " + done.error().message;
    return failed.empty() ? "" : std::string(on ? "a blocker could not be placed: " : "a blocker could not be lifted: ") + failed;
  }
  // One node, one key: three tries on a fresh connection (a loaded machine may refuse one).
  static Status set_on(const redis::ConnectionOptions& endpoint, const std::string& key, bool on) {
    Error last{ErrorKind::io, "not tried"};
    for (int attempt = 0; attempt < 3; ++attempt) {
      auto connection = redis::Connection::connect(endpoint);
      if (!connection) {
        last = connection.error();
        continue;
      }
      auto reply = on ? connection->command({"SET", key, kBlocker})
                      : connection->command({"EVAL", "if redis.call('GET', KEYS[1]) == ARGV[1] then return "
                                                     "redis.call('DEL', KEYS[1]) end return 0",
                                             "1", key, kBlocker});
      if (reply && !reply->is_error()) return Done{};
      last = reply ? Error{ErrorKind::reply, std::string(reply->text())} : reply.error();
    }
    return last;
  }
  std::size_t from_;
  bool placed_ = false;
};

// Lock servers where the holder's key is (present and not a blocker), in node order.
// A hash or a list (reentrant-watchdog, a queue) counts as well as a string.
std::vector<std::size_t> holder_nodes(const NemesisContext& context, int holder) {
  std::vector<std::size_t> nodes;
  for (std::size_t j = 0; j < context.endpoints.size(); ++j) {
    auto probe = RedisProbe::connect(context.endpoints[j]);
    if (!probe || probe->exists(lock_key_of(context, holder)) != std::optional<bool>(true)) continue;
    if (probe->value(lock_key_of(context, holder)) != std::optional<std::string>(kBlocker)) nodes.push_back(j);
  }
  return nodes;
}

// What the lock servers held of the holder's key: its serialized value on
// each node (DUMP: a string, a hash or a list alike, without its TTL), read
// just before a fault acts and again right after, through endpoints() (the
// fronts follow a failover). A node keeps the key when it still holds the
// very value it held before: absent, unreadable (down) or another value (a
// contender's, taken meanwhile) is lost.
using KeyDumps = std::vector<std::optional<std::string>>;

KeyDumps dump_holder_key(const NemesisContext& context, int holder) {
  KeyDumps dumps;
  for (const auto& endpoint : context.endpoints) {
    std::optional<std::string> dump;
    auto probe = RedisProbe::connect(endpoint);
    if (probe && probe->value(lock_key_of(context, holder)) != std::optional<std::string>(kBlocker))
      if (auto reply = probe->read({"DUMP", lock_key_of(context, holder)}); reply && reply->is_string())
        dump = std::string(reply->text());
    dumps.push_back(std::move(dump));
  }
  return dumps;
}

struct KeyReading {
  int holder = -1;
  std::int64_t ns = 0;  // 0: never read
  std::size_t before = 0;  // nodes with the holder's key as the fault acted
  std::size_t kept = 0;    // ... of which still hold that very value after it
  std::size_t nodes = 0;
  bool lost() const { return ns != 0 && before > 0 && kept < nodes / 2 + 1; }  // a majority lost it (all of one)
};

KeyReading compare_key(const NemesisContext& context, int holder, const KeyDumps& before) {
  const KeyDumps after = dump_holder_key(context, holder);
  KeyReading reading{holder, monotonic_ns(), 0, 0, context.endpoints.size()};
  for (std::size_t j = 0; j < before.size() && j < after.size(); ++j) {
    reading.before += before[j] ? 1 : 0;
    reading.kept += before[j] && after[j] == before[j] ? 1 : 0;
  }
  return reading;
}

std::string reading_text(const BiteEvidence& e, const KeyReading& reading, const std::string& where) {
  const std::string whose = reading.holder < 0 ? "the lock's" : "client " + std::to_string(reading.holder) + "'s";
  return whose + " key: on " + std::to_string(reading.before) + " of " +
         std::to_string(reading.nodes) + " server(s) as the fault acted, still there on " +
         std::to_string(reading.kept) + " " + where + " at " + e.at(reading.ns);
}

// The holder was still inside at `ns` and another client tried while it was:
// someone could take what the fault took from it.
Bite holder_met(const BiteEvidence& e, int holder, std::int64_t ns, const std::string& what) {
  const auto section = e.section_of(holder, ns);
  if (!section) return {false, what + ", but the holder was no longer inside"};
  const auto hit = e.other_waiting(holder, ns, section->exit_ns);
  if (!hit) return {false, what + ", but no other client tried while it was still inside"};
  return {true, what + ", while the holder was inside; " + contender_text(e, *hit)};
}

// `bite`, saying that the servers lost the reading's holder key while it was
// inside (the run marks that section's lease lost: run/run.cpp).
Bite with_key_loss(Bite bite, const KeyReading& reading) {
  if (reading.lost() && bite.bit) bite.key_lost = KeyLoss{reading.holder, reading.ns};
  return bite;
}

// The servers lost the holder's key (a majority of them) while it was inside,
// and another client tried meanwhile.
Bite key_lost_bite(const BiteEvidence& e, const KeyReading& reading, const std::string& where) {
  if (reading.ns == 0) return {false, "the holder's key was never read after the fault"};
  if (reading.before == 0) return {false, "client " + std::to_string(reading.holder) + "'s key was on no server as the fault acted"};
  const std::string read = reading_text(e, reading, where);
  if (!reading.lost()) return {false, read + ": the servers did not lose it"};
  return with_key_loss(holder_met(e, reading.holder, reading.ns, read), reading);
}


// ---- failover -------------------------------------------------------------------

// What the failover acts on: lock server 0 and its proxied replica
// (servers/lock_server_layout.h), or, with --cluster, the key's master of the run's
// own Redis Cluster (servers/cluster_failover_topology.h), whose proxy holds
// only the replication link (the clients' pools through it keep flowing).
struct Replicated {
  bool cluster = false;
  std::function<Status()> hold;
  std::function<void()> resume;
  std::function<std::uint64_t()> held_bytes;
  std::function<Result<redis::Endpoint>()> fail_over;
  std::function<RedisServer&()> replica;  // the server fail_over() promotes (read before it does)
};

std::optional<Replicated> replicated(const NemesisContext& context) {
  if (ClusterFailoverTopology* c = context.cluster_failover; c != nullptr)
    return Replicated{true,
                      [c] { return c->hold_replication(); },
                      [c] { (void)c->resume_replication(); },
                      [c] { return c->held_bytes(); },
                      [c] { return c->fail_over(); },
                      [c]() -> RedisServer& { return c->replica(); }};
  LockServerLayout* t = context.topology;
  if (t == nullptr || t->replication() == nullptr) return std::nullopt;
  return Replicated{false,
                    [t]() -> Status {
                      t->replication()->hold_replication();
                      return Done{};
                    },
                    [t] { t->replication()->resume_replication(); },
                    [t] { return t->replication()->held_bytes(); },
                    [t] { return t->fail_over(); },
                    [t]() -> RedisServer& { return t->replication()->replica(); }};
}

// The key on the replica itself, by DUMP (READONLY first on a cluster
// replica, which would redirect to its master): nullopt when unreadable;
// an empty optional inside when the replica has no such key.
std::optional<std::optional<std::string>> dump_on_replica(RedisServer& replica, const std::string& key, bool cluster) {
  auto connection = redis::Connection::connect(replica.connection_options());
  if (!connection) return std::nullopt;
  if (cluster)
    if (auto readonly = connection->command({"READONLY"}); !readonly || readonly->is_error()) return std::nullopt;
  auto reply = connection->command({"DUMP", key});
  if (!reply || reply->is_error()) return std::nullopt;
  if (reply->is_nil()) return std::optional<std::string>{};
  if (!reply->is_string()) return std::nullopt;
  return std::optional<std::string>{std::string(reply->text())};
}

// What the failover did to the holder's key. After it, the promoted master
// may hold the very value again without having kept it: a client (the same
// Redisson field, the same thread) re-took the lock there before the reading.
// So the key counts as kept only if the replica had it as it was promoted:
// read on the replica just before the failover, with replication held from
// that read to the promotion, so nothing reaches it in between (a key written
// after the promotion cannot count as kept, and one the replica had cannot
// count as lost). When the replica could not be frozen or read, nothing can
// say whether the key was lost (the value after the failover cannot, above):
// the fault did not bite, and the cell is an error, never safe.
struct FailoverReading {
  int holder = -1;
  std::int64_t ns = 0;             // read after the failover (0: never read)
  bool on_master = false;          // the holder's key was on the master as the fault acted
  std::optional<bool> on_replica;  // that very value on the frozen replica; nullopt: not frozen or unreadable
  bool after_same = false;         // that very value on the promoted master after the failover
  bool read() const { return !on_master || on_replica.has_value(); }
  bool kept() const { return on_replica.value_or(false); }
  bool lost() const { return ns != 0 && on_master && !kept(); }
  KeyReading as_key_reading() const {  // one server: the master, then the promoted replica
    return {holder, ns, on_master ? 1u : 0u, on_master && kept() ? 1u : 0u, 1};
  }
};

// Freezes the replica (replication held: a guarded run resumed it) and reads
// the holder's key on it; call just before the failover.
FailoverReading read_before_failover(const NemesisContext& context, Replicated& r, int holder, const KeyDumps& before,
                                     std::string& why_not) {
  FailoverReading reading;
  reading.holder = holder;
  reading.on_master = !before.empty() && before.front().has_value();
  if (auto held = r.hold(); !held) {
    why_not = "replication could not be held for the replica's reading: " + held.error().message;
    return reading;
  }
  const auto on_replica = dump_on_replica(r.replica(), lock_key_of(context, holder), r.cluster);
  if (!on_replica) {
    why_not = "the replica could not be read before the failover";
    return reading;
  }
  reading.on_replica = reading.on_master && *on_replica == before.front();
  return reading;
}

void read_after_failover(const NemesisContext& context, FailoverReading& reading, const KeyDumps& before) {
  const KeyDumps after = dump_holder_key(context, reading.holder);
  reading.after_same = reading.on_master && !after.empty() && after.front() == before.front();
  reading.ns = monotonic_ns();
}

std::string failover_text(const BiteEvidence& e, const FailoverReading& reading) {
  const auto said = [](bool same) { return same ? std::string("that very value") : std::string("not that value"); };
  const std::string whose = reading.holder < 0 ? "the lock's" : "client " + std::to_string(reading.holder) + "'s";
  if (!reading.on_master) return whose + " key: not on the master as the fault acted";
  return whose + " key: on the master as the fault acted; on the replica as it was promoted (read with replication held): " +
         (reading.on_replica ? said(*reading.on_replica) : std::string("not read")) +
         "; on the promoted master after the failover at " + e.at(reading.ns) + ": " + said(reading.after_same) +
         (reading.on_replica && !*reading.on_replica && reading.after_same ? " (taken again after the promotion)" : "");
}

// catch= (nemesis/caught_waiters.h): with the holder parked, every contender's next matching
// request parks at its links to `servers` before the fault acts. Returns the note to record.
std::string catch_before_acting(CaughtWaiters& caught, LockServerLayout* topology, int holder,
                                const std::vector<std::size_t>& servers, milliseconds bound) {
  caught.catch_all_but(topology, holder, servers, bound);
  return caught.summary();
}

// A catch that missed a waiter, or a split that did not split: not bitten, and marked as the
// schedule's miss (Bite::schedule_missed).
Bite schedule_missed_bite(std::string why) {
  Bite bite{false, std::move(why)};
  bite.schedule_missed = true;
  return bite;
}

class FailoverFault final : public HeldContenderFault {
 public:
  FailoverFault(FaultSpec spec, bool guarded, milliseconds patience, std::optional<RespPattern> catch_pattern,
                milliseconds catch_bound, HolderPark park)
      : HeldContenderFault(std::move(spec), std::string(park.point), -1),
        guarded_(guarded),
        patience_(patience),
        warm_up_acquisitions_(park.warm_up),
        catch_bound_(catch_bound) {
    if (catch_pattern) caught_.emplace(std::move(*catch_pattern));
  }

  FaultNeeds needs() const override {
    FaultNeeds needs;
    needs.replica_via_proxy = true;
    needs.client_proxies = caught_.has_value();  // catch= parks each waiter's request at its own proxy
    return needs;
  }
  milliseconds allowance(milliseconds ttl) const override {
    return long_patience(ttl) + 2 * patience_ + (caught_ ? catch_bound_ : milliseconds{0});
  }

  void before_run(NemesisContext& context) override {
    auto r = replicated(context);
    if (!r) return note(context, "no replica to fail over to: nothing done");
    if (auto held = r->hold(); !held) return note(context, "replication not held: " + held.error().message);
    note(context, r->cluster ? "replication held (the key's master's link to its replica only; clients pass): the "
                               "replica receives nothing the master acknowledges"
                             : "replication held: the replica receives nothing the master acknowledges");
    start_warm_up(context, warm_up_acquisitions_, [this] { gate_.arm(); });
  }

  void tick(NemesisContext& context) override {
    warm_up_over(context, [this] { gate_.arm(); });
    auto r = replicated(context);
    const int holder = gate_.parked();
    if (holder >= 0) let_contender_go(context, holder, patience_);
    if (!r || finished_) return;
    if (guarded_ && !resumed_ && holder < 0 && failed_attempts(context, -1) > 0) {
      r->resume();
      resumed_ = true;
      note(context, "an acquire was refused: the WAIT guard saw no replica acknowledge it; replication resumed");
    }
    if (!failed_over_ && holder < 0 && r->cluster && !guarded_) return refused_on_cluster(context, *r);
    if (holder < 0) return;
    if (!failed_over_) return fail_over(context, *r, holder);
    if (watch_over(context, holder, patience_, gate_,
                   "another client acquired on the promoted replica while client " + std::to_string(holder) +
                       " still holds: two holders",
                   " of the failover"))
      finished_ = true;
  }

  void undo(NemesisContext& context) override {
    auto r = replicated(context);
    if (r && !failed_over_) r->resume();
    // A no-op: the drop follows the catch in the same tick. Kept so that no later early return
    // between them can leave a link fenced past the run.
    if (caught_) caught_->drop_caught();
  }

  // The opportunity: the master was failed over, replication held since the
  // run began, while the holder was inside, and another client tried
  // meanwhile. Whether the promoted replica had its key is the lock's doing
  // (the WAIT guard makes sure it does), read from the servers for the text
  // (FailoverReading: on the replica as it was promoted, not after).
  // On a cluster the key must be lost too (a failover whose new master had
  // the key is no failover story): else not exercised, never safe.
  Bite bite(const BiteEvidence& evidence) const override {
    if (!acted()) return {false, why_not_acted()};
    if (caught_)
      if (auto missed = caught_->not_caught()) return schedule_missed_bite(*missed);
    if (reading_.ns == 0) return {false, "the holder's key was never read after the failover"};
    const std::string read = "failed over: " + failover_text(evidence, reading_);
    if (!reading_.read())
      return {false, read + ": the replica could not be read as it was promoted, so whether the failover lost the "
                            "key is unknown"};
    if (cluster_ && !reading_.lost())
      return {false, read + ": the promoted master had the key" + usable_after(evidence)};
    // The race had its chance and the lock refused it: its key was on the master only, every
    // acquire meanwhile was refused (Redisson's WAIT for a replica), and the failover lost the key.
    // No holder to lose it under: what the run measured (the refusals as a stall) is the class.
    if (reading_.holder < 0) {
      Bite refused{refused_ > 0, read + (refused_ > 0 ? "; every acquire failed (" + std::to_string(refused_) +
                                                            " refused or left unanswered) while its key was on the "
                                                            "master only: nobody was told they hold an unreplicated lock"
                                                      : "; no client was told it holds the lock") +
                                     usable_after(evidence)};
      refused.refused_not_held = refused.bit;
      return refused;
    }
    Bite bite = with_key_loss(holder_met(evidence, reading_.holder, reading_.ns, read), reading_.as_key_reading());
    if (cluster_) bite.what += usable_after(evidence);
    return bite;
  }

 private:
  void fail_over(NemesisContext& context, Replicated& r, int holder);
  void refused_on_cluster(NemesisContext& context, Replicated& r);
  std::string usable_after(const BiteEvidence& evidence) const;
  void finish() {
    finished_ = true;
    gate_.release();
  }

  // Reads the replica (frozen) just before the failover, and the promoted master after it.
  Result<redis::Endpoint> fail_over_reading(NemesisContext& context, Replicated& r, int holder, const KeyDumps& before);

  FailoverReading reading_;
  std::int64_t began_ns_ = 0;  // the failover was asked for (the slot may move before every node agrees)
  bool guarded_;
  milliseconds patience_;  // how long the parked holder waits for a contender, and then the contender for it
  std::int64_t warm_up_acquisitions_;  // warm-up=N: the gate arms after N acquisitions (GatedFault)
  bool cluster_ = false;
  std::int64_t refused_ = 0;  // on a cluster, the acquires refused before the failover without a holder
  bool resumed_ = false;
  bool failed_over_ = false;
  bool finished_ = false;
  std::optional<CaughtWaiters> caught_;  // catch=PATTERN (nemesis/caught_waiters.h)
  milliseconds catch_bound_;             // how long the catch waits for every waiter's request
};

void FailoverFault::fail_over(NemesisContext& context, Replicated& r, int holder) {
  const auto held = r.held_bytes();
  failed_over_ = true;
  cluster_ = r.cluster;
  // catch= first: the holder's patience is counted from the failover, not from the catch.
  if (caught_) note(context, catch_before_acting(*caught_, context.topology, holder, {0}, catch_bound_));
  begin_watch(context, holder);
  const KeyDumps before = dump_holder_key(context, holder);
  hold_contender(context, holder);  // before the failover: a contender can get in while it runs
  auto promoted = fail_over_reading(context, r, holder, before);
  // The old master never answered them: each connection is reset. A caught client's reconnection
  // made meanwhile (the retarget reset its links) is held by the fence until now and reset too.
  if (caught_) caught_->drop_caught();
  if (!promoted) {
    note(context, "failover failed: " + promoted.error().message);
    return finish();
  }
  note_acted(context, "client " + std::to_string(holder) + " holds the lock; " +
                          (r.cluster ? "CLUSTER FAILOVER FORCE on the key's replica, the old master's writes paused until it "
                                       "is a replica"
                                     : "master killed") + " with " +
                          std::to_string(held) + " replication bytes held, replica promoted, clients redirected to " +
                          promoted->to_string());
}

Result<redis::Endpoint> FailoverFault::fail_over_reading(NemesisContext& context, Replicated& r, int holder,
                                                         const KeyDumps& before) {
  std::string why_not;
  reading_ = read_before_failover(context, r, holder, before, why_not);
  if (!why_not.empty()) note(context, why_not + ": whether the failover lost the key cannot be told (not bitten)");
  began_ns_ = monotonic_ns();
  auto promoted = r.fail_over();
  if (promoted) read_after_failover(context, reading_, before);
  return promoted;
}

// A library that WAITs for its replica (Redisson on a cluster: the lock
// script, then WAIT, and an exception when no replica acknowledged) tells no
// client it holds the lock while replication is held, so no holder ever
// parks. Its key is on the master all the same: once it is, and an acquire
// came back failed, the master fails over anyway -- what follows (who gets in
// on the new master, and when) is the lock's usability after the failover.
void FailoverFault::refused_on_cluster(NemesisContext& context, Replicated& r) {
  // Nobody ever acquired: a client between its acquire and the gate is a holder not parked yet.
  if (failed_attempts(context, -1) == 0 || acquisitions_by_others(context, -1) > 0) return;
  const KeyDumps before = dump_holder_key(context, -1);  // the key on its master (routed by slot), or none yet
  if (before.empty() || !before.front()) return;
  failed_over_ = true;
  cluster_ = true;
  refused_ = failed_attempts(context, -1);
  const auto held = r.held_bytes();
  finish();  // no holder to park: a client that gets in on the new master while it settles goes on
  auto promoted = fail_over_reading(context, r, -1, before);
  if (!promoted) return note(context, "failover failed: " + promoted.error().message);
  note_acted(context, "no client holds the lock (" + std::to_string(refused_) +
                          " acquires failed), its key is on the master only: CLUSTER FAILOVER FORCE, the old "
                          "master's writes paused until it is a replica, with " +
                          std::to_string(held) + " replication bytes held, clients redirected to " + promoted->to_string());
}

// Whether the lock was usable after the failover: the first section any
// client entered once it began (the slot moves before every node agrees, and
// a client may get in meanwhile), and how many (issues #4706 and #4822: after
// a failover, Redisson's lock was obtainable by one node only, or by none);
// and whether two clients held it at once after it began. While the slot
// moves the old master's writes are paused (ClusterFailoverTopology::fail_over),
// so it grants nothing; a client whose attempt reached it then is answered
// MOVED only once every node agrees, and "usable after" counts that wait too.
std::string FailoverFault::usable_after(const BiteEvidence& evidence) const {
  const CsRecord* first = nullptr;
  std::size_t sections = 0;
  for (const CsRecord& record : evidence.records)
    if (record.enter_ns > began_ns_) {
      ++sections;
      if (first == nullptr || record.enter_ns < first->enter_ns) first = &record;
    }
  const auto after_ms = [&](std::int64_t ns) { return std::to_string(std::max<std::int64_t>(ns - began_ns_, 0) / 1'000'000); };
  if (first == nullptr) return "; not usable after it: nobody acquired in the " + after_ms(evidence.end_ns) + " ms the run went on";
  std::string text = "; usable after it: client " + std::to_string(first->client) + " acquired " + after_ms(first->enter_ns) +
                     " ms after the failover began, " + std::to_string(sections) + " section(s) in the " +
                     after_ms(evidence.end_ns) + " ms the run went on";
  if (const auto two = evidence.first_overlap_after(began_ns_))
    text += "; two holders at once after it began: client " + std::to_string(two->first.client) + " from " +
            after_ms(two->first.enter_ns) + " ms and client " + std::to_string(two->second.client) + " from " +
            after_ms(two->second.enter_ns) + " ms";
  return text;
}

// ---- the parked holder of node-crash (when=holder) and clock-jump ----------------------

// Before the run, blockers keep the first holder off the nodes from
// holder-nodes= on; once a holder parked at the gate the fault acts on the
// servers, the blockers go, and the watch runs until another client acquired
// or the patience ran out. At the end of the run the blockers go too.
struct ParkedHolderSettings {
  std::size_t holder_nodes;  // holder-nodes=: the first holder reaches only nodes [0, M)
  milliseconds ttl;
  milliseconds patience;  // patience=: how long the parked holder waits for a contender, then the contender for it
  HolderPark park;  // where the holder parks, and after how many acquisitions
};

class ParkedHolderFault : public HeldContenderFault {
 public:
  ParkedHolderFault(FaultSpec spec, std::string_view point, const ParkedHolderSettings& parking)
      : HeldContenderFault(std::move(spec), std::string(point), -1),
        ttl_(parking.ttl),
        patience_(parking.patience),
        warm_up_acquisitions_(parking.park.warm_up),
        blockers_(parking.holder_nodes) {}

  milliseconds allowance(milliseconds ttl) const override { return long_patience(ttl) + 2 * patience_; }
  FaultNeeds needs() const override {
    FaultNeeds needs;
    needs.lock_key = true;  // the blockers and the holder's nodes are its lock's key
    return needs;
  }

 protected:
  // Acts on the servers while `holder` is parked; true: it stays parked while the watch runs.
  virtual bool act(NemesisContext& context, int holder) = 0;
  // Undoes the fault's own doing at the end of the run (the blockers are gone already).
  virtual void undo_action(NemesisContext& context) = 0;
  // Runs once the servers were read after act() (a restart that must not come before the reading).
  virtual void after_reading(NemesisContext& /*context*/) {}

  // The blockers come with the gate: a warm-up's sections reach every node.
  void block_and_arm(NemesisContext& context) {
    start_warm_up(context, warm_up_acquisitions_, [&] { place_blockers_and_arm(context); });
  }

  void tick_parked(NemesisContext& context) {
    warm_up_over(context, [&] { place_blockers_and_arm(context); });
    const int holder = gate_.parked();
    if (holder < 0) return;
    let_contender_go(context, holder, patience_);
    if (gate_.released()) return;
    if (!holder_handled_) {
      holder_handled_ = true;
      others_before_ = acquisitions_by_others(context, holder);
      const KeyDumps before = dump_holder_key(context, holder);
      hold_contender(context, holder);  // before act(): a contender can get in while it runs
      const bool keep_parked = act(context, holder);
      reading_ = compare_key(context, holder, before);  // before the blockers go: they are not the holder's
      if (std::string failed = blockers_.lift(context); !failed.empty()) {
        note(context, failed);
        if (blockers_missed_.empty()) blockers_missed_ = failed;
      }
      after_reading(context);
      since_ = Clock::now();
      if (!keep_parked) gate_.release();  // the story does not need the holder inside any longer
      return;
    }
    watch_over(context, holder, patience_, gate_, overtaken_note(holder));
  }

  // A blocker that was not placed or not lifted: the holder's nodes, or the contender's, were
  // not those of the story, so the fault did not bite as written (the cell `error`).
  std::optional<Bite> blockers_missed_bite() const {
    if (blockers_missed_.empty()) return std::nullopt;
    return schedule_missed_bite(blockers_missed_);
  }

  milliseconds ttl_;
  milliseconds patience_;  // how long the parked holder waits for a contender, and then the contender for it
  KeyReading reading_;  // the holder's key on the servers right after act()

 private:
  void undo(NemesisContext& context) final {
    if (std::string failed = blockers_.lift(context); !failed.empty()) note(context, failed + " (at the end of the run)");
    undo_action(context);
  }

  void place_blockers_and_arm(NemesisContext& context) {
    if (blockers_.any(context.endpoints.size())) {
      blockers_missed_ = blockers_.place(context);
      note(context, blockers_missed_.empty() ? "the first holder can reach only the nodes before the blocked ones"
                                             : blockers_missed_);
    }
    gate_.arm();
  }

  std::int64_t warm_up_acquisitions_;  // warm-up=N: the gate arms after N acquisitions (GatedFault)
  Blockers blockers_;
  std::string blockers_missed_;  // a blocker not placed or not lifted: the story's nodes were not as it says
  bool holder_handled_ = false;  // act() ran for the parked holder (whether it succeeded is acted())
};

// ---- node-crash -------------------------------------------------------------------

enum class Restart { never, now, after_ttl };

class NodeCrashFault final : public ParkedHolderFault {
 public:
  NodeCrashFault(FaultSpec spec, std::size_t nodes, Restart restart, bool at_start,
                 const ParkedHolderSettings& parking, std::optional<RespPattern> catch_pattern,
                 milliseconds catch_bound, std::optional<SplitVotes> split)
      : ParkedHolderFault(std::move(spec), parking.park.point, parking),
        count_(nodes),
        restart_(restart),
        at_start_(at_start),
        catch_bound_(catch_bound),
        split_(std::move(split)) {
    if (catch_pattern) caught_.emplace(std::move(*catch_pattern));
  }

  milliseconds allowance(milliseconds ttl) const override {
    return ParkedHolderFault::allowance(ttl) + (caught_ ? catch_bound_ : milliseconds{0}) + (split_ ? ttl : milliseconds{0});
  }

  StepHook client_step_hook(int client) override {
    return at_start_ ? StepHook{} : HeldContenderFault::client_step_hook(client);
  }
  FaultNeeds needs() const override {
    FaultNeeds needs = ParkedHolderFault::needs();
    // when=start kills the first nodes, whoever holds what; split= reads the votes on the live ones
    needs.lock_key = !at_start_ || split_.has_value();
    // catch= parks each waiter's request at its own proxy, split= each contender's at the other's nodes
    needs.client_proxies = caught_.has_value() || split_.has_value();
    return needs;
  }

  void before_run(NemesisContext& context) override {
    if (topology(context) == nullptr) return note(context, "no topology: nothing done");
    if (at_start_) return crash_first(context);
    block_and_arm(context);
  }

  void tick(NemesisContext& context) override {
    if (restart_ == Restart::after_ttl && !crashed_.empty() && Clock::now() - crashed_at_ >= ttl_ + ttl_ / 5)
      restart_crashed(context, "restarted empty after " + ms_text(ttl_ + ttl_ / 5) + " (> ttl)");
    if (split_)
      for (const std::string& what : split_->tick(context)) note(context, what);
    if (!at_start_) tick_parked(context);
  }

 private:
  // The holder's nodes first, then the others.
  bool act(NemesisContext& context, int holder) override {
    std::vector<std::size_t> victims = holder_nodes(context, holder);
    for (std::size_t j = 0; j < context.endpoints.size(); ++j)
      if (std::find(victims.begin(), victims.end(), j) == victims.end()) victims.push_back(j);
    victims.resize(std::min(victims.size(), count_));
    // catch=: every contender's next matching request parks at its links to the victims first.
    if (caught_) note(context, catch_before_acting(*caught_, topology(context), holder, victims, catch_bound_));
    crash(context, victims);
    if (caught_) caught_->drop_caught();  // the dead servers never answered them: each connection is reset
    return restart_ == Restart::now;
  }

  // when=start: the first nodes, before any client runs; split= then arms at the live ones.
  void crash_first(NemesisContext& context) {
    std::vector<std::size_t> first, live;
    for (std::size_t j = 0; j < context.endpoints.size(); ++j) (j < count_ ? first : live).push_back(j);
    crash(context, first);
    if (!split_) return;
    split_->arm(topology(context), live);
    note(context, split_->plan_text());
  }

  void undo_action(NemesisContext& context) override {
    if (caught_) caught_->drop_caught();  // a no-op, as the failover's undo (above)
    if (split_) split_->let_go();
    if (!crashed_.empty()) restart_crashed(context, "restarted at the end of the run");
  }

  // restart=now: the servers come back only after the reading. A reading
  // after the restart raced the clients: a library that retries a holder's
  // script on a reconnected node (Redisson's RedisExecutor) refills the key
  // there, and the fault read "kept" though the crash had lost it. A killed
  // server without persistence has lost what it held; read down, it says so.
  void after_reading(NemesisContext& context) override {
    if (restart_ == Restart::now && !crashed_.empty())
      restart_crashed(context, "restarted at once, empty (no persistence), after the reading");
  }

  // when=holder: a majority of the servers lost the holder's key (down, or
  // back empty) while it was inside; with the nodes left down a while
  // (restart=never|after-ttl) and the holder keeping its majority, a client
  // acquiring while the minority was down bites too (the quorum's story).
  // when=start: a minority was down while clients acquired.
  Bite bite(const BiteEvidence& e) const override {
    if (!acted()) return {false, why_not_acted()};
    if (split_) {
      if (auto missed = split_->not_split()) return schedule_missed_bite(*missed);
      Bite down = down_bite(e);
      down.what = split_->done_text() + "; " + down.what;
      return down;
    }
    if (at_start_) return down_bite(e);
    if (auto missed = blockers_missed_bite()) return *missed;
    if (caught_)
      if (auto missed = caught_->not_caught()) return schedule_missed_bite(*missed);
    Bite lost = key_lost_bite(e, reading_, "server(s) after the crash");
    if (lost.bit || restart_ == Restart::now) return lost;
    Bite down = down_bite(e);
    return down.bit ? down : lost;
  }

  Bite down_bite(const BiteEvidence& e) const {
    const std::int64_t until = restarted_ns_ != 0 ? restarted_ns_ : e.end_ns;
    const std::string down = std::to_string(count_) + " node(s) down from " + e.at(crashed_ns_) + " to " + e.at(until);
    if (const auto entered = e.other_entered(-1, crashed_ns_, until))
      return {true, down + "; client " + std::to_string(entered->client) + " acquired at " + e.at(entered->enter_ns)};
    // Tried and never got in: the lock's own liveness under a minority down, not a race that did not run.
    if (const auto hit = e.other_waiting(-1, crashed_ns_, until)) return {true, down + "; " + contender_text(e, *hit)};
    return {false, down + ", and nobody tried meanwhile"};
  }

  void crash(NemesisContext& context, const std::vector<std::size_t>& nodes) {
    LockServerLayout* t = topology(context);
    std::string which;
    for (std::size_t j : nodes) {
      t->server(j).crash();
      crashed_.push_back(j);
      append_node(which, j);
    }
    crashed_at_ = Clock::now();
    crashed_ns_ = monotonic_ns();
    if (nodes.empty()) return note(context, "no node to kill: nothing done");
    note_acted(context, "SIGKILL node(s) " + which);
  }

  void restart_crashed(NemesisContext& context, const std::string& how) {
    LockServerLayout* t = topology(context);
    std::string which, failed;
    for (std::size_t j : crashed_) {
      append_node(which, j);
      if (auto ok = t->server(j).restart(); !ok) failed += " node " + std::to_string(j) + ": " + ok.error().message;
    }
    crashed_.clear();
    if (restarted_ns_ == 0) restarted_ns_ = monotonic_ns();
    note(context, "node(s) " + which + " " + how + (failed.empty() ? "" : "; restart failed:" + failed));
  }

  std::size_t count_;
  Restart restart_;
  bool at_start_;
  std::vector<std::size_t> crashed_;
  Clock::time_point crashed_at_{};
  std::int64_t crashed_ns_ = 0, restarted_ns_ = 0;
  std::optional<CaughtWaiters> caught_;  // catch=PATTERN (nemesis/caught_waiters.h)
  milliseconds catch_bound_;             // how long the catch waits for every waiter's request
  std::optional<SplitVotes> split_;      // split=PATTERN (nemesis/split_votes.h), with when=start
};


// ---- node-pause ---------------------------------------------------------------------

class NodePauseFault final : public TopologyFault {
 public:
  NodePauseFault(FaultSpec spec, std::size_t nodes, milliseconds ms)
      : TopologyFault(std::move(spec)), count_(nodes), ms_(ms) {}

  milliseconds allowance(milliseconds) const override { return ms_; }

  void before_run(NemesisContext& context) override {
    LockServerLayout* t = topology(context);
    if (t == nullptr) return note(context, "no topology: nothing done");
    std::string which;
    for (std::size_t j = 0; j < count_; ++j) {
      auto paused = PausedProcess::pause(t->server(j).pid());
      if (!paused) {
        note(context, "cannot SIGSTOP node " + std::to_string(j) + ": " + paused.error().message);
        continue;
      }
      paused_.push_back(std::move(paused).value());
      append_node(which, j);
    }
    since_ = Clock::now();
    if (paused_.empty()) return note(context, "no node could be stopped: nothing done");
    note_acted(context, "SIGSTOP node(s) " + which + (ms_.count() > 0 ? " for " + ms_text(ms_) : " until the end"));
  }

  void tick(NemesisContext& context) override {
    if (ms_.count() > 0 && !paused_.empty() && Clock::now() - since_ >= ms_) resume(context, "SIGCONT after " + ms_text(ms_));
  }
  void after_run(NemesisContext& context) override {
    if (!paused_.empty()) resume(context, "SIGCONT at the end of the run");
  }

 private:
  void resume(NemesisContext& context, const std::string& how) {
    for (auto& paused : paused_) paused.resume();
    paused_.clear();
    note(context, how);
  }

  std::size_t count_;
  milliseconds ms_;
  std::vector<PausedProcess> paused_;
};

// ---- clock-jump -----------------------------------------------------------------------

// The holder's key on the jumped node, as the fault read it there (never
// what the lock says): its PTTL and value (DUMP, without the TTL) just before
// the jump, and whether the node still held that very value after it.
struct JumpedKey {
  std::optional<long long> pttl;    // nullopt: unreadable; -2 absent; -1 no TTL
  std::optional<std::string> dump;  // the value before the jump (nullopt: unreadable)
  std::optional<bool> lost;         // after it: gone, or any other value (nullopt: never read)
  std::int64_t read_ns = 0;         // when `lost` was settled
};

JumpedKey read_key_before_jump(RedisProbe& probe, const std::string& key) {
  JumpedKey jumped;
  jumped.pttl = probe.pttl(key);
  if (auto reply = probe.read({"DUMP", key}); reply && reply->is_string()) jumped.dump = std::string(reply->text());
  return jumped;
}

// Any read expires a key whose TTL the node's clock passed, so the first
// read after the jump tells; it is polled up to `bound` all the same (the
// shim re-reads its offset at most once a millisecond), and a failed read
// (the probe reconnects) does not end it. The contenders are held only once
// inside, so one may have taken the key meanwhile: another value is lost too.
void read_key_after_jump(RedisProbe& probe, const std::string& key, JumpedKey& jumped, milliseconds bound) {
  bool read_once = false;
  const bool gone = wait_until([&] {
    const auto dump = probe.read({"DUMP", key});
    if (!dump) return false;
    read_once = true;
    return !dump->is_string() || dump->text() != *jumped.dump;
  }, bound);
  jumped.read_ns = monotonic_ns();
  if (read_once) jumped.lost = gone;
}

class ClockJumpFault final : public ParkedHolderFault {
  static constexpr milliseconds kKeyLossPoll{250};  // how long the jumped node's key is polled for

 public:
  ClockJumpFault(FaultSpec spec, std::size_t node, milliseconds offset, const ParkedHolderSettings& parking)
      : ParkedHolderFault(std::move(spec), kCsEnter, parking), node_(node), offset_(offset) {}

  milliseconds allowance(milliseconds ttl) const override { return ParkedHolderFault::allowance(ttl) + kKeyLossPoll; }
  FaultNeeds needs() const override {
    FaultNeeds needs = ParkedHolderFault::needs();
    needs.clock_shim = true;
    return needs;
  }

  void before_run(NemesisContext& context) override {
    if (topology(context) == nullptr) return note(context, "no topology: nothing done");
    block_and_arm(context);
  }

  void tick(NemesisContext& context) override { tick_parked(context); }

 private:
  // Jumps the node's clock, with the holder's key read there before and after.
  bool act(NemesisContext& context, int holder) override {
    clock_moved_ = true;
    const auto held = holder_nodes(context, holder);
    const bool in_majority = std::find(held.begin(), held.end(), node_) != held.end();
    const std::string& key = lock_key_of(context, holder);
    auto probe = RedisProbe::connect(context.endpoints[node_]);
    JumpedKey read = probe ? read_key_before_jump(*probe, key) : JumpedKey{};
    auto moved = jump_clock(topology(context)->server(node_), offset_);
    if (!moved) {
      note(context, "clock jump failed: " + moved.error().message);
      return true;
    }
    note_acted(context, "node " + std::to_string(node_) + "'s wall clock jumped by " + ms_text(offset_) + " (" +
                            (in_majority ? "in" : "not in") + " client " + std::to_string(holder) + "'s majority)");
    jump_ = {holder, monotonic_ns(), in_majority, {}};
    if (probe && read.pttl && *read.pttl >= 0 && read.dump) read_key_after_jump(*probe, key, read, kKeyLossPoll);
    jump_.key = std::move(read);
    return true;
  }

  // The jumped node held the holder's key, and the jump took it while the
  // holder was inside, and another client tried meanwhile: the opportunity.
  // A key is the holder's when it is on that node and is no blocker's: for a
  // quorum lock, holder-nodes= (as the matrix plans it) makes that node one
  // of the holder's bare majority, where no contender's vote can be.
  Bite bite(const BiteEvidence& e) const override {
    if (!acted()) return {false, why_not_acted()};
    if (auto missed = blockers_missed_bite()) return *missed;
    std::string what = "node " + std::to_string(node_) + "'s clock jumped " + ms_text(offset_) + " at " +
                       e.at(jump_.ns) + " (the ttl is " + ms_text(e.ttl) + ")";
    if (!jump_.on_holder_node) return {false, what + ", but the holder's key was not on that node"};
    if (auto kept = why_key_not_taken(e, what)) return {false, what + *kept};
    return holder_met(e, jump_.holder, jump_.ns, what + ", on client " + std::to_string(jump_.holder) + "'s node");
  }

  // nullopt: the jump took the holder's key off the node (said in `what`):
  // its clock passed the key's lease (the PTTL read just before), and the
  // node no longer held the key's value after it. A key with no TTL (setnx)
  // has no lease to lose: a jump past a lease of one ttl is its opportunity,
  // and it reads safe by design. Otherwise: why not.
  std::optional<std::string> why_key_not_taken(const BiteEvidence& e, std::string& what) const {
    const JumpedKey& key = jump_.key;
    if (!key.pttl) return ", but the key's TTL on that node could not be read before it";
    if (*key.pttl == -2) return ", but the key was gone from that node just before it";
    if (*key.pttl == -1) {
      if (offset_ <= e.ttl) return ": not past a lease of one ttl";
      what += "; the key had no TTL there";
      return std::nullopt;
    }
    what += "; the key's PTTL there was " + std::to_string(*key.pttl) + " ms before it";
    if (offset_.count() <= *key.pttl) return ": not past that lease";
    if (!key.dump) return ", but its value there could not be read before it";
    if (!key.lost) return ", and the key could not be read after it";
    if (!*key.lost) return ", and the key was still there at " + e.at(key.read_ns);
    what += ", gone at " + e.at(key.read_ns);
    return std::nullopt;
  }

  void undo_action(NemesisContext& context) override {
    if (clock_moved_ && topology(context) != nullptr) {
      (void)jump_clock(topology(context)->server(node_), 0ms);
      note(context, "node " + std::to_string(node_) + "'s clock set back to real time");
    }
  }

  std::size_t node_;
  milliseconds offset_;
  bool clock_moved_ = false;  // a jump was tried: the end of the run sets the clock back
  struct {
    int holder = -1;
    std::int64_t ns = 0;
    bool on_holder_node = false;
    JumpedKey key;  // the holder's key on the jumped node
  } jump_;
};

}  // namespace

// ---- factories ---------------------------------------------------------------------------

Result<std::unique_ptr<Fault>> make_failover_fault(const FaultSpec& spec, const FaultEnv& options) {
  auto after = param_choice(spec, "after", "acquire", "acquire");
  if (!after) return after.error();
  if (!options.capabilities.uses_redis || options.capabilities.multi_node)
    return fault_error(spec, "needs a single-server lock (a master with a replica); '" + options.lock + "' is not one");
  if (options.wait_replicas > 1) return fault_error(spec, "the failover topology has one replica: --wait-replicas 0 or 1");
  auto patience = patience_param(spec, options);
  if (!patience) return patience.error();
  auto catch_pattern = catch_param(spec, options, false);
  if (!catch_pattern) return catch_pattern.error();
  if (auto short_catch = catch_too_short(spec, options, *patience, catch_pattern->has_value())) return *short_catch;
  auto park = holder_park_param(spec, options);
  if (!park) return park.error();
  return std::unique_ptr<Fault>(std::make_unique<FailoverFault>(spec, options.wait_replicas > 0, *patience,
                                                                std::move(*catch_pattern), catch_bound(options, *patience),
                                                                *park));
}

Result<std::unique_ptr<Fault>> make_node_crash_fault(const FaultSpec& spec, const FaultEnv& options) {
  auto servers = servers_to_act_on(spec, options);
  if (!servers) return servers.error();
  auto nodes = param_int(spec, "nodes", 1, 1, static_cast<long long>(*servers));
  if (!nodes) return fault_error(spec, "nodes must be between 1 and " + std::to_string(*servers) + " (the lock servers)");
  auto restart = param_choice(spec, "restart", "never", "never|now|after-ttl");
  if (!restart) return restart.error();
  auto when = param_choice(spec, "when", "holder", "start|holder");
  if (!when) return when.error();
  auto holder_nodes = holder_nodes_param(spec, *servers);
  if (!holder_nodes) return holder_nodes.error();
  if (*when == "start" && (spec.has("holder-nodes") || spec.has("patience")))
    return fault_error(spec, "holder-nodes and patience need when=holder");
  auto patience = patience_param(spec, options);
  if (!patience) return patience.error();
  // Killed and restarted before any client starts: no client holds a key yet,
  // so there is nothing to lose; the spec can never bite.
  if (*when == "start" && *restart == "now")
    return fault_error(spec, "restart=now with when=start restarts the servers before any client holds a key: "
                             "nothing can be lost (use when=holder, or restart=never|after-ttl)");
  const Restart how = *restart == "now" ? Restart::now : *restart == "after-ttl" ? Restart::after_ttl : Restart::never;
  auto catch_pattern = catch_param(spec, options, *when == "start");
  if (!catch_pattern) return catch_pattern.error();
  if (auto short_catch = catch_too_short(spec, options, *patience, catch_pattern->has_value())) return *short_catch;
  auto split = split_param(spec, options, *when == "start", static_cast<std::size_t>(*nodes), *servers);
  if (!split) return split.error();
  if (*when == "start" && (spec.has("warm-up") || spec.has("park")))
    return fault_error(spec, "warm-up and park need when=holder");
  auto park = holder_park_param(spec, options);
  if (!park) return park.error();
  return std::unique_ptr<Fault>(std::make_unique<NodeCrashFault>(
      spec, static_cast<std::size_t>(*nodes), how, *when == "start",
      ParkedHolderSettings{*holder_nodes, milliseconds{options.ttl_ms}, *patience, *park}, std::move(*catch_pattern),
      catch_bound(options, *patience), std::move(*split)));
}

Result<std::unique_ptr<Fault>> make_node_pause_fault(const FaultSpec& spec, const FaultEnv& options) {
  auto servers = servers_to_act_on(spec, options);
  if (!servers) return servers.error();
  auto nodes = param_int(spec, "nodes", 1, 1, static_cast<long long>(*servers));
  if (!nodes) return fault_error(spec, "nodes must be between 1 and " + std::to_string(*servers) + " (the lock servers)");
  auto ms = param_int(spec, "ms", 0, 0, kMaxFaultMs);
  if (!ms) return ms.error();
  return std::unique_ptr<Fault>(
      std::make_unique<NodePauseFault>(spec, static_cast<std::size_t>(*nodes), milliseconds{*ms}));
}

Result<std::unique_ptr<Fault>> make_clock_jump_fault(const FaultSpec& spec, const FaultEnv& options) {
  auto servers = servers_to_act_on(spec, options);
  if (!servers) return servers.error();
  auto node = param_int(spec, "node", 0, 0, static_cast<long long>(*servers) - 1);
  if (!node) return fault_error(spec, "node must be between 0 and " + std::to_string(*servers - 1));
  auto offset = param_int(spec, "offset", 30'000, -kMaxFaultMs, kMaxFaultMs);
  if (!offset) return offset.error();
  auto when = param_choice(spec, "when", "holder", "holder");
  if (!when) return when.error();
  auto holder_nodes = holder_nodes_param(spec, *servers);
  if (!holder_nodes) return holder_nodes.error();
  auto patience = patience_param(spec, options);
  if (!patience) return patience.error();
  return std::unique_ptr<Fault>(std::make_unique<ClockJumpFault>(
      spec, static_cast<std::size_t>(*node), milliseconds{*offset},
      ParkedHolderSettings{*holder_nodes, milliseconds{options.ttl_ms}, *patience, HolderPark{}}));
}

}  // namespace locklab::harness
