// locklab: the command line of the contention harness.
//   locklab list | scenarios | run | compare | merge | failover | matrix | fleets | report | scale | fine-grained
//           | index | serve   (each with --help)
// Each subcommand is an add_<command>() of cli/commands.h; the exit codes are flags.h's.
#include <exception>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/flags.h"

int main(int argc, char** argv) {
  using namespace locklab::cli;
  CLI::App app{"locklab: Redis distributed-lock generations under contention, judged and compared"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Help for every subcommand");
  // In this order `locklab --help` lists them.
  const std::vector<Command> commands = {add_list(app),     add_scenarios(app), add_run(app),
                                         add_compare(app),  add_merge(app),     add_failover(app),
                                         add_matrix(app),   add_fleets(app),    add_report(app),
                                         add_scale(app),
                                         add_fine_grained(app), add_index(app), add_serve(app)};
  if (auto exit_code = parse_or_exit(app, argc, argv)) return *exit_code;
  try {
    for (const auto& command : commands)
      if (command.app->parsed()) return command.run(command_line(argc, argv));
  } catch (const std::exception& e) {  // a bug, not an expected outcome: still one line, no crash
    return complain(kRuntime, std::string("internal error: ") + e.what());
  }
  return kUsage;
}
