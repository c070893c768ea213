#include "nemesis/topology_fault.h"

#include <algorithm>

#include "history/history.h"
#include "nemesis/nemesis.h"

namespace locklab::harness {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

std::int64_t acquisitions_by_others(const NemesisContext& context, int except) {
  if (context.history == nullptr) return 0;
  std::int64_t total = 0;
  for (int i = 0; i < context.history->clients(); ++i)
    if (i != except) total += context.history->slot(i).acquired.load();
  return total;
}

std::string ms_text(milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

milliseconds short_patience(milliseconds ttl) { return std::max(ttl / 2, 50ms); }
milliseconds long_patience(milliseconds ttl) { return 3 * ttl + 2000ms; }

namespace {

// How many lock servers the run's lock uses (0: none, it needs no Redis).
std::size_t lock_server_count(const FaultEnv& options) {
  if (!options.capabilities.uses_redis) return 0;
  return options.capabilities.multi_node ? static_cast<std::size_t>(options.nodes) : 1;
}

}  // namespace

Result<std::size_t> servers_to_act_on(const FaultSpec& spec, const FaultEnv& options) {
  const std::size_t servers = lock_server_count(options);
  if (servers == 0) return fault_error(spec, "needs a lock that uses Redis ('" + options.lock + "' does not)");
  return servers;
}

void TopologyFault::note(const NemesisContext& context, std::string what) {
  if (context.history != nullptr) go_ns_ = context.history->header().go_ns.load();
  events_.push_back({monotonic_ns(), std::move(what)});
}

void TopologyFault::begin_watch(const NemesisContext& context, int holder) {
  since_ = std::chrono::steady_clock::now();
  others_before_ = acquisitions_by_others(context, holder);
}

// Another client got in: it is inside now (past its oracle's enter: the
// history's `inside` flag is set after it), or two acquisitions passed (one of
// them is over). An acquisition alone is counted before the client is inside:
// a parked holder let go then could finish before the other's oracle saw it
// enter, and the two oracles would disagree on a real overlap.
bool TopologyFault::overtaken(const NemesisContext& context, int holder) const {
  const std::int64_t more = acquisitions_by_others(context, holder) - others_before_;
  if (more >= 2) return true;
  if (more < 1 || context.history == nullptr) return false;
  for (int i = 0; i < context.history->clients(); ++i)
    if (i != holder && context.history->slot(i).inside.load() != 0) return true;
  return false;
}

bool TopologyFault::watch_over(const NemesisContext& context, int holder, milliseconds patience,
                               CrossProcessGate& gate, const std::string& overtaken, const std::string& waited_tail) {
  if (this->overtaken(context, holder)) {
    note(context, overtaken);
  } else if (std::chrono::steady_clock::now() - since_ > patience) {
    // A holder parked after its read waits for a contender's accepted read (HeldContenderFault):
    // contenders the fenced resource refused may have acquired meanwhile.
    note(context, std::string(gate.point() == kCsRead ? "no other client's read was accepted within "
                                                       : "no other client acquired within ") +
                      ms_text(patience) + waited_tail);
  } else {
    return false;
  }
  gate.release();
  return true;
}

std::string TopologyFault::overtaken_note(int holder) {
  return "another client acquired while client " + std::to_string(holder) + " still holds";
}

void GatedFault::start_warm_up(const NemesisContext& context, std::int64_t sections, const std::function<void()>& arm) {
  warm_up_.sections = sections;
  warm_up_.waiting = true;
  warm_up_over(context, arm);
}

void GatedFault::warm_up_over(const NemesisContext& context, const std::function<void()>& arm) {
  if (!warm_up_.waiting) return;
  warm_up_.seen = acquisitions_by_others(context, -1);
  if (warm_up_.seen < warm_up_.sections) return;
  warm_up_.waiting = false;
  if (warm_up_.sections > 0)
    note(context, "warm-up over: " + std::to_string(warm_up_.seen) + " acquisitions (" +
                      std::to_string(warm_up_.sections) + " asked); the gate parks the next holder");
  arm();
}

}  // namespace locklab::harness
