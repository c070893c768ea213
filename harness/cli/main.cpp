// locklab: the command line of the contention harness.
//   locklab list | scenarios | run | compare | matrix | report | scale | merge | failover   (each with --help)
// Exit codes: 0 measured (violations are findings, not failures), 1 runtime
// failure, 2 usage/config error, 3 `run --expect-safe` saw a verdict other than safe.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "trials/cluster_trial.h"
#include "sweeps/compare.h"
#include "nemesis/fault_registry.h"
#include "sweeps/matrix.h"
#include "report/matrix_report.h"
#include "run/multihost.h"
#include "registry.h"
#include "report/report.h"
#include "run/run_document.h"
#include "run/run.h"
#include "sweeps/scale.h"
#include "scenario/scenario_catalog.h"
#include "trials/sentinel_trial.h"

namespace {

using namespace locklab;
using namespace locklab::harness;

constexpr int kOk = 0, kRuntime = 1, kUsage = 2, kUnsafe = 3;

int complain(int code, const std::string& message) {
  std::string line = message;
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  std::fprintf(stderr, "locklab: %s\n", line.c_str());
  return code;
}

int list_generations() {
  if (generations().empty()) std::fprintf(stderr, "locklab: no generations registered yet\n");
  for (const auto& g : generations())
    std::printf("%-20s %-3s %s%s -- %s\n", g.name.c_str(), g.number.c_str(), g.summary.c_str(),
                g.capabilities.multi_node ? " [multi-node]" : "", g.race.c_str());
  return kOk;
}

// --- validators: options.h's bounds and checks, worded as validate() words them ---
// CLI11 reports a validator's message as "FLAG: message", the shape of
// option_problem(), so `locklab` and validate() print the same line.

CLI::Validator within(const Bound& bound) {
  return CLI::Validator(
      [bound](std::string& text) -> std::string {
        double value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, ec] = std::from_chars(text.data(), end, value);
        if (ec != std::errc{} || stop != end) return {};  // not a number: CLI11's conversion says so
        return out_of_bounds(bound, value) ? bound_rule(bound) : std::string{};
      },
      bound_rule(bound).substr(std::string("must be ").size()));  // help: "INT:between 1 and 256"
}

// Turns a "problem or nullopt" check into a validator.
template <class Check>
CLI::Validator checked_by(Check check, std::string description) {
  return CLI::Validator([check](std::string& text) { return check(text).value_or(std::string{}); },
                        std::move(description));
}

std::optional<std::string> endpoints_problem(const std::string& text) {
  std::string why;
  return parse_endpoints(text, &why) ? std::nullopt : std::optional(why);
}

std::optional<std::string> one_endpoint_problem(const std::string& text) {
  std::string why;
  auto endpoints = parse_endpoints(text, &why);
  if (!endpoints) return why;
  if (endpoints->size() != 1) return "takes one HOST:PORT";
  return std::nullopt;
}

std::optional<std::string> step_problem(const std::string& spec) {
  std::string why;
  return parse_step_action(spec, &why) ? std::nullopt : std::optional(why);
}

