#include "sweeps/matrix.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "support/run_id.h"
#include "nemesis/fault_registry.h"
#include "sweeps/adapter_declaration.h"
#include "sweeps/cell_pool.h"
#include "sweeps/matrix_expectations.h"
#include "report/matrix_report.h"
#include "run/run_document.h"
#include "support/json_read.h"
#include "support/text.h"

namespace locklab::harness {
namespace {

using nlohmann::json;

// The workload every cell starts from: small enough that ~120 cells fit in a
// few minutes on 2 cores, large enough that every fault meets a contender.
// The ttl leaves 480 ms of slack over the 20 ms hold: a client starved of CPU
// that long on a loaded machine is rare; at 200 ms it was not (a fair-queue
// holder lost its lease to scheduling alone, load average 15 on 2 cores).
constexpr int kTtlMs = 500;

RunOptions cell_workload(const LockDescription& generation, bool quick) {
  RunOptions options;
  options.lock = generation.name;
  options.clients = 3;
  options.ops = quick ? 9 : 30;
  // A lock whose lease is coarser than kTtlMs (setnx-expire's EXPIRE takes
  // whole seconds: 1 s) runs with the lease it gets, so every time derived from
  // the ttl (a slow section of 3 x ttl, a pause) is measured against that lease.
  const int resolution = std::max(generation.capabilities.ttl_resolution_ms, 1);
  options.ttl_ms = (kTtlMs + resolution - 1) / resolution * resolution;
  options.hold_ms = 20;      // << ttl: without the fault every Redis lock is safe
  options.wait_ms = 2 * options.ttl_ms;  // a contender outwaits one lapsed lease
  options.retry_ms = 5;
  options.mode = ClientMode::process;  // crash and pause need a process of its own
  options.nodes = 5;
  options.key = "locklab:matrix";
  options.own_oracle = true;  // every cell judged by both oracles: they must agree
  return options;
}

// A lock of the user's own without the step point a column parks at, as its
// catalog entry or its init_ok (asked before the row is planned:
// sweeps/adapter_declaration.h) declares it: n/a, naming the field and where
// it was not declared.
std::string undeclared(const LockDescription& lock, const FaultColumn& column) {
  if (!lock.is_adapter() || lock.shipped) return "";
  const bool asked = lock.from_catalog || lock.declared_in_init_ok;
  if (!asked && (column.name == "release-race" || column.name == "expire-gap" || column.name == "node-minority"))
    return lock.name + ": nothing declares what this column needs (its init_ok could not be read before the run; "
           "a --catalog entry can declare it: docs/adapters.md)";
  std::string missing;
  if (column.name == "release-race" && lock.capabilities.expires && lock.capabilities.release_window.empty())
    missing = "release_window (resp:PATTERN, the request its release sends): nowhere to park its release";
  if (column.name == "expire-gap" && lock.capabilities.acquire_gap.empty())
    missing = "acquire_gap (resp:PATTERN): no step between taking the key and its expiry";
  if (missing.empty()) return "";
  return lock.name + ": " + (lock.from_catalog ? "its catalog entry" : "its init_ok") + " declares no " + missing +
         " (docs/adapters.md)";
}

std::string not_applicable(const LockDescription& generation, const FaultColumn& column) {
  const Capabilities& can = generation.capabilities;
  if (!can.uses_redis) return "no Redis lock to fault";
  if (auto why = undeclared(generation, column); !why.empty()) return why;
  if (column.name == "release-race" && !can.expires) return "no expiry: the key cannot lapse in the release window";
  if (column.name == "release-race" && can.release_window.empty()) return "no step point in its release window";
  if (column.name == "expire-gap" && can.acquire_gap.empty()) return "no step between taking the key and its expiry";
  if (column.name == "failover" && can.multi_node) return "independent masters, no replicas";
  if (column.name == "node-minority" && !can.multi_node) return "a single node: no minority to lose";
  if (column.name == "clock-skew" && !generation.clock_shim_unreachable.empty())
    return generation.clock_shim_unreachable;  // the catalog says why the skew cannot reach it
  return "";
}

// One plan per column: the cell's faults, and what its workload changes so
// that the fault meets a contender. Each gets the base workload (after the
// topology columns' switch to a duration) and the generation.
using PlanColumn = void (*)(CellPlan& plan, const LockDescription& generation, bool quick);

void plan_holder_crash(CellPlan& plan, const LockDescription&, bool) {
  RunOptions& o = plan.options;
  // Half a lease: the gap a crash leaves (nearly one ttl) shows as a stall.
  o.stall_ms = o.ttl_ms / 2;
  plan.faults = {"holder-crash"};
}

void plan_holder_pause(CellPlan& plan, const LockDescription& generation, bool) {
  RunOptions& o = plan.options;
  o.hold_ms = 50;
  // One waiter for a quorum lock: two waiters that split the freed nodes may
  // both fail their quorum until the pause ends (sesamecare keeps its partial
  // votes through its retries), and the lapse is then "safe, exposed" by luck.
  if (generation.capabilities.multi_node) o.clients = 2;
  // Bounded at 3 x ttl: what setnx (no expiry, nobody gets in) waits for.
  plan.faults = {"holder-pause:until=other-acquired:max=" + std::to_string(3 * o.ttl_ms)};
}

void plan_slow_holder(CellPlan& plan, const LockDescription&, bool) {
  plan.faults = {"slow-holder:ms=" + std::to_string(3 * plan.options.ttl_ms)};
}

void plan_release_race(CellPlan& plan, const LockDescription& generation, bool quick) {
  RunOptions& o = plan.options;
  // Two clients. The first to reach the release window stops there (the
  // whole process: a watchdog stops too, so the lease lapses) until the other
  // client has got in and is inside; then it goes on, and its late release
  // meets the new holder's key while that holder is still inside (hold ms).
  // A condition, not a fixed pause: a fixed one ended before an extended
  // lease could lapse, and the race never ran (the bite says whether it did).
  // Its next attempt may then get in beside the new holder.
  o.clients = 2;
  o.ops = quick ? 6 : 20;
  o.hold_ms = o.ttl_ms / 2;
  plan.faults = {"holder-pause:at=" + std::string(generation.capabilities.release_window) +
                 ":until=other-inside:max=" + std::to_string(3 * o.ttl_ms)};
}

void plan_expire_gap(CellPlan& plan, const LockDescription& generation, bool quick) {
  RunOptions& o = plan.options;
  // The survivors wait behind a key that never expires: a few attempts of
  // one lease each show it (a stall of half a lease is already one).
  o.stall_ms = o.ttl_ms / 2;
  o.wait_ms = o.ttl_ms;
  o.ops = quick ? 5 : 15;
  plan.faults = {"holder-crash:at=" + std::string(generation.capabilities.acquire_gap)};
}

void plan_clock_skew(CellPlan& plan, const LockDescription&, bool) {
  RunOptions& o = plan.options;
  o.hold_ms = 50;
  plan.faults = {"clock-skew:client=1:offset=" + std::to_string(5 * o.ttl_ms)};
}

// The columns whose fault takes the key away silently (a failover, a restart)
// and resets the contenders' connections while the holder waits inside with
// a patience (half its lease; 2 s for a watchdog lock, watchdog_patience
// below): a contender must notice and win in that time. Two things would hide
// the lost lock behind the contender's own delays:
// - a library's Redis client reconnects after a backoff of its own, growing
//   while the node is down (ioredis 6: 50, 100, 200, 400 ms... each plus up to
//   200 ms of jitter). node-redisson's waiters were back 300 ms after a restart
//   on a quiet machine; on a loaded one (6 cells on 2 cores) the restart itself
//   takes longer, the backoff grows meanwhile, and half of a doubled lease
//   (500 ms) once ran out first: "safe, exposed". The lease is quadrupled, so
//   the holder waits at least 1 s after the fault for a waiter to get back in;
// - a waiter asleep on the holder's PTTL (node-redisson's tryLock, generation
//   5's queue) or retrying one attempt with the votes it already won
//   (@sesamecare-oss/redlock) sees the key gone only when its wait ends: short
//   waits (30 ms, as in clock-jump) keep every waiter trying afresh.
void contenders_keep_trying(RunOptions& o) {
  o.ttl_ms *= 4;
  o.wait_ms = 30;
}

constexpr double kClusterFailoverSeconds = 8.0;

// The faults that park the holder (failover, node-restart, clock-jump) wait
// half a lease for a contender to get in, and the run lasts the quick 1.5 s.
// A lock whose watchdog keeps the parked holder's lease waits 2 s (or half
// its lease, if longer), and its run lasts a second past that, so that its
// contenders keep trying meanwhile: on a loaded machine a JVM's Redisson
// waiter got in only after the 250 ms of a clock jump's half lease, an ioredis
// client's reconnect backoff after a restart outlasted the 1 s of a restart's,
// and python-redis-lock's contenders (a 4 s lease: 2 s of patience already)
// had stopped with the 1.5 s run before the patience ran out. Each read safe
// or liveness for a contender that was late, not kept out. A lock without a
// watchdog keeps the half lease: a longer wait would let its own expiry, not
// the fault, admit the contender (the fault refuses a patience past a lapsing
// lease).
constexpr int kWatchdogPatienceMs = 2000;

// The fault's ":patience=MS" for `generation` ("" for half a lease), lengthening the run to match.
std::string watchdog_patience(RunOptions& o, const LockDescription& generation) {
  if (!generation.capabilities.auto_extends) return "";
  const int patience = std::max(kWatchdogPatienceMs, o.ttl_ms / 2);
  o.duration_s = std::max(o.duration_s, patience / 1000.0 + 1.0);
  return ":patience=" + std::to_string(patience);
}

void plan_failover(CellPlan& plan, const LockDescription& generation, bool) {
  contenders_keep_trying(plan.options);
  plan.options.hold_ms = 100;
  // A row whose catalog says "failover_topology": "cluster" (Redisson's getLock:
  // seed 000 runs it on a Redis Cluster) fails over the key's master of a
  // cluster with replicas, its client configured for the cluster; every other
  // column of the row stays on the single server.
  plan.options.cluster = generation.failover_topology == "cluster";
  // Long enough to see whether the lock is usable after the failover (issue
  // 27: Redisson #4706, #4822): a library that WAITs for its replica spends a
  // second per refused acquire before the failover comes.
  if (plan.options.cluster) plan.options.duration_s = std::max(plan.options.duration_s, kClusterFailoverSeconds);
  plan.faults = {"failover:after=acquire" + watchdog_patience(plan.options, generation)};
}

void plan_node_minority(CellPlan& plan, const LockDescription&, bool) {
  plan.faults = {"node-crash:nodes=2:when=start"};
}

void plan_node_restart(CellPlan& plan, const LockDescription& generation, bool) {
  RunOptions& o = plan.options;
  contenders_keep_trying(o);
  o.hold_ms = 100;
  const int nodes = generation.capabilities.multi_node ? o.nodes / 2 + 1 : 1;
  plan.faults = {"node-crash:nodes=" + std::to_string(nodes) + ":restart=now:when=holder" +
                 watchdog_patience(o, generation)};
}

void plan_clock_jump(CellPlan& plan, const LockDescription& generation, bool) {
  RunOptions& o = plan.options;
  o.hold_ms = 100;
  // The jump expires the key under its holder. A waiter asleep on the PTTL
  // it read before the jump (reentrant-watchdog) would miss the lapse and
  // the cell would read safe by luck: short waits keep every waiter polling,
  // so where the algorithm allows a second holder one is there at once.
  o.wait_ms = 30;
  // Redlock: the holder is given a bare majority (nodes 0-2) and the jump
  // hits one of them -- Kleppmann's K2, the case the algorithm does not
  // survive. On all five nodes it would keep a majority, but under
  // contention whether it won three or five was luck.
  const std::string majority = generation.capabilities.multi_node ? ":holder-nodes=3" : "";
  plan.faults = {"clock-jump:node=0:offset=" + std::to_string(10 * o.ttl_ms) + ":when=holder" + majority +
                 watchdog_patience(o, generation)};
}

void plan_net_cut(CellPlan& plan, const LockDescription&, bool quick) {
  RunOptions& o = plan.options;
  o.clients = 2;
  o.ops = quick ? 4 : 12;
  o.hold_ms = 2 * o.ttl_ms;  // working past the lease: only renewals could keep it
  plan.faults = {"net:mode=cut:target=holder:at=held"};
}

void plan_unavailable_release(CellPlan& plan, const LockDescription&, bool) {
  plan.options.stall_ms = plan.options.ttl_ms / 2;
  // The holder stays cut off until another client got in: the others meet
  // the key its refused release left, not its owner re-entering it first.
  plan.faults = {"unavailable:at=release:mode=refuse:until=other-acquired"};
}

// The plan of each column of report/matrix_cells.cpp, by its name: the report
// draws the columns, this sweep measures them.
PlanColumn find_plan(std::string_view column) {
  static const std::pair<std::string_view, PlanColumn> plans[] = {
      {"holder-crash", plan_holder_crash},     {"holder-pause", plan_holder_pause},
      {"slow-holder", plan_slow_holder},       {"release-race", plan_release_race},
      {"expire-gap", plan_expire_gap},         {"clock-skew", plan_clock_skew},
      {"failover", plan_failover},             {"node-minority", plan_node_minority},
      {"node-restart", plan_node_restart},     {"clock-jump", plan_clock_jump},
      {"net-cut", plan_net_cut},               {"unavailable-release", plan_unavailable_release},
  };
  for (const auto& [name, plan] : plans)
    if (name == column) return plan;
  return nullptr;
}

// A column with no plan of its own keeps the base workload and injects nothing.
PlanColumn column_plan(std::string_view column) {
  const PlanColumn plan = find_plan(column);
  return plan != nullptr ? plan : [](CellPlan&, const LockDescription&, bool) {};
}

std::string duration_text(double seconds) {
  std::ostringstream out;
  out << seconds;
  return out.str();
}

// The `locklab run` line that replays one cell on its own.
std::string replay_command(const CellPlan& plan) {
  const RunOptions& o = plan.options;
  std::string line = "locklab run --lock " + o.lock + " --clients " + std::to_string(o.clients) +
                     (o.ops ? " --ops " + std::to_string(*o.ops) : " --duration " + duration_text(o.duration_s)) +
                     " --ttl " + std::to_string(o.ttl_ms) + " --hold " +
                     std::to_string(o.hold_ms) + " --wait " + std::to_string(o.wait_ms) + " --retry " +
                     std::to_string(o.retry_ms) + " --key " + o.key;
  if (o.stall_ms > 0) line += " --stall " + std::to_string(o.stall_ms);
  if (o.own_oracle) line += " --oracle";
  if (o.cluster) line += " --cluster";
  for (const auto& spec : plan.faults) line += " --fault " + shell_word(spec);
  if (const LockDescription* own = o.user_adapters.find(o.lock)) line += " " + own->given_as;
  return line;
}

// A row that is an adapter of the user's own: not a generation, not shipped.
bool users_row(const std::string& lock) { return lock.starts_with(kAdapterPrefix) && !is_shipped(lock); }

std::string cell_path(const std::string& dir, const std::string& lock, const std::string& fault) {
  return (std::filesystem::path(dir) / "cells" / (lock + "__" + fault + ".json")).string();
}

// A user's row: unwritten (what it does is the finding), unless --expect
// names the cell: then it is checked as a shipped one (sweeps/user_expectations.h).
Cell expected_of(Cell cell, const UserExpectations* expect = nullptr) {
  if (users_row(cell.lock)) {
    cell.unwritten = true;
    cell.expected = cell.observed;
    cell.expected_reason = "a lock of your own: no class is written down for it; the observed one is the finding";
    return expect != nullptr ? with_user_expectation(std::move(cell), *expect) : cell;
  }
  if (auto expectation = expected_cell(cell.lock, cell.fault)) {
    cell.expected = expectation->expected;
    cell.also_expected = expectation->or_else;
    cell.expected_exposed = expectation->exposed;
    cell.expected_exposed_either = expectation->exposed_either;
    cell.expected_reason = expectation->reason;
  } else {
    cell.expected = CellClass::error;
    cell.expected_reason = "no expectation written down for this cell (harness/sweeps/matrix_expectations.cpp)";
  }
  return cell;
}

// The run's clients whose adapter died on its own (safety.adapter_deaths), one line each.
std::vector<std::string> adapter_deaths(const json& run) {
  std::vector<std::string> deaths;
  const json* safety = run.contains("safety") ? &run["safety"] : nullptr;
  if (safety == nullptr || !safety->contains("adapter_deaths") || !(*safety)["adapter_deaths"].is_array()) return deaths;
  for (const auto& death : (*safety)["adapter_deaths"])
    if (death.is_string()) deaths.push_back(death.get<std::string>());
  return deaths;
}

// "not exercised: SPEC: what its bite saw" when a fault of the run did not
// bite (docs/harness.md, "Bite"): the cell cannot be at any class, its own
// expected one included. A record without "bit" (locklab.run/1) is not judged.
// A run in which a client's adapter died on its own stands (run/run.cpp,
// judge_faults_bit): the fault took the service down before its race could
// run, and that is the cell's finding (liveness), not a schedule that missed.
std::optional<std::string> not_exercised(const json& run) {
  if (!run.contains("faults") || !run["faults"].is_array()) return std::nullopt;
  if (!adapter_deaths(run).empty()) return std::nullopt;
  for (const auto& fault : run["faults"])
    if (fault.is_object() && fault.contains("bit") && fault["bit"] == false)
      return "not exercised: " + fault.value("spec", std::string("?")) + ": " + fault.value("bite", std::string());
  return std::nullopt;
}

// Measures one cell (or records why it is N/A) and writes its file.
Cell measure_cell(const std::string& dir, const LockDescription& generation, const FaultColumn& column, bool quick,
                  const UserExpectations& expect) {
  Cell cell;
  cell.lock = generation.name;
  cell.fault = column.name;
  CellPlan plan = plan_cell(generation, column, quick);
  if (generation.is_adapter() && !generation.shipped) plan.options.user_adapters.locks = {generation};
  cell.specs = plan.faults;
  if (!plan.not_applicable.empty()) {
    cell.observed = CellClass::not_applicable;
    cell.not_applicable = plan.not_applicable;
  } else {
    plan.options.command = replay_command(plan);
    plan.options.faults = plan.faults;
    auto document = measure(plan.options);
    if (!document) {
      cell.observed = CellClass::error;
      cell.error = one_line(document.error().message);
    } else {
      (*document)["config"]["json"] = cell_path(dir, cell.lock, cell.fault);
      cell.observed = classify(*document);
      cell.observed_reason = observed_reason(*document);
      cell.exposed = exposed(*document);
      if (auto why = not_exercised(*document)) {  // whatever it read, the race never ran
        cell.observed = CellClass::error;
        cell.error = *why;
      }
      cell.run = std::move(*document);
    }
  }
  cell = expected_of(std::move(cell), &expect);
  if (auto written = write_json_atomically(cell_path(dir, cell.lock, cell.fault), cell_json(cell)); !written) {
    cell.observed = CellClass::error;
    cell.error = written.error().message;
  }
  return cell;
}

// The --expect check a user's cell file records (its expected_reason names
// the file, its `expected` the classes: "safe" or "safe or liveness", then
// ", exposed or not"), as an expectation of that one cell; nullopt for any other.
std::optional<UserExpectations> expectation_in_file(const std::string& lock, const std::string& fault,
                                                    const json& document) {
  const std::string reason = text_at(document, "/expected_reason");
  if (!users_row(lock) || !reason.starts_with(kExpectReason)) return std::nullopt;
  std::string text = text_at(document, "/expected");
  text = text.substr(0, text.find(','));
  const auto split = text.find(" or ");
  const auto first = parse_class(text.substr(0, split));
  if (!first) return std::nullopt;
  UserExpectations expect;
  // The file name runs to the reason's fixed end (a path may hold a ':').
  const std::size_t from = std::string_view(kExpectReason).size();
  expect.file = reason.substr(from, reason.rfind(kExpectReasonEnd) - from);
  expect.rows[lock][fault].expected = *first;
  if (split != std::string::npos) expect.rows[lock][fault].or_else = parse_class(text.substr(split + 4));
  return expect;
}

Result<Cell> load_cell(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{ErrorKind::io, "cannot read " + path};
  const json document = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || document.value("schema", "") != kCellSchema)
    return Error{ErrorKind::io, path + " is not a " + kCellSchema + " document"};
  Cell cell;
  cell.lock = text_at(document, "/lock");
  cell.fault = text_at(document, "/fault");
  cell.specs = document.value("faults", std::vector<std::string>{});
  cell.observed = parse_class(text_at(document, "/observed")).value_or(CellClass::error);
  cell.exposed = document.value("exposed", false);
  cell.not_applicable = text_at(document, "/not_applicable");
  cell.error = text_at(document, "/error");
  cell.observed_reason = text_at(document, "/observed_reason");
  cell.run = document.value("run", json());
  const auto expect = expectation_in_file(cell.lock, cell.fault, document);
  return expected_of(std::move(cell), expect ? &*expect : nullptr);
}

void announce(const Cell& cell, std::size_t index, std::size_t total) {
  std::string detail = cell.error.empty() ? "" : " (" + cell.error + ")";
  std::fprintf(stderr, "locklab matrix: [%zu/%zu] %s x %s: %s%s%s\n", index + 1, total, cell.lock.c_str(),
               cell.fault.c_str(), cell.observed_text().c_str(),
               cell.matches() ? "" : (" -- expected " + cell.expected_text()).c_str(), detail.c_str());
}

struct Job {
  LockDescription generation;  // a generation, or a library through its adapter (workload/lock_catalog.h)
  const FaultColumn* column;
};

// Why this build cannot inject the column's faults (a fault or key the
// registry does not know), or nullopt when it can.
std::optional<std::string> column_not_injectable(const FaultColumn& column) {
  for (const auto& generation : generations())
    for (const auto& spec : plan_cell(generation, column, true).faults)
      if (auto problem = fault_spec_problem(spec)) return *problem;
  return std::nullopt;
}

// The default rows: every generation (and, in a matrix of every row, each
// generation's variant rows), then every shipped peer whose adapter can run
// here (one line on stderr names the peers left out and why), then the user's
// own adapters.
std::vector<std::string> default_rows(const UserAdapters& user, bool all_libraries) {
  std::vector<std::string> locks;
  for (const auto& generation : generations()) locks.push_back(generation.name);
  if (all_libraries)  // a variant, as the catalog's: in the full matrix and --libraries all
    for (const auto& variant : generation_variants()) locks.push_back(variant.name);
  std::string skipped, why;
  for (const auto& peer : catalog_peers()) {
    if (!all_libraries && !peer.main_row) continue;  // a variant: in the full matrix and --libraries all
    if (const std::string missing = missing_prerequisite(peer); !missing.empty()) {
      skipped += (skipped.empty() ? "" : ", ") + peer.name;
      // Each reason once: the npm modules' for every JavaScript row, a Go binary's or the Java build's for each of theirs.
      if (why.find(missing) == std::string::npos) why += (why.empty() ? "" : "; ") + missing;
      continue;
    }
    locks.push_back(peer.name);
  }
  if (!skipped.empty()) std::fprintf(stderr, "locklab matrix: peers skipped (%s): %s\n", skipped.c_str(), why.c_str());
  for (const auto& own : user.locks) locks.push_back(own.name);
  return locks;
}

// The rows: the --lock names, or default_rows(); a usage Error names an
// unknown one, or a peer whose adapter cannot run here.
Result<std::vector<std::string>> select_rows(const MatrixOptions& options) {
  if (!options.libraries.empty() && options.libraries != "main" && options.libraries != "all")
    return Error{ErrorKind::usage, option_problem("--libraries", "'" + options.libraries + "' is not main or all")};
  const bool all = options.libraries.empty() ? !options.quick : options.libraries == "all";
  const std::vector<std::string> locks = options.locks.empty() ? default_rows(options.user, all) : options.locks;
  for (const auto& lock : locks) {
    if (std::count(locks.begin(), locks.end(), lock) > 1)
      return Error{ErrorKind::usage, option_problem("--lock", lock + " is given twice")};
    auto found = find_lock(lock, options.user);
    if (!found) return Error{ErrorKind::usage, option_problem("--lock", found.error().message)};
    if (const std::string missing = missing_prerequisite(*found); !missing.empty())
      return Error{ErrorKind::usage, "--lock " + lock + ": " + missing};
  }
  return locks;
}

// Each variant row's note for the page: "variant of ext:BASE: why", or of a
// generation "variant of BASE: why" (lock_catalog.h).
std::map<std::string, std::string> variant_notes(const std::vector<std::string>& locks) {
  std::map<std::string, std::string> notes;
  for (const auto& lock : locks)
    if (auto found = find_lock(lock); found && !found->variant_of.empty())
      notes[lock] = "variant of " + std::string(found->is_adapter() ? kAdapterPrefix : "") + found->variant_of + ": " +
                    found->variant_reason;
  return notes;
}

// Each row's generation number ("ext" for a library, the user's too), and
// every generation's, for the report.
std::map<std::string, std::string> row_numbers(const std::vector<std::string>& locks) {
  std::map<std::string, std::string> numbers;
  for (const auto& generation : generations()) numbers[generation.name] = generation.number;
  for (const auto& lock : locks)
    if (lock.starts_with(kAdapterPrefix)) numbers[lock] = "ext";
    else if (const Generation* variant = find_generation(lock)) numbers[lock] = variant->number;
  return numbers;
}

// The generations the matrix did not measure, as their written expectations
// say they behave (MatrixResult::written): a library row, a user's above all
// (`--lock ext:mine` alone), still gets a nearest generation without a
// generation row measured beside it. None without a library row.
std::vector<Cell> written_rows(const MatrixResult& result) {
  std::vector<Cell> written;
  const auto has = [&](const std::string& lock) {
    return std::find(result.locks.begin(), result.locks.end(), lock) != result.locks.end();
  };
  if (std::none_of(result.locks.begin(), result.locks.end(), [](const auto& l) { return l.starts_with(kAdapterPrefix); }))
    return written;
  for (const auto& generation : generations()) {
    if (has(generation.name)) continue;
    for (const auto& fault : result.faults) {
      Cell cell;
      cell.lock = generation.name;
      cell.fault = fault;
      if (const FaultColumn* column = find_column(fault); column && !not_applicable(generation, *column).empty())
        cell.observed = CellClass::not_applicable;
      else if (auto expectation = expected_cell(generation.name, fault))
        cell.observed = expectation->expected;
      else
        continue;  // nothing written: not compared
      cell = expected_of(std::move(cell));
      cell.exposed = cell.expected_exposed;
      written.push_back(std::move(cell));
    }
  }
  return written;
}

// The columns, in the columns' order whatever the flags' order: the --fault
// names (a usage Error for an unknown or uninjectable one), or every column
// this build can inject (the others left out with a line on stderr).
Result<std::vector<std::string>> select_columns(const MatrixOptions& options) {
  for (const auto& fault : options.faults) {
    if (find_column(fault) == nullptr) {
      std::string known;
      for (const auto& column : fault_columns()) known += (known.empty() ? "" : ", ") + column.name;
      return Error{ErrorKind::usage, "--fault: unknown matrix column '" + fault + "' (one of: " + known + ")"};
    }
    if (auto missing = column_not_injectable(*find_column(fault)))
      return Error{ErrorKind::usage, "--fault: " + fault + " cannot be injected by this build (" + *missing + ")"};
  }
  std::vector<std::string> faults;
  if (options.faults.empty()) {
    for (const auto& column : fault_columns()) {
      if (auto missing = column_not_injectable(column)) {
        std::fprintf(stderr, "locklab matrix: column %s left out: %s\n", column.name.c_str(), missing->c_str());
        continue;
      }
      faults.push_back(column.name);
    }
  } else {
    for (const auto& column : fault_columns())
      if (std::find(options.faults.begin(), options.faults.end(), column.name) != options.faults.end())
        faults.push_back(column.name);
  }
  return faults;
}

// The matrix to measure, without its cells: rows, columns and a directory
// with its cells/ folder made; or a usage Error (bad options), an io one.
Result<MatrixResult> select_cells(const MatrixOptions& options) {
  MatrixResult result;
  result.quick = options.quick;
  result.lang = options.lang;
  result.command = options.command;
  if (options.jobs < 1 || options.jobs > 8) return Error{ErrorKind::usage, "--jobs: must be between 1 and 8"};
  auto locks = select_rows(options);
  if (!locks) return locks.error();
  result.locks = std::move(*locks);
  result.numbers = row_numbers(result.locks);
  result.variant_notes = variant_notes(result.locks);
  auto faults = select_columns(options);
  if (!faults) return faults.error();
  result.faults = std::move(*faults);
  result.dir = options.out;
  if (result.dir.empty()) result.dir = (std::filesystem::path("results/matrix") / new_run_id("results/matrix")).string();
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(result.dir) / "cells", ec);
  if (ec) return Error{ErrorKind::io, "cannot create " + result.dir + "/cells: " + ec.message()};
  return result;
}

