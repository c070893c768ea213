// `locklab run`, `merge` and `failover`: one run judged, one multi-host run
// merged, the master-failover trials.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "registry.h"

#include "cli/commands.h"
#include "cli/flags.h"
#include "nemesis/fault_registry.h"
#include "report/comparison_report.h"
#include "run/merge_runs.h"
#include "run/run.h"
#include "run/run_document.h"
#include "support/json_read.h"
#include "trials/cluster_trial.h"
#include "trials/sentinel_trial.h"
#include "workload/lock_catalog.h"

namespace locklab::cli {

using namespace locklab::harness;

namespace {

// A count of the run document for the summary line; -1 where it has none.
long long count(const nlohmann::json& document, const char* pointer) {
  return static_cast<long long>(harness::number_at(document, pointer, -1));
}

void print_summary(const nlohmann::json& d) {
  std::printf("%s: %s - %.0f acquisitions/s, acquire p50 %lld us p99 %lld us, counter %lld of %lld expected, "
              "overlaps %lld, lost updates %lld, wrong-owner releases %lld\n",
              d["lock"].get<std::string>().c_str(), d["verdict"].get<std::string>().c_str(),
              d["throughput"]["acquisitions_per_s"].get<double>(), count(d, "/latency/acquire_us/p50"),
              count(d, "/latency/acquire_us/p99"), count(d, "/counter/actual"), count(d, "/counter/expected"),
              count(d, "/safety/overlaps"), count(d, "/safety/lost_updates"),
              count(d, "/safety/wrong_owner_releases"));
  for (const auto& reason : d["verdict_reasons"]) std::printf("  - %s\n", reason.get<std::string>().c_str());
}

// One line per action of every --fault, in time order (ms after the clients'
// barrier), from the run document's "faults" records: printed once the run is
// over, not live. A fault that recorded no action says so.
void print_fault_actions(const nlohmann::json& d) {
  const nlohmann::json faults = d.value("faults", nlohmann::json::array());
  if (!faults.is_array() || faults.empty()) return;
  std::vector<std::pair<double, std::string>> actions;
  std::vector<std::string> idle;
  for (const auto& fault : faults) {
    const std::string spec = fault.value("spec", "?");
    const nlohmann::json applied = fault.value("applied", nlohmann::json::array());
    if (applied.empty()) idle.push_back(spec);
    for (const auto& event : applied)
      actions.emplace_back(event.value("t_ms", 0.0), spec + ": " + event.value("what", std::string("?")));
  }
  std::stable_sort(actions.begin(), actions.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::printf("fault actions (ms after the clients started, in time order):\n");
  for (const auto& [t_ms, what] : actions) std::printf("  %10.2f ms  %s\n", t_ms, what.c_str());
  for (const auto& spec : idle) std::printf("  %13s  %s: nothing was applied\n", "-", spec.c_str());
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
  print_fault_actions(*document);
  const std::string verdict = (*document)["verdict"];
  if (verdict == "error") return kRuntime;
  if (expect_safe && verdict != "safe") return kUnsafe;
  return kOk;
}

// `locklab merge`: the hosts' documents of one --run-id run, combined (run/merge_runs.h).
int merge_files(const std::vector<std::string>& files, const std::string& out) {
  auto loaded = load_runs(files);
  if (!loaded) return complain(kUsage, loaded.error().message);
  const RunDocuments runs = std::move(loaded).value();
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
int failover_trials(const SentinelTrial& trial, bool cluster, int runs) {
  const Generation* generation = find_generation(trial.lock);
  if (generation == nullptr) return complain(kUsage, "--lock: failover runs the generations, not " + trial.lock);
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
    auto outcome = cluster ? run_cluster_failover_trial(cluster_trial) : run_sentinel_trial(trial);
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

// The flags of `locklab run` that are not RunOptions as they are.
struct RunFlags {
  RunOptions options;
  std::string fleet;  // `--fleet LOCK:N,...` as given
  AdapterFlags adapters;  // `--adapter`, `--catalog`: the user's own adapters
  std::string json_path;
  bool expect_safe = false;
  std::string cluster_seeds;   // `--cluster SEEDS` is `--cluster --redis SEEDS`
  std::string oracle_address;  // `--oracle HOST:PORT`; empty with bare `--oracle`
  CLI::Option* cluster = nullptr;
  CLI::Option* oracle = nullptr;
};

// The flags' values folded into RunOptions, then the run.
int run_parsed(RunFlags& flags, const std::string& command) {
  RunOptions& run_options = flags.options;
  run_options.command = command;
  run_options.cluster = flags.cluster->count() > 0;
  run_options.own_oracle = flags.oracle->count() > 0 && flags.oracle_address.empty();
  if (!flags.oracle_address.empty())
    run_options.oracle = parse_endpoints(flags.oracle_address, nullptr).value().front();
  if (!flags.cluster_seeds.empty()) {
    if (!run_options.redis.empty()) return complain(kUsage, "--cluster HOST:PORT and --redis: give the seeds once");
    run_options.redis = parse_endpoints(flags.cluster_seeds, nullptr).value();
  }
  for (const auto& spec : run_options.step_specs)  // each checked by its validator
    run_options.steps.push_back(parse_step_action(spec, nullptr).value());
  if (!flags.fleet.empty()) run_options.fleet = parse_fleet(flags.fleet, nullptr).value();
  if (run_options.fleet.empty() && run_options.lock.empty()) return complain(kUsage, "--lock or --fleet is required");
  std::vector<std::string> named;  // the locks the run asks for: --lock, or each --fleet member
  for (const auto& member : run_options.fleet) named.push_back(member.lock);
  if (named.empty()) named.push_back(run_options.lock);
  auto user = user_adapters_or_exit(flags.adapters, named);
  if (const int* code = std::get_if<int>(&user)) return *code;
  run_options.user_adapters = std::get<UserAdapters>(std::move(user));
  run_options.adapter = bare_command(flags.adapters);
  return run_one(normalized(run_options), flags.json_path, flags.expect_safe);
}

std::optional<std::string> fleet_problem(const std::string& text) {
  std::string why;
  return parse_fleet(text, &why) ? std::nullopt : std::optional(why);
}

// --lock, --adapter, --fleet: what runs (validate() checks the names against the catalog).
void add_run_lock_flags(CLI::App& run, RunFlags& flags) {
  RunOptions& run_options = flags.options;
  auto* lock = run.add_option("--lock", run_options.lock,
                              "Generation (see: locklab list), or ext:NAME: a shipped adapter of a lock library "
                              "(harness/adapters/catalog.json; docs/adapters.md), or your own with --adapter or --catalog")
                   ->check(checked_by(lock_name_problem, "NAME|ext:NAME"));
  add_adapter_flags(run, flags.adapters);
  auto* fleet = run.add_option("--fleet", flags.fleet,
                               "Mixed fleet on one key and one counter, LOCK:N[,LOCK:N]... (e.g. "
                               "lua-safe-delete:4,ext:redis-py:2; clients numbered in order; each unshipped "
                               "ext:LABEL needs its own --adapter LABEL='CMD' or --catalog entry); replaces --lock "
                               "and --clients")
                    ->check(checked_by(fleet_problem, "LOCK:N[,...]"));
  fleet->excludes(lock);
  lock->excludes(fleet);
}

// The workload, --json, --key, --step, --fault, --expect-safe.
void add_run_workload_flags(CLI::App& run, RunFlags& flags) {
  RunOptions& run_options = flags.options;
  add_workload_flags(run, run_options);
  if (auto* fleet = run.get_option_no_throw("--fleet"); fleet != nullptr) {
    auto* clients = run.get_option("--clients");
    fleet->excludes(clients);
    clients->excludes(fleet);
  }
  run.add_option("--json", flags.json_path, "Write the result document here (atomically)");
  run.add_option("--key", run_options.key, "Lock key")->check(checked_by(key_problem, ""))->capture_default_str();
  run.add_option("--step", run_options.step_specs,
                 "Step action POINT:pause=MS|pause-until=expired|other-acquired|other-inside|crash|delay=MS[:CLIENT[:TIMES]] "
                 "(repeatable)")
      ->check(checked_by(step_problem, ""));
  std::string fault_help = "Inject a fault NAME[:KEY=VALUE]... (repeatable; docs/faults.md):";
  for (const auto& line : fault_names()) fault_help += "\n  " + line;
  run.add_option("--fault", run_options.faults, fault_help)
      ->check(checked_by([](const std::string& spec) { return fault_spec_problem(spec); }, "SPEC"));
  run.add_flag("--expect-safe", flags.expect_safe, "Exit 3 unless the verdict is safe");
}

// Where the lock lives and who takes part: --sentinel, --cluster, --run-id, --oracle, --hosts.
void add_run_topology_flags(CLI::App& run, RunFlags& flags) {
  RunOptions& run_options = flags.options;
  run.add_option_function<std::string>(
         "--sentinel", [&run_options](const std::string& text) { run_options.sentinels = parse_endpoints(text, nullptr).value(); },
         "Sentinels HOST:PORT[,...]: lock on the master they name (instead of --redis)")
      ->check(checked_by(endpoints_problem, "HOST:PORT[,...]"));
  run.add_option("--sentinel-master", run_options.sentinel_master, "With --sentinel: the monitored master's name")
      ->capture_default_str();
  // `--cluster` alone starts a cluster; `--cluster SEEDS` is `--cluster --redis SEEDS`.
  flags.cluster = run.add_option("--cluster", flags.cluster_seeds,
                                 "Lock on a Redis Cluster, commands routed by key slot: alone, start a 3-master "
                                 "cluster for the run; with HOST:PORT[,...] (or --redis), seeds of an existing one")
                      ->expected(0, 1)
                      ->check(checked_by([](const std::string& text) {
                        return text.empty() ? std::nullopt : endpoints_problem(text);
                      }, "[HOST:PORT[,...]]"));
  run.add_option("--run-id", run_options.run_id, "Several client hosts: the run id every host shares (with --oracle)");
  // `--oracle HOST:PORT`: the shared oracle of a --run-id run; bare `--oracle`:
  // a second oracle the run starts for itself (one host, no --run-id).
  flags.oracle = run.add_option("--oracle", flags.oracle_address,
                                "The oracle Redis beside the history (never faulted; docs/harness.md, \"Two oracles\"): "
                                "alone, start one for this run; with HOST:PORT (and --run-id), the oracle every host "
                                "shares (barriers, cross-host sections)")
                     ->expected(0, 1)
                     ->check(checked_by([](const std::string& text) {
                       return text.empty() ? std::nullopt : one_endpoint_problem(text);
                     }, "[HOST:PORT]"));
  run.add_option("--hosts", run_options.hosts, "With --run-id: how many hosts take part (the start barrier waits for all)")
      ->check(within(bounds::hosts))
      ->capture_default_str();
  run.add_option("--barrier-timeout", run_options.barrier_timeout_ms, "With --run-id: ms a host waits for the others")
      ->check(within(bounds::barrier_timeout_ms))
      ->capture_default_str();
}

struct MergeFlags {
  std::vector<std::string> inputs;
  std::string out;
};

struct FailoverFlags {
  SentinelTrial trial;
  int runs = 1;
  bool cluster = false;
};

}  // namespace

Command add_run(CLI::App& app) {
  auto* run = app.add_subcommand("run", "Run one lock (a generation, or a library through its adapter) under contention and judge it");
  auto flags = std::make_shared<RunFlags>();
  add_run_lock_flags(*run, *flags);
  add_run_workload_flags(*run, *flags);
  add_run_topology_flags(*run, *flags);
  return {run, [flags](const std::string& command) { return run_parsed(*flags, command); }};
}

Command add_merge(CLI::App& app) {
  auto* mrg = app.add_subcommand("merge", "Combine the per-host result JSON files of one --run-id run");
  auto flags = std::make_shared<MergeFlags>();
  mrg->add_option("results", flags->inputs, "Per-host run result JSON files")->required()->check(CLI::ExistingFile);
  mrg->add_option("--out", flags->out, "Write merged.json and the per-host report here");
  return {mrg, [flags](const std::string&) { return merge_files(flags->inputs, flags->out); }};
}

Command add_failover(CLI::App& app) {
  auto* fo = app.add_subcommand(
      "failover", "Master failover (Sentinel, or --cluster): the master fails over holding a lock its replica never got");
  auto flags = std::make_shared<FailoverFlags>();
  fo->add_flag("--cluster", flags->cluster,
               "A 3-master Redis Cluster with a replica each; CLUSTER FAILOVER FORCE on the lock's replica");
  fo->add_option("--lock", flags->trial.lock, "Generation (single master)")
      ->check(checked_by(unknown_lock, "NAME"))
      ->capture_default_str();
  fo->add_option("--wait-replicas", flags->trial.wait_replicas, "The WAIT guard: replicas to wait for after acquiring")
      ->check(within(bounds::wait_replicas))
      ->capture_default_str();
  fo->add_option("--runs", flags->runs,
                 "Trials (each starts its own master, replica and 3 sentinels; --cluster: its own 6-node cluster)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  return {fo, [flags](const std::string&) { return failover_trials(flags->trial, flags->cluster, flags->runs); }};
}

}  // namespace locklab::cli
