// `locklab report` and `index`: rendering what was measured, from the run
// documents (and the matrix) a command wrote before.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "registry.h"

#include "cli/commands.h"
#include "cli/flags.h"
#include "report/comparison_report.h"
#include "report/index.h"
#include "run/run_document.h"
#include "sweeps/matrix.h"

namespace locklab::cli {

using namespace locklab::harness;

namespace {

int report_files(const std::vector<std::string>& files, const std::string& out) {
  auto runs = load_runs(files);
  if (!runs) return complain(kUsage, runs.error().message);
  try {
    if (auto written = write_report(*runs, out); !written) return complain(kRuntime, written.error().message);
    std::printf("%s\nReport: %s/report.md, %s/report.html\n", markdown_report(*runs).c_str(), out.c_str(), out.c_str());
  } catch (const nlohmann::json::exception& e) {  // right keys, wrong types: still not a run document
    return complain(kUsage, std::string("not a locklab.run document: ") + e.what());
  }
  return kOk;
}

// Where a generation comes in the comparison: the registry's order, as
// `locklab compare` runs them; a lock the registry does not know comes last.
std::size_t registry_rank(const nlohmann::json& run) {
  const std::string lock = run.value("lock", "");
  const auto& all = generations();
  const auto at = std::find_if(all.begin(), all.end(), [&](const auto& g) { return g.name == lock; });
  return static_cast<std::size_t>(at - all.begin());
}

// The comparison's run documents: DIR/*.json, as `locklab compare --out DIR` wrote them.
Result<RunDocuments> load_comparison(const std::string& dir) {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".json") paths.push_back(entry.path().string());
  if (paths.empty()) return Error{ErrorKind::usage, "no run result JSON in " + dir + " (made by: locklab compare --out " + dir + ")"};
  std::sort(paths.begin(), paths.end());
  auto runs = load_runs(paths);
  if (!runs) return runs.error();
  std::stable_sort(runs->begin(), runs->end(),
                   [](const auto& a, const auto& b) { return registry_rank(a) < registry_rank(b); });
  return runs;
}

// `locklab index DIR`: DIR/matrix (locklab matrix) and DIR's comparison (locklab
// compare) on one page, DIR/index.html, and DIR/index.md.
int index_files(const std::string& dir) {
  auto matrix = load_matrix((std::filesystem::path(dir) / "matrix").string());
  if (!matrix) return complain(kUsage, matrix.error().message);
  auto runs = load_comparison(dir);
  if (!runs) return complain(kUsage, runs.error().message);
  try {
    if (auto written = write_index(dir, *matrix, *runs); !written) return complain(kRuntime, written.error().message);
  } catch (const nlohmann::json::exception& e) {  // right keys, wrong types: still not a run document
    return complain(kUsage, std::string("not a locklab.run document: ") + e.what());
  }
  std::printf("Index: %s/index.html, %s/index.md (the fault matrix first, then the comparison)\n", dir.c_str(),
              dir.c_str());
  return kOk;
}

struct ReportFlags {
  std::vector<std::string> files;
  std::string out;
};

}  // namespace

Command add_report(CLI::App& app) {
  auto* rep = app.add_subcommand("report", "Render run result JSON files into report.md + report.html");
  auto flags = std::make_shared<ReportFlags>();
  rep->add_option("results", flags->files, "Run result JSON files")->required()->check(CLI::ExistingFile);
  rep->add_option("--out", flags->out, "Output directory")->required();
  return {rep, [flags](const std::string&) { return report_files(flags->files, flags->out); }};
}

Command add_index(CLI::App& app) {
  auto* index = app.add_subcommand(
      "index", "One page for a full run (scripts/run): DIR/index.html and index.md, the fault matrix of DIR/matrix "
               "first, then the comparison in DIR");
  auto dir = std::make_shared<std::string>();
  index->add_option("dir", *dir, "The directory: DIR/matrix from locklab matrix --out, DIR/*.json from locklab compare --out")
      ->required()
      ->check(CLI::ExistingDirectory);
  return {index, [dir](const std::string&) { return index_files(*dir); }};
}

}  // namespace locklab::cli