// The workload flags shared by `run` and `compare`, bound to RunOptions (their
// defaults are its defaults). Returns --duration, whose default compare changes.
CLI::Option* add_workload_flags(CLI::App& app, RunOptions& o) {
  app.add_option("--clients", o.clients, "Number of clients")->check(within(bounds::clients))->capture_default_str();
  auto* ops = app.add_option_function<std::int64_t>(
                     "--ops", [&o](std::int64_t n) { o.ops = n; },
                     "Total acquire attempts across all clients (instead of --duration)")
                  ->check(within(bounds::ops));
  std::ostringstream quick;
  quick << "Seconds to run (compare --quick: " << kQuickDurationS << ")";
  auto* duration =
      app.add_option("--duration", o.duration_s, quick.str())->check(within(bounds::duration_s))->capture_default_str();
  duration->excludes(ops);
  ops->excludes(duration);
  app.add_option("--hold", o.hold_ms, "Milliseconds between GET counter and SET counter (0 allowed)")
      ->check(within(bounds::hold_ms))
      ->capture_default_str();
  app.add_option("--ttl", o.ttl_ms, "Lock lease in ms (TTL generations; gen 5: watchdog timeout)")
      ->check(within(bounds::ttl_ms))
      ->capture_default_str();
  app.add_option("--wait", o.wait_ms, "Bound of each acquire attempt in ms")
      ->check(within(bounds::wait_ms))
      ->capture_default_str();
  app.add_option("--retry", o.retry_ms, "Polling interval in ms for the polling generations")
      ->check(within(bounds::retry_ms))
      ->capture_default_str();
  app.add_option_function<std::string>(
         "--mode", [&o](const std::string& name) { o.mode = parse_mode(name).value(); },
         "Clients as processes (fork) or threads")
      ->check(CLI::IsMember({mode_name(ClientMode::process), mode_name(ClientMode::thread)}))
      ->default_str(mode_name(o.mode));
  app.add_option_function<std::string>(
                       "--redis", [&o](const std::string& text) { o.redis = parse_endpoints(text, nullptr).value(); },
                       "Use these lock servers HOST:PORT[,...] instead of starting our own")
                    ->check(checked_by(endpoints_problem, "HOST:PORT[,...]"));
  app.add_option_function<std::string>(
         "--counter-redis",
         [&o](const std::string& text) { o.counter_redis = parse_endpoints(text, nullptr).value().front(); },
         "With --redis, --sentinel or --cluster: the counter's server (default: the first lock server)")
      ->check(checked_by(one_endpoint_problem, "HOST:PORT"));  // without any of them: validate() says so
  app.add_option("--nodes", o.nodes, "Masters to start for multi-node generations (Redlock)")
      ->check(within(bounds::nodes))
      ->capture_default_str();
  app.add_option("--seed", o.seed, "Seed, recorded for replay (reserved for randomized nemeses)")
      ->capture_default_str();
  app.add_option("--stall", o.stall_ms, "Stall threshold in ms (default 3 x ttl)")->check(within(bounds::stall_ms));
  app.add_option("--wait-replicas", o.wait_replicas,
                 "Failover guard (lua-safe-delete, reentrant-watchdog): WAIT for N replicas after acquiring; "
                 "without --redis, starts N replicas")
      ->check(within(bounds::wait_replicas))
      ->capture_default_str();
  app.add_option("--wait-replicas-timeout", o.wait_replicas_timeout_ms, "WAIT timeout in ms")
      ->check(within(bounds::wait_replicas_timeout_ms))
      ->capture_default_str();
  return duration;
}


// A count from the document; -1 where the run could not measure it (null).
long long count(const nlohmann::json& value) { return value.is_number() ? value.get<long long>() : -1; }

void print_summary(const nlohmann::json& d) {
  std::printf("%s: %s - %.0f acquisitions/s, acquire p50 %lld us p99 %lld us, counter %lld of %lld expected, "
              "overlaps %lld, lost updates %lld, wrong-owner releases %lld\n",
              d["lock"].get<std::string>().c_str(), d["verdict"].get<std::string>().c_str(),
              d["throughput"]["acquisitions_per_s"].get<double>(), count(d["latency"]["acquire_us"]["p50"]),
              count(d["latency"]["acquire_us"]["p99"]), count(d["counter"]["actual"]), count(d["counter"]["expected"]),
              count(d["safety"]["overlaps"]), count(d["safety"]["lost_updates"]),
              count(d["safety"]["wrong_owner_releases"]));
  for (const auto& reason : d["verdict_reasons"]) std::printf("  - %s\n", reason.get<std::string>().c_str());
}

int run_one(RunOptions options, const std::string& json_path, bool expect_safe) {
  if (!json_path.empty())
    if (auto problem = json_target_problem(json_path)) return complain(kUsage, *problem);
  options.json_path = json_path;
  options.expect_safe = expect_safe;
  options.progress = true;
  auto document = measure(options);
  if (!document) return complain(document.error().kind == ErrorKind::usage ? kUsage : kRuntime,
                                 document.error().message);
  if (!json_path.empty())
    if (auto written = write_json_atomically(json_path, *document); !written)
      return complain(kRuntime, written.error().message);
  print_summary(*document);
  const std::string verdict = (*document)["verdict"];
  if (verdict == "error") return kRuntime;
  if (expect_safe && verdict != "safe") return kUnsafe;
  return kOk;
}