// A rough weight of a cell's wall time, for the order the workers take them
// in: a topology column runs for a time and waits on its fault's patience, an
// adapter starts an interpreter per client, an n/a cell measures nothing.
int cell_weight(const Job& job) {
  if (!not_applicable(job.generation, *job.column).empty()) return 0;
  return (job.column->topology ? 3 : 1) * (job.generation.is_adapter() ? 2 : 1);
}

// Every cell, the heaviest first (then row-major): the last cells to start are
// short ones, so the workers finish together.
std::vector<Job> jobs_of(const MatrixResult& result, const UserAdapters& user) {
  std::vector<Job> jobs;
  for (const auto& lock : result.locks)
    for (const auto& fault : result.faults) jobs.push_back({find_lock(lock, user).value(), find_column(fault)});
  std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return cell_weight(a) > cell_weight(b); });
  return jobs;
}

// Measures the cells, each into its file: in this process for one worker,
// else in options.jobs forked workers (sweeps/cell_pool.h), waited for.
Status measure_cells(const std::string& dir, const std::vector<Job>& jobs, const MatrixOptions& options) {
  return run_pool(jobs.size(), options.jobs, [&](std::size_t i) {
    const Cell cell = measure_cell(dir, jobs[i].generation, *jobs[i].column, options.quick, options.expect);
    if (options.progress) announce(cell, i, jobs.size());
  });
}

