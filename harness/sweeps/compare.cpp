#include "sweeps/compare.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>

#include "registry.h"

#include "report/comparison_report.h"
#include "report/lost_updates_table.h"
#include "run/run_document.h"
#include "support/run_id.h"
#include "support/text.h"
#include "workload/lock_catalog.h"

namespace locklab::harness {

RunOptions default_compare_workload(bool quick) {
  RunOptions options;
  if (quick) options.duration_s = kQuickDurationS;
  return options;
}

Result<CompareSummary> compare(const CompareOptions& options) {
  std::vector<std::string> locks = options.locks;
  if (locks.empty())
    for (const auto& generation : generations()) locks.push_back(generation.name);
  const UserAdapters& own = options.base.user_adapters;  // the user's adapters are found first, as in a run
  for (const auto& lock : locks)
    if (own.find(lock) == nullptr)
      if (auto problem = unknown_lock(lock)) return Error{ErrorKind::usage, option_problem("--lock", *problem)};
  if (locks.empty()) return Error{ErrorKind::io, "no generations registered: nothing to compare"};
  // The failover guard is a knob of the generations that implement it; the others run without it.
  auto options_for = [&options, &own](const std::string& lock) {
    RunOptions run = options.base;
    run.lock = lock;
    const auto described = own.find(lock) != nullptr ? Result<LockDescription>(*own.find(lock)) : find_lock(lock);
    if (described && !described->capabilities.honours_wait_replicas) run.wait_replicas = 0;
    return run;
  };
  {
    RunOptions probe = options_for(locks.front());
    if (auto problem = validate(probe)) return Error{ErrorKind::usage, *problem};
  }

  auto made = result_dir(options.out, "results/runs");
  if (!made) return made.error();
  const std::string dir = std::move(made).value();

  CompareSummary summary;
  summary.dir = dir;
  RunDocuments runs;
  for (std::size_t i = 0; i < locks.size(); ++i) {
    RunOptions run = options_for(locks[i]);
    run.progress = options.base.progress;
    std::fprintf(stderr, "locklab compare: [%zu/%zu] %s ...\n", i + 1, locks.size(), run.lock.c_str());
    auto document = measure(run);
    if (!document) {
      std::fprintf(stderr, "locklab: %s: %s\n", run.lock.c_str(), one_line(document.error().message).c_str());
      ++summary.failed_runs;
      continue;
    }
    const std::string path = (std::filesystem::path(dir) / (run.lock + ".json")).string();
    (*document)["config"]["json"] = path;
    if (auto written = write_json_atomically(path, *document); !written) {
      std::fprintf(stderr, "locklab: %s\n", written.error().message.c_str());
      ++summary.failed_runs;
      continue;
    }
    if ((*document)["verdict"] == "error") ++summary.failed_runs;
    std::fprintf(stderr, "locklab compare: [%zu/%zu] %s: %s, %.0f acquisitions/s\n", i + 1, locks.size(),
                 run.lock.c_str(), (*document)["verdict"].get<std::string>().c_str(),
                 (*document)["throughput"]["acquisitions_per_s"].get<double>());
    runs.push_back(std::move(*document));
  }
  summary.runs = static_cast<int>(runs.size());
  if (auto written = write_report(runs, dir); !written) return written.error();
  std::printf("%s\nCounter demo (each critical section adds 1; expected = increments the clients were told "
              "succeeded):\n\n%s\nResults: %s/*.json\nReport:  %s/report.md, %s/report.html\n",
              markdown_report(runs).c_str(), lost_updates_table(runs).c_str(), dir.c_str(), dir.c_str(), dir.c_str());
  return summary;
}

}  // namespace locklab::harness