int compare_all(const CompareOptions& options) {
  auto summary = compare(options);
  if (!summary) return complain(summary.error().kind == ErrorKind::usage ? kUsage : kRuntime, summary.error().message);
  return summary->failed_runs > 0 ? kRuntime : kOk;
}

int scale_sweep(const ScaleOptions& options) {
  auto summary = scale(options);
  if (!summary) return complain(summary.error().kind == ErrorKind::usage ? kUsage : kRuntime, summary.error().message);
  std::printf("%s\nScale: %s/scale.md, %s/scale.html, %s/scale.svg\n", scale_markdown(summary->sweep).c_str(),
              summary->dir.c_str(), summary->dir.c_str(), summary->dir.c_str());
  return summary->failed_runs > 0 ? kRuntime : kOk;
}

std::optional<std::string> client_counts_problem(const std::string& text) {
  std::string why;
  return parse_client_counts(text, &why) ? std::nullopt : std::optional(why);
}

// `locklab matrix`: 0 every cell at its expected class, 3 some cell is not
// (each named on stderr), 1 a cell could not be measured, 2 usage.
int matrix_all(const MatrixOptions& options) {
  auto result = run_matrix(options);
  if (!result) return complain(result.error().kind == ErrorKind::usage ? kUsage : kRuntime, result.error().message);
  std::printf("%s\nCells:  %s/cells/*.json\nReport: %s/matrix.md, %s/matrix.html\n", matrix_table(*result).c_str(),
              result->dir.c_str(), result->dir.c_str(), result->dir.c_str());
  for (const auto& cell : result->cells) {
    if (cell.matches()) continue;
    std::fprintf(stderr, "locklab matrix: %s x %s is %s, expected %s (%s)%s\n", cell.lock.c_str(), cell.fault.c_str(),
                 cell.observed_text().c_str(), cell.expected_text().c_str(), cell.expected_reason.c_str(),
                 cell.error.empty() ? "" : (": " + cell.error).c_str());
  }
  if (result->errors() > 0) return kRuntime;
  return result->mismatches() > 0 ? kUnsafe : kOk;
}

int report_files(const std::vector<std::string>& files, const std::string& out) {
  RunDocuments runs;
  for (const auto& file : files) {
    auto document = load_run(file);
    if (!document) return complain(kUsage, document.error().message);
    runs.push_back(std::move(*document));
  }
  try {
    if (auto written = write_report(runs, out); !written) return complain(kRuntime, written.error().message);
    std::printf("%s\nReport: %s/report.md, %s/report.html\n", markdown_report(runs).c_str(), out.c_str(), out.c_str());
  } catch (const nlohmann::json::exception& e) {  // right keys, wrong types: still not a run document
    return complain(kUsage, std::string("not a locklab.run/1 document: ") + e.what());
  }
  return kOk;
}