// One cell from its file. A file that is missing or unreadable is a cell of
// class error saying why.
Cell cell_from_file(const std::string& dir, const std::string& lock, const std::string& fault) {
  auto cell = load_cell(cell_path(dir, lock, fault));
  if (cell) return std::move(*cell);
  Cell lost;
  lost.lock = lock;
  lost.fault = fault;
  lost.error = cell.error().message;
  return expected_of(std::move(lost));
}

// Every cell from its file: one path for one worker or several.
std::vector<Cell> collect_cells(const std::string& dir, const std::vector<Job>& jobs) {
  std::vector<Cell> cells;
  for (const auto& job : jobs) cells.push_back(cell_from_file(dir, job.generation.name, job.column->name));
  return cells;
}

}  // namespace

// A fault that bit by the lock's refusal (Bite::refused_not_held): nobody held, so never `safe`.
static bool refused_not_held(const json& run) {
  const auto faults = run.find("faults");
  return faults != run.end() && faults->is_array() &&
         std::any_of(faults->begin(), faults->end(),
                     [](const json& f) { return f.is_object() && f.value("refused_not_held", false); });
}

// Every adapter of the run got the lock once before its clients ran (the probe): a lock that
// cannot acquire at all is broken, not made unavailable by a fault.
static bool adapters_acquired_before(const json& run) {
  const auto adapters = run.find("adapters");
  if (adapters == run.end() || !adapters->is_object()) return true;  // a generation: no adapter to be broken
  return std::all_of(adapters->begin(), adapters->end(), [](const json& adapter) {
    return adapter.is_object() && adapter.value("probe_acquired", false);
  });
}

