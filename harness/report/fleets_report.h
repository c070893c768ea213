// The fleet sweep's result model and its report (`locklab fleets`,
// sweeps/fleets.h): for pairs of locks, one fault-free mixed-fleet run each,
// whether the two can share a key and why (sweeps/fleet_judgment.h), written
// as DIR/fleets.md (a grid, then every pair) and DIR/fleets.json.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "redis/result.h"

#include "support/lock_counts.h"

namespace locklab::harness {

inline constexpr const char* kFleetsSchema = "locklab.fleets/1";

// The fewest sections each lock of a pair must have had for a run without an
// overlap to show that the two exclude each other. A lock that got in a
// handful of times gave the other few chances to be inside with it (none at
// all when it never got in): two locks that ignore each other would show no
// overlap too. With 10 sections of the rarer lock among the other's hundreds
// (1 ms holds, a 5 ms retry), an overlap that can happen does in practice.
inline constexpr std::int64_t kFleetMinSections = 10;

// What a pair's run showed (sweeps/fleet_judgment.h decides).
enum class Sharing {
  shares,        // exact counter, no overlap, no error, each lock got in kFleetMinSections times or more
  one_sided,     // the same, but one lock starved: it timed out at least as often as it got in
  cannot,        // the catalog says so (different keys or servers), or an overlap, a lost update or a lock's errors
  not_shown,     // no overlap and no error, but a lock got in fewer than kFleetMinSections times
  not_measured,  // the run could not be made, or could not be judged (its verdict is error for the harness's reasons)
};
const char* sharing_name(Sharing sharing);  // "shares", "one-sided", "cannot", "not shown", "not measured"

// One reason of a pair's judgment: a short code (the grid's) and its sentence.
// "confirmed" and "unconfirmed" are remarks on a catalog reason: whether the run showed the overlap.
struct PairReason {
  std::string code;  // "same", "servers", "key", "type", "errors", "starved", "few", "unexplained",
                     // "confirmed", "unconfirmed", "run"
  std::string text;
};

// One lock of a pair: what the lock catalog says of it, and what its clients counted.
struct PairMember {
  std::string lock;
  std::string key;  // the Redis key it locks for the run's key ("" = unknown)
  bool multi_node = false;
  bool notifies_waiters = false;
  int clients = 0;
  LockCounts counts;  // its clients' counts, read from the run document's `fleet` block
  std::optional<double> noop_p50_us, noop_p99_us;  // an adapter's no-op round trip (its probe)
};

struct FleetPair {
  std::string spec;                 // the --fleet of its run: "lua-safe-delete:2,ext:redis-py:2"
  std::vector<PairMember> members;  // the two locks, in spec order
  int lock_servers = 1;             // the masters its run laid out
  std::string verdict;              // the run's
  std::vector<std::string> verdict_reasons;
  std::int64_t overlaps = 0, counter_expected = 0, counter_actual = 0;
  double wall_s = 0;                // the whole run, servers and adapters included
  std::string error;                // measure() failed: why (the pair is not measured)
  Sharing sharing = Sharing::not_measured;
  std::vector<PairReason> why;
  std::string locks_text() const;  // "lua-safe-delete + ext:redis-py"
};

struct FleetsResult {
  std::string dir;
  std::string command;   // the command line that made it
  std::string key;       // the run's key K
  std::string workload;  // one line: clients, duration or attempts, hold, ttl, wait, retry
  std::string date;      // UTC, YYYY-MM-DD
  double wall_s = 0;     // the whole sweep
  std::vector<FleetPair> pairs;
  int count(Sharing sharing) const;
};

nlohmann::json fleets_json(const FleetsResult& result);
// The counts, then every pair that shares (fully or one-sided): what
// `locklab fleets` prints and the README quotes.
std::string fleets_summary(const FleetsResult& result);
// The heading, the summary, the grid (one row per lock met second in a pair)
// and every pair with its reasons, counts and run time.
std::string fleets_markdown(const FleetsResult& result);

// Writes fleets.md and fleets.json into result.dir, each atomically.
Status write_fleets_report(const FleetsResult& result);

}  // namespace locklab::harness