// `locklab merge`: the hosts' documents of one --run-id run, combined (multihost.h).
int merge_files(const std::vector<std::string>& files, const std::string& out) {
  RunDocuments runs;
  for (const auto& file : files) {
    auto document = load_run(file);
    if (!document) return complain(kUsage, document.error().message);
    runs.push_back(std::move(*document));
  }
  Result<nlohmann::json> merged = Error{ErrorKind::usage, "not merged"};
  try {
    merged = merge_runs(runs);
  } catch (const nlohmann::json::exception& e) {
    return complain(kUsage, std::string("not a multi-host run document: ") + e.what());
  }
  if (!merged) return complain(kUsage, merged.error().message);
  const auto& m = *merged;
  std::printf("run %s, %s on %zu hosts: %s - %lld acquisitions, counter %lld of %lld confirmed, oracle max occupancy %lld\n",
              m["run_id"].get<std::string>().c_str(), m["lock"].get<std::string>().c_str(), m["hosts"].size(),
              m["verdict"].get<std::string>().c_str(), m["acquired"].get<long long>(),
              m["counter"]["final"].get<long long>(), m["counter"]["confirmed"].get<long long>(),
              m["oracle"]["max_occupancy"].get<long long>());
  for (const auto& reason : m["verdict_reasons"]) std::printf("  - %s\n", reason.get<std::string>().c_str());
  if (!out.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    if (auto written = write_json_atomically(out + "/merged.json", m); !written)
      return complain(kRuntime, written.error().message);
    if (auto written = write_report(runs, out); !written) return complain(kRuntime, written.error().message);
    std::printf("Merged: %s/merged.json; per-host report: %s/report.md\n", out.c_str(), out.c_str());
  }
  return m["verdict"] == "error" ? kRuntime : kOk;
}

// `locklab failover`: the Sentinel failover trial (trials/sentinel_trial.h), or with
// --cluster the Redis Cluster one (trials/cluster_trial.h), `runs` times, with the
// double grants counted.
int failover_trials(const FailoverTrial& trial, bool cluster, int runs) {
  const Generation* generation = find_generation(trial.lock);
  if (!generation->capabilities.uses_redis || generation->capabilities.multi_node)
    return complain(kUsage, "--lock: failover needs a single-master lock, not " + trial.lock);
  if (trial.wait_replicas > 0 && !generation->capabilities.honours_wait_replicas)
    return complain(kUsage, "--wait-replicas: " + trial.lock + " has no WAIT guard");
  if (cluster && trial.wait_replicas > 1)
    return complain(kUsage, "--wait-replicas: the cluster has one replica per master: 0 or 1");
  ClusterFailoverTrial cluster_trial;
  cluster_trial.lock = trial.lock;
  cluster_trial.wait_replicas = trial.wait_replicas;
  cluster_trial.ttl = trial.ttl;
  int double_grants = 0;
  for (int run = 1; run <= runs; ++run) {
    auto outcome = cluster ? run_cluster_failover_trial(cluster_trial) : run_failover_trial(trial);
    if (!outcome) return complain(kRuntime, "run " + std::to_string(run) + ": " + outcome.error().message);
    double_grants += outcome->double_grants;
    if (cluster)
      std::printf("run %d: A %s (%llu replication bytes held); CLUSTER FAILOVER FORCE: replica %s took the slot "
                  "from %s (demoted, resynced in full); B %s: %s\n",
                  run, outcome->first_acquire.c_str(), static_cast<unsigned long long>(outcome->held_bytes),
                  outcome->new_master.to_string().c_str(), outcome->old_master.to_string().c_str(),
                  outcome->second_acquire.c_str(), outcome->verdict.verdict.c_str());
    else
      std::printf("run %d: A %s (%llu replication bytes held); master %s killed, Sentinel promoted %s; B %s: %s\n",
                  run, outcome->first_acquire.c_str(), static_cast<unsigned long long>(outcome->held_bytes),
                  outcome->old_master.to_string().c_str(), outcome->new_master.to_string().c_str(),
                  outcome->second_acquire.c_str(), outcome->verdict.verdict.c_str());
    std::fflush(stdout);
  }
  std::printf("%s%s, --wait-replicas %d: %d double grant(s) in %d run(s)\n", trial.lock.c_str(),
              cluster ? " (cluster)" : "", trial.wait_replicas, double_grants, runs);
  return kOk;
}

// Two lines per scenario binary (harness/scenario_catalog.cpp): what it tells;
// where the articles tell it and each lock with what the lesson expects of it
// (race: the story's failure happens; fixed: the same story, no failure).
int list_scenarios() {
  for (const auto& spec : scenario_catalog()) {
    std::printf("%-36s %s\n%-36s (%s) locks:", spec.name.c_str(), spec.story.c_str(), "", spec.source.c_str());
    for (const auto& lock : spec.locks)
      std::printf(" %s (%s)", lock.name.c_str(), lock.race_expected ? "race" : "fixed");
    std::printf("\n");
  }
  std::printf("\nRun one: build/default/scenarios/NAME [--lock LOCK] [--json PATH]; all: "
              "ctest --preset default -L scenario\n");
  return kOk;
}

}  // namespace

