// locklab: the command line of the contention harness.
//   locklab list | run | compare | report      (each with --help)
// Exit codes: 0 measured (violations are findings, not failures), 1 runtime
// failure, 2 usage/config error, 3 `run --expect-safe` saw a verdict other than safe.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "compare.h"
#include "registry.h"
#include "report.h"
#include "results.h"
#include "run.h"

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

// The workload flags shared by `run` and `compare`.
struct WorkloadFlags {
  int clients = 8;
  std::int64_t ops = 0;
  double duration = 0;
  int hold = 1, ttl = 2000, wait = 1000, retry = 5, nodes = 5, stall = 0;
  int wait_replicas = 0, wait_replicas_timeout = 100;
  std::string mode = "process";
  std::string redis, counter_redis;
  std::uint64_t seed = 1;
  CLI::Option* ops_option = nullptr;
  CLI::Option* duration_option = nullptr;
};

void add_workload_flags(CLI::App& app, WorkloadFlags& f) {
  app.add_option("--clients", f.clients, "Number of clients (1-256)")->capture_default_str();
  f.ops_option = app.add_option("--ops", f.ops, "Total acquire attempts across all clients (instead of --duration)");
  f.duration_option =
      app.add_option("--duration", f.duration, "Seconds to run (default 3; compare --quick: 1)")->excludes(f.ops_option);
  f.ops_option->excludes(f.duration_option);
  app.add_option("--hold", f.hold, "Milliseconds between GET counter and SET counter (0 allowed)")->capture_default_str();
  app.add_option("--ttl", f.ttl, "Lock lease in ms (TTL generations; gen 5: watchdog timeout)")->capture_default_str();
  app.add_option("--wait", f.wait, "Bound of each acquire attempt in ms")->capture_default_str();
  app.add_option("--retry", f.retry, "Polling interval in ms for the polling generations")->capture_default_str();
  app.add_option("--mode", f.mode, "Clients as processes (fork) or threads")
      ->check(CLI::IsMember({"process", "thread"}))
      ->capture_default_str();
  app.add_option("--redis", f.redis, "Use these lock servers HOST:PORT[,...] instead of starting our own");
  app.add_option("--counter-redis", f.counter_redis, "With --redis: the counter's server (default: the first --redis)");
  app.add_option("--nodes", f.nodes, "Masters to start for multi-node generations (Redlock)")->capture_default_str();
  app.add_option("--seed", f.seed, "Seed, recorded for replay (reserved for randomized nemeses)")->capture_default_str();
  app.add_option("--stall", f.stall, "Stall threshold in ms (default 3 x ttl)");
  app.add_option("--wait-replicas", f.wait_replicas,
                 "Failover guard (lua-safe-delete, reentrant-watchdog): WAIT for N replicas after acquiring; "
                 "without --redis, starts N replicas")
      ->capture_default_str();
  app.add_option("--wait-replicas-timeout", f.wait_replicas_timeout, "WAIT timeout in ms")->capture_default_str();
}

// Flags -> RunOptions; a usage problem comes back as a message.
std::optional<std::string> apply(const WorkloadFlags& f, RunOptions& options) {
  options.clients = f.clients;
  if (f.ops_option->count() > 0) options.ops = f.ops;
  if (f.duration_option->count() > 0) options.duration_s = f.duration;
  options.hold_ms = f.hold;
  options.ttl_ms = f.ttl;
  options.wait_ms = f.wait;
  options.retry_ms = f.retry;
  options.nodes = f.nodes;
  options.wait_replicas = f.wait_replicas;
  options.wait_replicas_timeout_ms = f.wait_replicas_timeout;
  options.stall_ms = f.stall;
  options.seed = f.seed;
  options.mode = f.mode == "thread" ? ClientMode::thread : ClientMode::process;
  std::string why;
  if (!f.redis.empty()) {
    auto endpoints = parse_endpoints(f.redis, &why);
    if (!endpoints) return why;
    options.redis = *endpoints;
  }
  if (!f.counter_redis.empty()) {
    if (f.redis.empty()) return "--counter-redis needs --redis";
    auto endpoints = parse_endpoints(f.counter_redis, &why);
    if (!endpoints || endpoints->size() != 1) return endpoints ? "--counter-redis takes one HOST:PORT" : why;
    options.counter_redis = endpoints->front();
  }
  return std::nullopt;
}

