// `locklab list` and `scenarios`: what there is (report_commands.cpp renders what was measured).
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/flags.h"
#include "registry.h"
#include "scenario/scenario_catalog.h"
#include "workload/lock_catalog.h"

namespace locklab::cli {

using namespace locklab::harness;

namespace {

int list_generations() {
  if (generations().empty()) std::fprintf(stderr, "locklab: no generations registered yet\n");
  for (const auto& g : generations())
    std::printf("%-20s %-3s %s%s -- %s\n", g.name.c_str(), g.number.c_str(), g.summary.c_str(),
                g.capabilities.multi_node ? " [multi-node]" : "", g.race.c_str());
  // The generations' variant rows (impls/registry.h): `run --lock BASE+WHAT`, `matrix --libraries all`.
  for (const auto& v : generation_variants())
    std::printf("%-20s %-3s %s -- variant of %s: %s\n", v.name.c_str(), v.number.c_str(), v.summary.c_str(),
                v.variant_of.c_str(), v.variant_reason.c_str());
  // The shipped adapters (workload/lock_catalog.h): `run --lock ext:NAME`.
  for (const auto& peer : catalog_peers())
    std::printf("%-20s %-3s %s, capabilities %s\n", peer.name.c_str(), peer.number.c_str(), peer.summary.c_str(),
                words_text(peer.claimed).c_str());
  return kOk;
}

// Two lines per scenario binary (scenario/scenario_catalog.cpp): what it tells;
// where the articles tell it and each lock with what the lesson expects of it
// (race: the story's failure happens; fixed: the same story, no failure). Then
// one line per switch of the story (--guard, --delayed-restart, --sigstop):
// every variant a class can run is listed, each with what the lesson expects.
int list_scenarios() {
  const auto expects = [](bool race) { return race ? "race" : "fixed"; };
  for (const auto& spec : scenario_catalog()) {
    std::printf("%-36s %s\n%-36s (%s) locks:", spec.name.c_str(), spec.story.c_str(), "", spec.source.c_str());
    for (const auto& lock : spec.locks) std::printf(" %s (%s)", lock.name.c_str(), expects(lock.race_expected));
    std::printf("\n");
    for (const auto& flag : spec.flags) {
      std::printf("%-36s --%s: %s; with it:", "", flag.name.c_str(), flag.help.c_str());
      for (const auto& lock : spec.locks)
        std::printf(" %s (%s)", lock.name.c_str(), expects(flag.race_expected.value_or(lock.race_expected)));
      std::printf("\n");
    }
  }
  std::printf("\nRun one: build/default/scenarios/NAME [--lock LOCK] [--FLAG] [--json PATH] [--html PAGE] "
              "[--step-through | --pace MS]; all: ctest --preset default -L scenario\n");
  return kOk;
}

}  // namespace

Command add_list(CLI::App& app) {
  auto* list = app.add_subcommand("list", "List the lock generations and the shipped adapters (ext:NAME), one line each");
  return {list, [](const std::string&) { return list_generations(); }};
}

Command add_scenarios(CLI::App& app) {
  auto* scenarios = app.add_subcommand("scenarios", "List the scenario binaries: the articles' stories, one each");
  return {scenarios, [](const std::string&) { return list_scenarios(); }};
}

}  // namespace locklab::cli