// argv as one line a reader can paste back into a shell (words with spaces quoted).
static std::string command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    const std::string word = argv[i];
    if (!line.empty()) line += ' ';
    line += word.find_first_of(" \t'\"$") == std::string::npos ? word : "'" + word + "'";
  }
  return line;
}

int main(int argc, char** argv) {
  CLI::App app{"locklab: Redis distributed-lock generations under contention, judged and compared"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Help for every subcommand");

  auto* list = app.add_subcommand("list", "List the lock generations, one line each");
  auto* scenarios = app.add_subcommand("scenarios", "List the scenario binaries: the articles' stories, one each");

  auto* run = app.add_subcommand("run", "Run one generation under contention and judge it");
  RunOptions run_options;
  std::string json_path;
  bool expect_safe = false;
  run->add_option("--lock", run_options.lock, "Generation to run (see: locklab list)")
      ->required()
      ->check(checked_by(unknown_lock, "NAME"));
  add_workload_flags(*run, run_options);
  run->add_option("--json", json_path, "Write the result document here (atomically)");
  run->add_option("--key", run_options.key, "Lock key")->check(checked_by(key_problem, ""))->capture_default_str();
  run->add_option("--step", run_options.step_specs,
                  "Step action POINT:pause=MS|pause-until=expired|other-acquired|crash|delay=MS[:CLIENT[:TIMES]] "
                  "(repeatable)")
      ->check(checked_by(step_problem, ""));
  std::string fault_help = "Inject a fault NAME[:KEY=VALUE]... (repeatable; docs/faults.md):";
  for (const auto& line : fault_names()) fault_help += "\n  " + line;
  run->add_option("--fault", run_options.faults, fault_help)
      ->check(checked_by([](const std::string& spec) { return fault_spec_problem(spec); }, "SPEC"));
  run->add_flag("--expect-safe", expect_safe, "Exit 3 unless the verdict is safe");
  run->add_option_function<std::string>(
         "--sentinel", [&run_options](const std::string& text) { run_options.sentinels = parse_endpoints(text, nullptr).value(); },
         "Sentinels HOST:PORT[,...]: lock on the master they name (instead of --redis)")
      ->check(checked_by(endpoints_problem, "HOST:PORT[,...]"));
  run->add_option("--sentinel-master", run_options.sentinel_master, "With --sentinel: the monitored master's name")
      ->capture_default_str();
  // `--cluster` alone starts a cluster; `--cluster SEEDS` is `--cluster --redis SEEDS`
  // (the form scenarios/fine_grained_locks takes).
  std::string cluster_seeds;
  auto* cluster = run->add_option("--cluster", cluster_seeds,
                                  "Lock on a Redis Cluster, commands routed by key slot: alone, start a 3-master "
                                  "cluster for the run; with HOST:PORT[,...] (or --redis), seeds of an existing one")
                      ->expected(0, 1)
                      ->check(checked_by([](const std::string& text) {
                        return text.empty() ? std::nullopt : endpoints_problem(text);
                      }, "[HOST:PORT[,...]]"));
  run->add_option("--run-id", run_options.run_id, "Several client hosts: the run id every host shares (with --oracle)");
  // `--oracle HOST:PORT`: the shared oracle of a --run-id run; bare `--oracle`:
  // a second oracle the run starts for itself (one host, no --run-id).
  std::string oracle_address;
  auto* oracle = run->add_option("--oracle", oracle_address,
                                 "The oracle Redis beside the history (never faulted; docs/harness.md, \"Two oracles\"): "
                                 "alone, start one for this run; with HOST:PORT (and --run-id), the oracle every host "
                                 "shares (barriers, cross-host sections)")
                     ->expected(0, 1)
                     ->check(checked_by([](const std::string& text) {
                       return text.empty() ? std::nullopt : one_endpoint_problem(text);
                     }, "[HOST:PORT]"));
  run->add_option("--hosts", run_options.hosts, "With --run-id: how many hosts take part (the start barrier waits for all)")
      ->check(within(bounds::hosts))
      ->capture_default_str();
  run->add_option("--barrier-timeout", run_options.barrier_timeout_ms, "With --run-id: ms a host waits for the others")
      ->check(within(bounds::barrier_timeout_ms))
      ->capture_default_str();

  auto* cmp = app.add_subcommand("compare", "Every generation through the same workload; JSON per run + report");
  CompareOptions compare_options;
  cmp->add_flag("--quick", compare_options.quick, "CI-sized: about 1 s per generation");
  cmp->add_option("--out", compare_options.out, "Output directory (default results/runs/<run-id>)");
  cmp->add_option("--lock", compare_options.locks, "Only these generations (repeatable)")
      ->check(checked_by(unknown_lock, "NAME"));
  auto* compare_duration = add_workload_flags(*cmp, compare_options.base);

  auto* mrg = app.add_subcommand("merge", "Combine the per-host result JSON files of one --run-id run");
  std::vector<std::string> merge_inputs;
  std::string merge_out;
  mrg->add_option("results", merge_inputs, "Per-host run result JSON files")->required()->check(CLI::ExistingFile);
  mrg->add_option("--out", merge_out, "Write merged.json and the per-host report here");

  auto* fo = app.add_subcommand(
      "failover", "Master failover (Sentinel, or --cluster): the master fails over holding a lock its replica never got");
  FailoverTrial failover_trial;
  int failover_runs = 1;
  bool failover_cluster = false;
  fo->add_flag("--cluster", failover_cluster,
               "A 3-master Redis Cluster with a replica each; CLUSTER FAILOVER FORCE on the lock's replica");
  fo->add_option("--lock", failover_trial.lock, "Generation (single master)")
      ->check(checked_by(unknown_lock, "NAME"))
      ->capture_default_str();
  fo->add_option("--wait-replicas", failover_trial.wait_replicas, "The WAIT guard: replicas to wait for after acquiring")
      ->check(within(bounds::wait_replicas))
      ->capture_default_str();
  fo->add_option("--runs", failover_runs,
                 "Trials (each starts its own master, replica and 3 sentinels; --cluster: its own 6-node cluster)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();

  auto* mat = app.add_subcommand(
      "matrix", "Every generation against every fault, one short run per cell; exit 3 if a cell is not as expected");
  MatrixOptions matrix_options;
  mat->add_flag("--quick", matrix_options.quick, "CI-sized: fewer attempts per cell");
  mat->add_option("--out", matrix_options.out, "Output directory (default results/matrix/<run-id>)");
  mat->add_option("--lock", matrix_options.locks, "Only these generations (repeatable)")
      ->check(checked_by(unknown_lock, "NAME"));
  mat->add_option("--fault", matrix_options.faults, "Only these fault columns (repeatable; see docs/faults.md)");
  mat->add_option("--jobs", matrix_options.jobs, "Cells measured at once, each in a worker process")
      ->check(CLI::Range(1, 8))
      ->capture_default_str();

  auto* rep = app.add_subcommand("report", "Render run result JSON files into report.md + report.html");
  std::vector<std::string> files;
  std::string report_out;
  rep->add_option("results", files, "Run result JSON files")->required()->check(CLI::ExistingFile);
  rep->add_option("--out", report_out, "Output directory")->required();

  auto* scl = app.add_subcommand("scale", "Acquisitions/s against clients per generation, with the harness's CPU share");
  ScaleOptions scale_options;
  scale_options.base.duration_s = 1.0;
  scl->add_option("--lock", scale_options.locks, "Only these generations (repeatable; default: every one that uses Redis)")
      ->check(checked_by(unknown_lock, "NAME"));
  scl->add_option_function<std::string>(
         "--clients", [&](const std::string& text) { scale_options.clients = parse_client_counts(text, nullptr).value(); },
         "Client counts, comma-separated")
      ->check(checked_by(client_counts_problem, "N[,N...]"))
      ->default_str("1,2,4,8,16,32,64");
  scl->add_option("--duration", scale_options.base.duration_s, "Seconds per point")
      ->check(within(bounds::duration_s))
      ->capture_default_str();
  scl->add_option("--hold", scale_options.base.hold_ms, "Milliseconds between GET counter and SET counter")
      ->check(within(bounds::hold_ms))
      ->capture_default_str();
  scl->add_option("--ttl", scale_options.base.ttl_ms, "Lock lease in ms")->check(within(bounds::ttl_ms))->capture_default_str();
  scl->add_option("--wait", scale_options.base.wait_ms, "Bound of each acquire attempt in ms")
      ->check(within(bounds::wait_ms))
      ->capture_default_str();
  scl->add_option("--retry", scale_options.base.retry_ms, "Polling interval in ms")
      ->check(within(bounds::retry_ms))
      ->capture_default_str();
  scl->add_option_function<std::string>(
         "--mode", [&](const std::string& name) { scale_options.base.mode = parse_mode(name).value(); },
         "Clients as processes (fork) or threads")
      ->check(CLI::IsMember({mode_name(ClientMode::process), mode_name(ClientMode::thread)}))
      ->default_str(mode_name(scale_options.base.mode));
  scl->add_option("--out", scale_options.out, "Output directory (default results/scale/<run-id>)");

  // The commands, from the subcommands themselves: one list to keep.
  std::string commands;
  bool known = false;
  for (const auto* sub : app.get_subcommands({})) {
    commands += (commands.empty() ? "" : ", ") + sub->get_name();
    if (argc > 1 && sub->get_name() == argv[1]) known = true;
  }
  if (argc > 1 && argv[1][0] != '-' && !known)
    return complain(kUsage, std::string("unknown command '") + argv[1] + "' (expected one of " + commands +
                                "; see: locklab --help)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ValidationError& e) {  // "FLAG: problem", as validate() words it
    return complain(kUsage, e.what());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    return complain(kUsage, std::string(e.what()) + " (see: locklab --help)");
  }

  try {
    if (list->parsed()) return list_generations();
    if (scenarios->parsed()) return list_scenarios();
    if (run->parsed()) {
      run_options.command = command_line(argc, argv);
      run_options.cluster = cluster->count() > 0;
      run_options.own_oracle = oracle->count() > 0 && oracle_address.empty();
      if (!oracle_address.empty()) run_options.oracle = parse_endpoints(oracle_address, nullptr).value().front();
      if (!cluster_seeds.empty()) {
        if (!run_options.redis.empty()) return complain(kUsage, "--cluster HOST:PORT and --redis: give the seeds once");
        run_options.redis = parse_endpoints(cluster_seeds, nullptr).value();
      }
      for (const auto& spec : run_options.step_specs)  // each checked by its validator
        run_options.steps.push_back(parse_step_action(spec, nullptr).value());
      return run_one(run_options, json_path, expect_safe);
    }
    if (cmp->parsed()) {
      if (compare_duration->count() == 0)
        compare_options.base.duration_s = default_compare_workload(compare_options.quick).duration_s;
      compare_options.base.progress = true;
      compare_options.base.command = command_line(argc, argv);
      return compare_all(compare_options);
    }
    if (mat->parsed()) {
      matrix_options.command = command_line(argc, argv);
      return matrix_all(matrix_options);
    }
    if (rep->parsed()) return report_files(files, report_out);
    if (scl->parsed()) {
      scale_options.base.command = command_line(argc, argv);
      return scale_sweep(scale_options);
    }
    if (mrg->parsed()) return merge_files(merge_inputs, merge_out);
    if (fo->parsed()) return failover_trials(failover_trial, failover_cluster, failover_runs);
  } catch (const std::exception& e) {  // a bug, not an expected outcome: still one line, no crash
    return complain(kRuntime, std::string("internal error: ") + e.what());
  }
  return kUsage;
}