// No refused attempt may have taken the lock: an `unknown` one may have, unless the lock servers'
// witness watched the lock's key and saw no event on it at all.
static bool refusals_took_nothing(const json& run) {
  if (number_at(run, "/totals/unknown") == 0) return true;
  const auto witness = run.find("witness");
  return witness != run.end() && witness->is_object() && witness->value("watched", false) &&
         witness->value("events", -1) == 0;
}

// Every acquire refused, the run's one error (Verdict::every_acquire_refused), while each of its
// faults acted and bit: the lock was unavailable under the fault (redlock-rs gives up at the first
// refused node under a node minority), not a run that failed to measure. Only for a lock that
// acquired before the fault, whose refusals took nothing (the servers say so).
static bool refused_under_its_fault(const json& run) {
  const auto safety = run.find("safety");
  if (safety == run.end() || !safety->is_object() || !safety->value("every_acquire_refused", false)) return false;
  const auto faults = run.find("faults");
  if (faults == run.end() || !faults->is_array() || faults->empty()) return false;
  return adapters_acquired_before(run) && refusals_took_nothing(run) &&
         std::all_of(faults->begin(), faults->end(), [](const json& fault) {
           return fault.is_object() && fault.value("acted", false) && fault.value("bit", false);
         });
}

CellClass classify(const json& run) {
  const std::string verdict = run.value("verdict", "error");
  if (verdict == "error") return refused_under_its_fault(run) ? CellClass::liveness : CellClass::error;
  const bool two_holders = number_at(run, "/safety/overlaps") > 0 || number_at(run, "/safety/lost_updates") > 0 ||
                           number_at(run, "/safety/max_concurrent_holders") >= 2;
  const bool wrong_owner = number_at(run, "/safety/wrong_owner_releases") > 0;
  if (verdict == "violation") return two_holders || !wrong_owner ? CellClass::me_violation : CellClass::wrong_owner;
  if (two_holders) return CellClass::me_violation;  // a verdict the checker did not call a violation still had two
  if (verdict == "deadlock") return CellClass::deadlock;
  // A library call still waiting past the harness's bound would have hung the service; an
  // adapter that died on its own (Node's default on an unhandled rejection) took the service down.
  if (number_at(run, "/safety/blocked_calls") > 0) return CellClass::liveness;
  if (!adapter_deaths(run).empty()) return CellClass::liveness;
  const double ttl_ms = number_at(run, "/config/ttl_ms");
  const double unavailable_ms = number_at(run, "/safety/unavailability_ms");
  // Half a lease: a crash right after acquiring leaves the rest of the lease,
  // a little less than one ttl, and that is the unavailability to report.
  if (number_at(run, "/safety/stalls") > 0 || (ttl_ms > 0 && unavailable_ms >= ttl_ms / 2)) return CellClass::liveness;
  if (refused_not_held(run)) return CellClass::liveness;  // the race ran, and the lock refused everyone
  return CellClass::safe;
}

