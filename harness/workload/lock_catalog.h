// One way to find a lock by the name `--lock` gives it: a generation of the
// registry (impls/registry.h), or a lock library behind an adapter
// (docs/adapters.md), "ext:NAME", either shipped (harness/adapters/catalog.json)
// or the user's own (`--adapter 'CMD ARGS'`, or an entry of a `--catalog FILE`
// in the shipped catalog's format: workload/user_adapters.h). Every harness caller that
// needs a lock's description (the run's options and servers, its document,
// the sweeps) asks here; the nemesis is handed the capabilities.
//
// The catalog is found in LOCKLAB_PEERS_DIR: the environment variable when
// set, else the source tree's harness/adapters (a compile definition). Its
// adapters' relative paths (those with a '/') are relative to that folder.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "redis/result.h"

#include "lock.h"
#include "registry.h"

#include "workload/catalog_cells.h"

namespace locklab::harness {

inline constexpr std::string_view kAdapterPrefix = "ext:";

// A lock as a run needs to know it: what a Generation says, and for an
// adapter its command and what it claims.
struct LockDescription {
  std::string name;     // as --lock spells it: "lua-safe-delete", "ext:redis-py"
  std::string number;   // the generation's ("4"); "ext" for an adapter
  std::string summary;  // one line: how it locks
  std::string race;     // one line: what breaks it ("" for a library: the matrix finds out)
  Capabilities capabilities;
  // The Redis key it locks for the run's key K, "{key}" standing for K: every
  // generation locks K itself (its other keys, a queue or a fence, are named
  // after K); a shipped adapter's is its catalog entry's `key` ("mutex:{key}");
  // "" when nobody said (an adapter given by --adapter, or an entry without it).
  std::string key_pattern;
  // Adapters only (empty for a generation).
  std::vector<std::string> adapter;    // argv, paths resolved
  std::string label;                   // names the adapter in every error line: "ext:redis-py"
  std::string library, language;       // as the catalog says ("" for --adapter until its init_ok)
  std::set<std::string> claimed;       // capability words the catalog says are true
  bool from_catalog = false;           // declared in a catalog (shipped or --catalog): its init_ok must claim exactly `claimed`
  bool shipped = false;                // an entry of harness/adapters/catalog.json
  // A catalog row that departs from its library's defaults (docs/peers.md, "Defaults and
  // variants"): the row it varies ("node-redlock", without ext:) and why it is kept. "" for a base row.
  // A generation's variant row (impls/registry.h, generation_variants()): its generation, by name.
  std::string variant_of, variant_reason;
  // In `matrix --libraries main` (the default of --quick, the main job): a catalog row is,
  // unless it is a variant or says "main": false. A generation's variant row is not either.
  bool main_row = true;
  bool declared_in_init_ok = false;    // --adapter alone: asked before a matrix planned it (with_declared)
  // Why the clock shim (an LD_PRELOAD) cannot skew this adapter's clock, from its catalog entry's
  // "clock_shim_unreachable" ("" = it can): a Go binary reads the clock through the vDSO, not libc.
  std::string clock_shim_unreachable;
  // Where `matrix` runs this row's failover column, from its catalog entry's "failover_topology":
  // "" (a master with one replica, like every row) or "cluster" (a Redis Cluster with replicas,
  // the client configured for a cluster: seed 000's topology for Redisson, issue 27 item 3).
  std::string failover_topology;
  // How long a command that a connection reset caught takes, at the library's defaults, to come
  // back to its caller (a timeout and a retry delay; a blocking command sent again whole), from
  // the catalog entry's "resend_ms" (0: at once, or not said; only a lock that claims auto_extends
  // may say it). The failover and node-restart columns keep a parked holder whose watchdog renews
  // its lease that much longer, so that a contender the reset caught mid-command is back while
  // the holder is still inside (sweeps/matrix_columns.cpp).
  int resend_ms = 0;
  // The columns whose fault catches every waiter's request (catalog "catch_waiters": {COLUMN:
  // PATTERN}, for failover, node-restart and node-minority; PATTERN a protocol pattern without
  // "resp:"), each for a row whose class otherwise hung on whether a waiter's request was on its
  // way as the server went (the fault's catch=, nemesis/caught_waiters.h); {node-minority:
  // PATTERN}, for a quorum lock, splits two contenders' first round instead (split=,
  // nemesis/split_votes.h). "catch_waiters_reason" says why.
  std::map<std::string, std::string> catch_waiters;
  // Where the failover and node-restart columns park the holder (catalog "park_holder": {COLUMN:
  // {"warm_up": N, "after_read": true}}; the fault's warm-up=N and park=read, nemesis/node_faults.cpp),
  // for a row whose state counts its acquisitions (a fencing token): the holder parked after N
  // acquisitions holds a count above the few draws the fault's resets spend, and, parked after
  // its accepted read, waits for a contender's accepted read; the matrix runs such a cell N
  // sections longer and, with after_read, with two clients (sweeps/matrix_columns.cpp,
  // apply_park_holder). "park_holder_reason" says why.
  struct HolderParkPlan {
    int warm_up = 0;
    bool after_read = false;
  };
  std::map<std::string, HolderParkPlan> park_holder;
  // The row's service hands the library's fencing token to its resource, as the library's README
  // does (catalog "token_at_resource", a fencing row only): the workload's counter refuses a stale
  // token, as for generation 7 (AdapterLock::carry_tokens). False: the token is not judged.
  bool token_at_resource = false;
  // The matrix cells a shipped row expects (catalog "expected", workload/catalog_cells.h); a
  // variant's include its base row's. Empty for a generation (its cells are its columns') and for
  // the user's own (their classes are the finding, or --expect FILE's).
  CatalogCells expected;
  // The user's own adapter as flags that give it again ("--catalog mine.json",
  // "--adapter 'ext:mine=python3 mine.py'"), for replay lines; "" otherwise.
  std::string given_as;
  // Client `client`'s lock (an adapter is spawned in the calling process and
  // told the client number). A single-node lock gets only the first server.
  std::function<LockResult(const LockConfig&, int client)> make;

