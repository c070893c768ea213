// `locklab list` (the locks; `list columns`: the matrix's columns) and `scenarios`: what there is (report_commands.cpp renders what was measured).
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "registry.h"

#include "cli/commands.h"
#include "cli/flags.h"
#include "report/columns_doc.h"
#include "scenario/scenario_catalog.h"
#include "support/files.h"
#include "sweeps/matrix_columns.h"
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

// `locklab list columns`: the matrix's columns, one line each; with
// --markdown, docs/faults.md's list rendered from the column table; with
// --write-doc FILE, that list written between FILE's columns markers.
struct ColumnsFlags {
  bool markdown = false;
  std::string write_doc;
};

int list_columns(const ColumnsFlags& flags) {
  const std::string markdown = columns_markdown(columns_doc());
  if (flags.write_doc.empty()) {
    if (flags.markdown) std::printf("%s", markdown.c_str());
    else
      for (const auto& column : matrix_columns())
        std::printf("%-20s %-4s %s -- %s\n", column.heading.name.c_str(), column.heading.anchor_row.c_str(), column.heading.title.c_str(),
                    column.heading.how.c_str());
    return kOk;
  }
  std::ifstream in(flags.write_doc);
  if (!in) return complain(kUsage, "--write-doc: cannot read " + flags.write_doc);
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto updated = with_columns_block(doc, markdown);
  if (!updated) return complain(kUsage, "--write-doc " + flags.write_doc + ": " + updated.error().message);
  if (auto written = write_file_atomically(flags.write_doc, *updated); !written)
    return complain(kRuntime, written.error().message);
  std::printf("%s: the columns' list %s\n", flags.write_doc.c_str(), *updated == doc ? "was already the table's" : "rewritten");
  return kOk;
}

}  // namespace

Command add_list(CLI::App& app) {
  auto* list = app.add_subcommand("list", "List the lock generations and the shipped adapters (ext:NAME), one line each");
  auto* columns = list->add_subcommand("columns", "List the matrix's columns (sweeps/matrix_columns.cpp), one line each");
  auto flags = std::make_shared<ColumnsFlags>();
  columns->add_flag("--markdown", flags->markdown, "Print docs/faults.md's list of the columns, rendered from the table");
  columns->add_option("--write-doc", flags->write_doc, "Write that list between FILE's columns:begin/end markers")
      ->option_text("FILE");
  return {list, [columns, flags](const std::string&) { return columns->parsed() ? list_columns(*flags) : list_generations(); }};
}

Command add_scenarios(CLI::App& app) {
  auto* scenarios = app.add_subcommand("scenarios", "List the scenario binaries: the articles' stories, one each");
  return {scenarios, [](const std::string&) { return list_scenarios(); }};
}

}  // namespace locklab::cli