std::string observed_reason(const json& run) {
  std::string why;
  if (number_at(run, "/safety/blocked_calls") > 0) why = text_at(run, "/safety/blocked");
  for (const auto& death : adapter_deaths(run)) why += (why.empty() ? "" : "; ") + death;
  if (refused_not_held(run) && why.empty())
    why = "every acquire failed while the fault's race had its chance: nobody held (the lock was unavailable)";
  if (run.value("verdict", "error") == "error" && refused_under_its_fault(run))
    why += (why.empty() ? "" : "; ") + std::string("every acquire refused while the fault acted: the lock was unavailable (") +
           text_at(run, "/verdict_reasons/0") + ")";
  return why;
}

bool exposed(const json& run) {
  if (run.value("verdict", "error") != "safe") return false;
  return (run.contains("exposed") && run["exposed"].is_boolean() && run["exposed"].get<bool>()) ||
         number_at(run, "/safety/leases_lost_nobody_entered") > 0;
}

bool has_plan(std::string_view column) { return find_plan(column) != nullptr; }

CellPlan plan_cell(const LockDescription& generation, const FaultColumn& column, bool quick) {
  CellPlan plan;
  plan.options = cell_workload(generation, quick);
  plan.not_applicable = not_applicable(generation, column);
  if (!plan.not_applicable.empty()) return plan;
  // Topology faults act once and leave the others erroring for a moment (a
  // cut link, a dead node): a budget of attempts would be spent on those
  // errors before the second holder shows, so these cells run for a time.
  if (column.topology) {
    plan.options.ops.reset();
    plan.options.duration_s = quick ? 1.5 : 4.0;
  }
  column_plan(column.name)(plan, generation, quick);
  return plan;
}