  LockDescription() = default;
  LockDescription(const Generation& generation);  // NOLINT: a generation is a lock description
  bool is_adapter() const { return !adapter.empty(); }
};

// A generation, or a catalog peer ("ext:NAME"); an Error (usage) names what is
// unknown or what is wrong with the catalog.
// A label names files (a matrix cell's) and flags: letters, digits, '.', '_', '-', and '+'
// (a variant row: "node-redlock+failfast").
bool label_word(std::string_view label);

Result<LockDescription> find_lock(std::string_view name);
// `--lock ext:LABEL --adapter 'CMD ARGS'`: an adapter that is not shipped; its
// capabilities are unknown until its init_ok (with_claims). Without a command,
// or for a name that is not ext:, find_lock(name); a shipped name is refused.
Result<LockDescription> find_lock(std::string_view name, std::string_view adapter_command);

// The key `lock` locks for the run's key `key`: its key_pattern with "{key}"
// replaced; "" when the pattern is unknown.
std::string locked_key(const LockDescription& lock, std::string_view key);

// The shipped adapters, in the catalog's order (empty when it cannot be read).
std::vector<LockDescription> catalog_peers();
// A catalog file in the shipped catalog's format ({"peers": [{name, adapter,
// key, library, language, capabilities, release_window, acquire_gap}]}) but
// for "expected" (the classes the user expects are --expect FILE's), its
// relative adapter paths (those with a '/') resolved against `dir`; a usage
// Error, one line naming the file and the entry, for anything malformed. Its
// entries are declared (from_catalog), not shipped.
Result<std::vector<LockDescription>> read_catalog(const std::string& path, const std::string& dir);
// Whether `name` is an entry of the shipped catalog.
bool is_shipped(std::string_view name);
// The folder the catalog is read from.
std::string peers_dir();
// What a shipped adapter needs that this machine lacks, in one line ("" when
// nothing is missing): a JavaScript adapter needs the npm modules that
// harness/adapters/kits/js/install puts into kits/js/node_modules, under the catalog's folder;
// a Go adapter its binary, which harness/adapters/kits/go/install builds (or says, in
// kits/go/bin/NOT_BUILT, why it could not).
// a Java adapter (argv: kits/java/run NAME MODE) needs `java` on PATH and the jar that
// harness/adapters/kits/java/install builds, kits/java/target/NAME/NAME.jar ("not installed: ...").
std::string missing_prerequisite(const LockDescription& lock);

// The registry's capability words ("expires", "auto_extends", ...) that are true.
std::set<std::string> capability_words(const Capabilities& capabilities);
// "{expires, owner_checked_release}", for messages.
std::string words_text(const std::set<std::string>& words);
// An adapter's description with the capabilities its init_ok claimed (--adapter).
LockDescription with_claims(LockDescription lock, const std::set<std::string>& words);
// with_claims(), and the step points its init_ok declared ("" or resp:PATTERN,
// as a catalog entry's release_window and acquire_gap); a usage Error naming
// the adapter for a step point of another form.
Result<LockDescription> with_declared(LockDescription lock, const std::set<std::string>& words,
                                      const std::string& release_window, const std::string& acquire_gap);

}  // namespace locklab::harness
