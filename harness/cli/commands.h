// The subcommands of `locklab`: each add_<command>() declares its flags on the
// app and returns how to run it once parsed. main() calls them in the order
// `locklab --help` lists them.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace locklab::cli {

struct Command {
  CLI::App* app;  // the subcommand; run it when app->parsed()
  // The exit code (flags.h). command_line: argv as one line, recorded by the
  // commands that measure, for reproduction.
  std::function<int(const std::string& command_line)> run;
};

// list_commands.cpp: what there is.
Command add_list(CLI::App& app);
Command add_scenarios(CLI::App& app);

// report_commands.cpp: rendering what was measured.
Command add_report(CLI::App& app);
Command add_index(CLI::App& app);

// run_commands.cpp: one run, one multi-host run merged, the failover trials.
Command add_run(CLI::App& app);
Command add_merge(CLI::App& app);
Command add_failover(CLI::App& app);

// sweep_commands.cpp: many runs; and fine-grained, seed 001's sales trial.
Command add_compare(CLI::App& app);
Command add_matrix(CLI::App& app);
Command add_fleets(CLI::App& app);
Command add_scale(CLI::App& app);
Command add_fine_grained(CLI::App& app);

// serve_command.cpp: fresh redis-servers for another program (scripts/compare-peers).
Command add_serve(CLI::App& app);

}  // namespace locklab::cli