Result<std::vector<std::string>> matrix_rows(const MatrixOptions& options) { return select_rows(options); }

Result<MatrixResult> run_matrix(const MatrixOptions& options) {
  auto selected = select_cells(options);
  if (!selected) return selected.error();
  MatrixResult result = std::move(*selected);
  std::vector<std::string> own_rows;
  std::copy_if(result.locks.begin(), result.locks.end(), std::back_inserter(own_rows), users_row);
  if (auto checked = check_rows(options.expect, own_rows); !checked) return checked.error();
  auto user = with_init_ok_declarations(options.user);
  if (!user) return user.error();
  const std::string declared = (std::filesystem::path(result.dir) / "declared_catalog.json").string();
  if (auto written = write_declared_catalog(*user, declared); !written) return written.error();
  const std::vector<Job> jobs = jobs_of(result, *user);
  if (auto pooled = measure_cells(result.dir, jobs, options); !pooled) return pooled.error();
  result.cells = collect_cells(result.dir, jobs);
  result.written = written_rows(result);
  if (auto written = write_matrix_report(result); !written) return written.error();
  return result;
}

Result<MatrixResult> load_matrix(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "matrix.json").string();
  std::ifstream in(path);
  if (!in) return Error{ErrorKind::io, "cannot read " + path + " (made by: locklab matrix --out " + dir + ")"};
  const json summary = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (summary.is_discarded() || !summary.is_object() || summary.value("schema", "") != kMatrixSchema)
    return Error{ErrorKind::io, path + " is not a " + kMatrixSchema + " document"};
  MatrixResult result;
  result.dir = dir;
  try {
    result.quick = summary.value("quick", false);
    result.command = summary.value("command", "");
    result.locks = summary.value("locks", std::vector<std::string>{});
    result.faults = summary.value("faults", std::vector<std::string>{});
  } catch (const json::exception& e) {  // right keys, wrong types
    return Error{ErrorKind::io, path + " is not a " + kMatrixSchema + " document: " + e.what()};
  }
  result.numbers = row_numbers(result.locks);
  result.variant_notes = variant_notes(result.locks);
  for (const auto& lock : result.locks)
    for (const auto& fault : result.faults) result.cells.push_back(cell_from_file(dir, lock, fault));
  result.written = written_rows(result);
  return result;
}

}  // namespace locklab::harness
