#include "nemesis/node_fault_params.h"

#include <algorithm>
#include <string>

#include "nemesis/topology_fault.h"

namespace locklab::harness {

using std::chrono::milliseconds;

// holder-nodes=M: the first holder reaches only nodes [0, M) (a bare majority: N/2+1).
Result<std::size_t> holder_nodes_param(const FaultSpec& spec, std::size_t servers) {
  const auto quorum = static_cast<long long>(servers / 2 + 1);
  auto m = param_int(spec, "holder-nodes", static_cast<long long>(servers), quorum, static_cast<long long>(servers));
  if (!m) return fault_error(spec, "holder-nodes must be between " + std::to_string(quorum) + " (a majority) and " +
                                       std::to_string(servers) + " (--nodes)");
  return static_cast<std::size_t>(*m);
}

// patience=MS: how long a parked holder waits for a contender to get in, and
// then the contender for the holder; half a lease by default, and never less:
// a contender that comes in only after the holder was let go then always met
// half a lease of unavailability (liveness), where a shorter patience would
// read it safe. A lock whose watchdog keeps the holder's lease may be given
// longer, for a contender slow to come back (a JVM's, a client's reconnect
// backoff); a lease that lapses must outlast the patience, or its own expiry,
// not the fault, lets the contender in.
Result<milliseconds> patience_param(const FaultSpec& spec, const FaultEnv& options) {
  const milliseconds ttl{options.ttl_ms};
  const long long least = short_patience(ttl).count();
  const bool lapses = options.capabilities.expires && !options.capabilities.auto_extends;
  const long long most = lapses ? std::max<long long>(least, ttl.count() - 1) : kMaxFaultMs;
  auto ms = param_int(spec, "patience", least, least, most);
  if (!ms)
    return fault_error(spec, "patience must be between " + std::to_string(least) + " (half the lease) and " +
                                 std::to_string(most) +
                                 (lapses ? " ms (under the lease: '" + options.lock + "' does not renew it)" : " ms"));
  return milliseconds{*ms};
}

// warm-up=N (0): the fault parks the first holder after N acquisitions, any
// client's (GatedFault::start_warm_up); park=read: once its read of the
// resource was accepted, and it is let go only once a contender's read was
// accepted too (HeldContenderFault::overtaken). Neither on a cluster, whose
// failover acts on refused acquires, with no holder to wait for; no warm-up
// with holder-nodes=, whose blockers are placed as the gate is armed.
Result<HolderPark> holder_park_param(const FaultSpec& spec, const FaultEnv& options) {
  constexpr long long kMostWarmUp = 1000;
  auto sections = param_int(spec, "warm-up", 0, 0, kMostWarmUp);
  if (!sections) return fault_error(spec, "warm-up must be between 0 and " + std::to_string(kMostWarmUp) + " acquisitions");
  auto park = param_choice(spec, "park", "enter", "enter|read");
  if (!park) return park.error();
  if ((spec.has("warm-up") || spec.has("park")) && options.cluster)
    return fault_error(spec, "warm-up and park cannot be used with --cluster");
  if (*sections > 0 && spec.has("holder-nodes"))
    return fault_error(spec, "warm-up cannot be used with holder-nodes: the blockers would be placed over a holder's "
                             "key in the middle of the run");
  return HolderPark{static_cast<std::int64_t>(*sections), *park == "read" ? kCsRead : kCsEnter};
}

// catch=PATTERN (nemesis/caught_waiters.h): a protocol pattern (no ':', the fault grammar's
// separator); node-crash takes it with when=holder. It parks at per-client links, which a run on
// a Redis Cluster does not have.
Result<std::optional<RespPattern>> catch_param(const FaultSpec& spec, const FaultEnv& options, bool at_start) {
  if (!spec.has("catch")) return std::optional<RespPattern>{};
  if (at_start) return fault_error(spec, "catch needs when=holder (the waiters are caught as the holder's node dies)");
  if (options.cluster) return fault_error(spec, "catch needs per-client links, which a --cluster run does not have");
  if (options.hosts > 1)
    return fault_error(spec, "catch parks this host's waiters only: the other hosts' (--hosts) would go uncaught");
  auto pattern = RespPattern::parse(spec.params.at("catch"));
  if (!pattern) return fault_error(spec, "catch=" + spec.params.at("catch") + ": " + pattern.error().message);
  return std::optional<RespPattern>{std::move(*pattern)};
}

// split=PATTERN (nemesis/split_votes.h): when=start, two clients, and live nodes that two
// shares can split with neither a majority; per-client links, as catch=. Its bound is the ttl:
// both contenders' first attempts come as the run starts.
Result<std::optional<SplitVotes>> split_param(const FaultSpec& spec, const FaultEnv& options, bool at_start,
                                              std::size_t nodes, std::size_t servers) {
  if (!spec.has("split")) return std::optional<SplitVotes>{};
  if (!at_start) return fault_error(spec, "split needs when=start (it splits the contenders' first round)");
  if (options.cluster) return fault_error(spec, "split needs per-client links, which a --cluster run does not have");
  if (options.hosts > 1) return fault_error(spec, "split holds this host's contenders only: --hosts would add others");
  if (options.clients != 2) return fault_error(spec, "split shares the live nodes between clients 0 and 1: needs --clients 2");
  if (!options.capabilities.multi_node || !SplitVotes::splittable(servers - nodes, servers))
    return fault_error(spec, "split needs a quorum lock with a minority down, whose live nodes two contenders can share "
                             "with neither a majority (" + std::to_string(servers - nodes) + " of " +
                             std::to_string(servers) + " left alive)");
  auto pattern = RespPattern::parse(spec.params.at("split"));
  if (!pattern) return fault_error(spec, "split=" + spec.params.at("split") + ": " + pattern.error().message);
  return std::optional<SplitVotes>{SplitVotes{std::move(*pattern), milliseconds{options.ttl_ms}}};
}

// How long the catch waits for every waiter's request: half the patience, and for a lease that
// lapses at most half of what the patience leaves of it, so that the holder, parked for the catch
// and then its patience, is let go before its own expiry could admit the contender.
milliseconds catch_bound(const FaultEnv& options, milliseconds patience) {
  const milliseconds half = patience / 2;
  const bool lapses = options.capabilities.expires && !options.capabilities.auto_extends;
  if (!lapses) return half;
  return std::max(milliseconds{1}, std::min(half, (milliseconds{options.ttl_ms} - patience) / 2));
}

// A catch whose bound leaves no time to catch anyone (a short patience, or one near a lapsing lease) would
// read `error` on every run: refused, saying why.
namespace {
constexpr milliseconds kShortestCatch{50};
}  // namespace

std::optional<Error> catch_too_short(const FaultSpec& spec, const FaultEnv& options, milliseconds patience, bool catches) {
  if (!catches || catch_bound(options, patience) >= kShortestCatch) return std::nullopt;
  const bool lapses = options.capabilities.expires && !options.capabilities.auto_extends;
  return fault_error(spec, "catch needs at least " + ms_text(kShortestCatch) + " to catch the waiters, and patience=" +
                               std::to_string(patience.count()) + " leaves it " + ms_text(catch_bound(options, patience)) +
                               (lapses ? " (half of what it leaves of a lease that lapses)" : " (half the patience)"));
}

}  // namespace locklab::harness