std::optional<std::string> writable_target(const std::string& path) {
  const std::filesystem::path target(path);
  const auto dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return "--json: directory " + dir.string() + " does not exist";
  if (std::filesystem::is_directory(target, ec)) return "--json: " + path + " is a directory";
  if (::access(dir.c_str(), W_OK) != 0) return "--json: cannot write into " + dir.string();
  return std::nullopt;
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
    if (auto problem = writable_target(json_path)) return complain(kUsage, *problem);
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

  auto* run = app.add_subcommand("run", "Run one generation under contention and judge it");
  std::string lock, json_path;
  std::vector<std::string> steps;
  std::string key = "locklab:lock";
  bool expect_safe = false;
  WorkloadFlags run_flags;
  run->add_option("--lock", lock, "Generation to run (see: locklab list)")->required();
  add_workload_flags(*run, run_flags);
  run->add_option("--json", json_path, "Write the result document here (atomically)");
  run->add_option("--key", key, "Lock key")->capture_default_str();
  run->add_option("--step", steps, "Step action POINT:pause|crash|delay=MS[:CLIENT[:TIMES]] (repeatable)");
  run->add_flag("--expect-safe", expect_safe, "Exit 3 unless the verdict is safe");

  auto* cmp = app.add_subcommand("compare", "Every generation through the same workload; JSON per run + report");
  bool quick = false;
  std::string compare_out;
  std::vector<std::string> compare_locks;
  WorkloadFlags compare_flags;
  cmp->add_flag("--quick", quick, "CI-sized: about 1 s per generation");
  cmp->add_option("--out", compare_out, "Output directory (default results/runs/<run-id>)");
  cmp->add_option("--lock", compare_locks, "Only these generations (repeatable)");
  add_workload_flags(*cmp, compare_flags);

  auto* rep = app.add_subcommand("report", "Render run result JSON files into report.md + report.html");
  std::vector<std::string> files;
  std::string report_out;
  rep->add_option("results", files, "Run result JSON files")->required()->check(CLI::ExistingFile);
  rep->add_option("--out", report_out, "Output directory")->required();

  const auto is_command = [&app](const std::string& word) {
    for (const auto* sub : app.get_subcommands({}))
      if (sub->get_name() == word) return true;
    return false;
  };
  if (argc > 1 && argv[1][0] != '-' && !is_command(argv[1]))
    return complain(kUsage, std::string("unknown command '") + argv[1] + "' (expected list, run, compare or report; see: locklab --help)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    return complain(kUsage, std::string(e.what()) + " (see: locklab --help)");
  }

  try {
    if (list->parsed()) return list_generations();
    if (run->parsed()) {
      RunOptions options;
      options.command = command_line(argc, argv);
      options.lock = lock;
      options.key = key;
      if (auto problem = apply(run_flags, options)) return complain(kUsage, *problem);
      for (const auto& spec : steps) {
        std::string why;
        auto action = parse_step_action(spec, &why);
        if (!action) return complain(kUsage, why);
        options.steps.push_back(*action);
        options.step_specs.push_back(spec);
      }
      return run_one(options, json_path, expect_safe);
    }
    if (cmp->parsed()) {
      CompareOptions options;
      options.quick = quick;
      options.out = compare_out;
      options.locks = compare_locks;
      options.base = default_compare_workload(quick);
      const double default_duration = options.base.duration_s;
      if (auto problem = apply(compare_flags, options.base)) return complain(kUsage, *problem);
      if (compare_flags.duration_option->count() == 0) options.base.duration_s = default_duration;
      options.base.progress = true;
      options.base.command = command_line(argc, argv);
      return compare(options);
    }
    if (rep->parsed()) return report_files(files, report_out);
  } catch (const std::exception& e) {  // a bug, not an expected outcome: still one line, no crash
    return complain(kRuntime, std::string("internal error: ") + e.what());
  }
  return kUsage;
}
