// `locklab compare`, `matrix`, `fleets`, `scale`: the sweeps, many runs each; and
// `fine-grained`, seed 001's sales trial (trials/sales_trial.h), a measurement too.
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <variant>

#include "registry.h"

#include "cli/commands.h"
#include "cli/flags.h"
#include "report/matrix_report.h"
#include "report/scale_report.h"
#include "sweeps/compare.h"
#include "sweeps/fleets.h"
#include "sweeps/matrix.h"
#include "sweeps/scale.h"
#include "trials/sales_trial.h"

namespace locklab::cli {

using namespace locklab::harness;

namespace {

int compare_all(CompareOptions options, const AdapterFlags& adapters) {
  auto user = user_adapters_or_exit(adapters, options.locks);
  if (const int* code = std::get_if<int>(&user)) return *code;
  options.base.user_adapters = std::get<UserAdapters>(std::move(user));
  auto summary = compare(options);
  if (!summary) return complain(summary.error().kind == ErrorKind::usage ? kUsage : kRuntime, summary.error().message);
  return summary->failed_runs > 0 ? kRuntime : kOk;
}

int scale_sweep(ScaleOptions options, const AdapterFlags& adapters) {
  auto user = user_adapters_or_exit(adapters, options.locks);
  if (const int* code = std::get_if<int>(&user)) return *code;
  options.base.user_adapters = std::get<UserAdapters>(std::move(user));
  auto summary = scale(options);
  if (!summary) return complain(summary.error().kind == ErrorKind::usage ? kUsage : kRuntime, summary.error().message);
  std::printf("%s\nScale: %s/scale.md, %s/scale.html, %s/scale.svg\n", scale_markdown(summary->sweep).c_str(),
              summary->dir.c_str(), summary->dir.c_str(), summary->dir.c_str());
  return summary->failed_runs > 0 ? kRuntime : kOk;
}

// `locklab matrix`: 0 every cell at its expected class, 3 some cell is not
// (each named on stderr), 1 a cell could not be measured, 2 usage. A row of
// the user's own has no expected class, and its cells never make it 3,
// unless `--expect FILE` gives them one: then they are checked as shipped ones.
int matrix_all(MatrixOptions options, const AdapterFlags& adapters, const std::string& expect_file) {
  auto user = user_adapters_or_exit(adapters, options.locks);
  if (const int* code = std::get_if<int>(&user)) return *code;
  options.user = std::get<UserAdapters>(std::move(user));
  if (!expect_file.empty()) {
    auto expect = read_user_expectations(expect_file);
    if (!expect) return complain(kUsage, expect.error().message);
    options.expect = std::move(expect).value();
  }
  auto result = run_matrix(options);
  if (!result) return complain(result.error().kind == ErrorKind::usage ? kUsage : kRuntime, result.error().message);
  std::printf("%s\nCells:  %s/cells/*.json\nReport: %s/matrix.md, %s/matrix.html\n", matrix_table(*result).c_str(),
              result->dir.c_str(), result->dir.c_str(), result->dir.c_str());
  for (const auto& cell : result->cells) {
    if (cell.unwritten && cell.observed == CellClass::error) {  // a row of your own: no class to miss, but no answer
      std::fprintf(stderr, "locklab matrix: %s x %s is error%s\n", cell.lock.c_str(), cell.fault.c_str(),
                   cell.error.empty() ? "" : (": " + cell.error).c_str());
      continue;
    }
    if (cell.matches()) continue;
    std::fprintf(stderr, "locklab matrix: %s x %s is %s, expected %s (%s)%s\n", cell.lock.c_str(), cell.fault.c_str(),
                 cell.observed_text().c_str(), cell.expected_text().c_str(), cell.expected_reason.c_str(),
                 cell.error.empty() ? "" : (": " + cell.error).c_str());
  }
  if (result->errors() > 0) return kRuntime;
  return result->mismatches() > 0 ? kUnsafe : kOk;
}

// `locklab fleets`: 0 every pair measured (a pair that cannot share is a
// finding), 1 a pair could not be measured, 2 usage.
int fleets_all(FleetsOptions options, const AdapterFlags& adapters) {
  auto user = user_adapters_or_exit(adapters, options.locks);
  if (const int* code = std::get_if<int>(&user)) return *code;
  options.user = std::get<UserAdapters>(std::move(user));
  auto result = run_fleets(options);
  if (!result) return complain(result.error().kind == ErrorKind::usage ? kUsage : kRuntime, result.error().message);
  std::printf("%s\nReport: %s/fleets.md, %s/fleets.json\n", fleets_summary(*result).c_str(), result->dir.c_str(),
              result->dir.c_str());
  for (const auto& pair : result->pairs)
    if (pair.sharing == Sharing::not_measured)
      std::fprintf(stderr, "locklab fleets: %s was not measured: %s\n", pair.locks_text().c_str(),
                   (!pair.error.empty() ? pair.error : pair.why.empty() ? "no reason recorded" : pair.why.front().text).c_str());
  return result->count(Sharing::not_measured) > 0 ? kRuntime : kOk;
}

// The flags of `locklab fleets`: the locks, the clients of each, and the workload of each pair's run.
void add_fleets_flags(CLI::App& app, FleetsOptions& options, AdapterFlags& adapters) {
  app.add_option("--lock", options.locks,
                 "Every pair among these locks (repeatable, at least two): generations, shipped adapters ext:NAME, "
                 "your own ext:LABEL (--adapter, --catalog); default: each shipped adapter and each --catalog entry "
                 "with every generation that locks across processes and with every other adapter")
      ->check(checked_by(lock_name_problem, "NAME"));
  add_adapter_flags(app, adapters);
  app.add_option("--clients", options.clients_each, "Clients of each lock in a pair's run")
      ->check(CLI::Range(1, 128))
      ->capture_default_str();
  auto* ops = app.add_option_function<std::int64_t>(
                     "--ops", [&options](std::int64_t n) { options.base.ops = n; },
                     "Acquire attempts of a pair's run, across its clients (instead of --duration)")
                  ->check(within(bounds::ops));
  app.add_option("--duration", options.base.duration_s, "Seconds of each pair's run")
      ->check(within(bounds::duration_s))
      ->capture_default_str()
      ->excludes(ops);
  app.add_option("--hold", options.base.hold_ms, "Milliseconds between GET counter and SET counter")
      ->check(within(bounds::hold_ms))
      ->capture_default_str();
  app.add_option("--ttl", options.base.ttl_ms, "Lock lease in ms")->check(within(bounds::ttl_ms))->capture_default_str();
  app.add_option("--wait", options.base.wait_ms, "Bound of each acquire attempt in ms")
      ->check(within(bounds::wait_ms))
      ->capture_default_str();
  app.add_option("--retry", options.base.retry_ms, "Polling interval in ms")
      ->check(within(bounds::retry_ms))
      ->capture_default_str();
  app.add_option("--out", options.out, "Output directory (default results/runs/<run-id>)");
}

// The flags of `locklab scale`: a few of RunOptions' (the sweep's own defaults), the counts, --out.
void add_scale_flags(CLI::App& scl, ScaleOptions& scale_options) {
  scl.add_option("--lock", scale_options.locks,
                 "Only these locks (repeatable): generations, shipped adapters ext:NAME or your own ext:LABEL "
                 "(--adapter, --catalog) with --mode process; default: every generation that uses Redis")
      ->check(checked_by(lock_name_problem, "NAME"));
  scl.add_option_function<std::string>(
         "--clients", [&](const std::string& text) { scale_options.clients = parse_client_counts(text, nullptr).value(); },
         "Client counts, comma-separated")
      ->check(checked_by(client_counts_problem, "N[,N...]"))
      ->default_str("1,2,4,8,16,32,64");
  scl.add_option("--duration", scale_options.base.duration_s, "Seconds per point")
      ->check(within(bounds::duration_s))
      ->capture_default_str();
  scl.add_option("--hold", scale_options.base.hold_ms, "Milliseconds between GET counter and SET counter")
      ->check(within(bounds::hold_ms))
      ->capture_default_str();
  scl.add_option("--ttl", scale_options.base.ttl_ms, "Lock lease in ms")->check(within(bounds::ttl_ms))->capture_default_str();
  scl.add_option("--wait", scale_options.base.wait_ms, "Bound of each acquire attempt in ms")
      ->check(within(bounds::wait_ms))
      ->capture_default_str();
  scl.add_option("--retry", scale_options.base.retry_ms, "Polling interval in ms")
      ->check(within(bounds::retry_ms))
      ->capture_default_str();
  scl.add_option_function<std::string>(
         "--mode", [&](const std::string& name) { scale_options.base.mode = parse_mode(name).value(); },
         "Clients as processes (fork) or threads")
      ->check(CLI::IsMember({mode_name(ClientMode::process), mode_name(ClientMode::thread)}))
      ->default_str(mode_name(scale_options.base.mode));
  scl.add_option("--out", scale_options.out, "Output directory (default results/scale/<run-id>)");
}

// The checks of `fine-grained` that no one flag's validator can make.
std::optional<std::string> fine_grained_problem(const SalesTrialOptions& flags) {
  const auto* generation = find_generation(flags.lock);
  if (!generation) return "unknown lock '" + flags.lock + "'";
  if (generation->capabilities.multi_node) return flags.lock + " needs independent masters, not a cluster";
  if (!flags.cluster.empty() && !redis::Endpoint::parse(flags.cluster))
    return "--cluster: expected HOST:PORT, got '" + flags.cluster + "'";
  for (const int keys : flags.keys)
    if (keys > flags.units) return "--keys " + std::to_string(keys) + " exceeds --units";
  return std::nullopt;
}

// Exit 0: every run sold exactly the units with no counter below zero; 1: a run
// oversold or failed; 2: usage.
int fine_grained_trial(const SalesTrialOptions& flags) {
  if (auto problem = fine_grained_problem(flags)) return complain(kUsage, *problem);
  auto all_correct = run_sales_trial(flags);
  if (!all_correct) return complain(kRuntime, all_correct.error().message);
  return *all_correct ? kOk : kRuntime;
}

void add_fine_grained_flags(CLI::App& app, SalesTrialOptions& flags) {
  app.add_option("--lock", flags.lock, "Lock generation (not redlock; no-lock shows the oversell)")->capture_default_str();
  app.add_option("--clients", flags.clients, "Client threads")->capture_default_str()->check(CLI::Range(1, 256));
  app.add_option("--keys", flags.keys, "Product counts to run (K)")->capture_default_str()->check(CLI::Range(1, 65536))
      ->delimiter(',');
  app.add_option("--units", flags.units, "Units of inventory in all, split evenly over the K products")
      ->capture_default_str()->check(CLI::Range(1, 10'000'000));
  app.add_option("--topology", flags.topology, "single | cluster | both")
      ->capture_default_str()->check(CLI::IsMember({"single", "cluster", "both"}));
  app.add_option("--cluster", flags.cluster, "Use this existing cluster node (HOST:PORT) instead of starting a cluster");
  app.add_option("--hold-ms", flags.hold_ms, "Work done inside each sale's critical section (0: none)")
      ->capture_default_str()->check(CLI::Range(0, 1000));
  app.add_option("--retry-ms", flags.retry_ms, "Pause between acquire attempts")->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_option("--wait-ms", flags.wait_ms, "How long a client waits for a product's lock")
      ->capture_default_str()->check(CLI::Range(1, 600'000));
}

}  // namespace

Command add_compare(CLI::App& app) {
  auto* cmp = app.add_subcommand("compare", "Every generation through the same workload; JSON per run + report");
  auto options = std::make_shared<CompareOptions>();
  auto adapters = std::make_shared<AdapterFlags>();
  cmp->add_flag("--quick", options->quick, "CI-sized: about 1 s per generation");
  cmp->add_option("--out", options->out, "Output directory (default results/runs/<run-id>)");
  cmp->add_option("--lock", options->locks,
                  "Only these locks (repeatable): generations, shipped adapters ext:NAME, your own ext:LABEL "
                  "(--adapter, --catalog)")
      ->check(checked_by(lock_name_problem, "NAME"));
  add_adapter_flags(*cmp, *adapters);
  auto* duration = add_workload_flags(*cmp, options->base);
  return {cmp, [options, adapters, duration](const std::string& command) {
            if (duration->count() == 0) options->base.duration_s = default_compare_workload(options->quick).duration_s;
            options->base.progress = true;
            options->base.command = command;
            return compare_all(*options, *adapters);
          }};
}

Command add_matrix(CLI::App& app) {
  auto* mat = app.add_subcommand(
      "matrix", "Every lock against every fault, one short run per cell; exit 3 if a cell is not as expected (a lock "
                "of your own has no expected class unless --expect FILE gives it one: its row shows what it does, "
                "and its nearest generation)");
  auto options = std::make_shared<MatrixOptions>();
  auto adapters = std::make_shared<AdapterFlags>();
  mat->add_flag("--quick", options->quick, "CI-sized: fewer attempts per cell");
  mat->add_option("--lang", options->lang, "matrix.html's headings, legends and notes: en, or zh (Chinese)")
      ->check(CLI::IsMember({"en", "zh"}))
      ->capture_default_str();
  mat->add_option("--out", options->out, "Output directory (default results/matrix/<run-id>; a reused one keeps only this matrix's cells)");
  mat->add_option("--lock", options->locks,
                  "Only these rows (repeatable): generations, shipped adapters ext:NAME, your own ext:LABEL "
                  "(--adapter, --catalog); default: every generation, every shipped adapter that can run here, "
                  "every --catalog entry")
      ->check(checked_by(lock_name_problem, "NAME"));
  mat->add_option("--libraries", options->libraries,
                  "Which shipped library rows without --lock: main (the catalog's main rows: no variant rows "
                  "such as ext:node-redlock+failfast) or all; default: main with --quick, all without")
      ->check(CLI::IsMember({"main", "all"}));
  add_adapter_flags(*mat, *adapters);
  mat->add_option("--fault", options->faults, "Only these fault columns (repeatable; see docs/faults.md)");
  mat->add_option("--jobs", options->jobs, "Cells measured at once, each in a worker process")
      ->check(CLI::Range(1, 8))
      ->capture_default_str();
  auto expect = std::make_shared<std::string>();
  mat->add_option("--expect", *expect,
                  "A JSON file of the classes you expect of your own rows, {\"ext:LABEL\": {\"COLUMN\": \"CLASS\" or "
                  "[\"CLASS\", \"CLASS\"]}}: those cells then match or differ like a shipped row's (a difference "
                  "exits 3); the cells it does not name show their class (docs/adapters.md)")
      ->type_name("FILE");
  return {mat, [options, adapters, expect](const std::string& command) {
            options->command = command;
            return matrix_all(*options, *adapters, *expect);
          }};
}

Command add_fleets(CLI::App& app) {
  auto* fleets = app.add_subcommand(
      "fleets", "Which pairs of locks can share a key, and why not: one fault-free --fleet A:N,B:N run per pair");
  auto options = std::make_shared<FleetsOptions>();
  auto adapters = std::make_shared<AdapterFlags>();
  options->base = default_fleets_workload();
  add_fleets_flags(*fleets, *options, *adapters);
  return {fleets, [options, adapters](const std::string& command) {
            options->command = command;
            return fleets_all(*options, *adapters);
          }};
}

Command add_scale(CLI::App& app) {
  auto* scl = app.add_subcommand("scale", "Acquisitions/s against clients per generation, with the harness's CPU share");
  auto options = std::make_shared<ScaleOptions>();
  auto adapters = std::make_shared<AdapterFlags>();
  options->base.duration_s = 1.0;
  add_scale_flags(*scl, *options);
  add_adapter_flags(*scl, *adapters);
  return {scl, [options, adapters](const std::string& command) {
            options->base.command = command;
            return scale_sweep(*options, *adapters);
          }};
}

Command add_fine_grained(CLI::App& app) {
  auto* fine = app.add_subcommand("fine-grained",
                                  "Seed 001's fine-grained locks: K products, M clients each locking the product it "
                                  "sells; sales/s on one master and on a 3-master Redis Cluster, and no oversell.");
  auto options = std::make_shared<SalesTrialOptions>();
  add_fine_grained_flags(*fine, *options);
  return {fine, [options](const std::string&) { return fine_grained_trial(*options); }};
}

}  // namespace locklab::cli
