// The pieces every `locklab` subcommand shares: the exit codes, the one-line
// error, the validators worded as validate() words them, the workload flags of
// `run` and `compare`, and the command line recorded for reproduction.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>

#include "run/options.h"
#include "workload/user_adapters.h"

namespace locklab::cli {

// 0 measured (violations are findings, not failures), 1 runtime failure,
// 2 usage/config error, 3 `run --expect-safe` saw a verdict other than safe.
constexpr int kOk = 0, kRuntime = 1, kUsage = 2, kUnsafe = 3;

// "locklab: MESSAGE" on stderr, on one line (newlines become spaces); returns code.
int complain(int code, const std::string& message);

// A bound of run/options.h as a validator. CLI11 reports a validator's message as
// "FLAG: message", the shape of option_problem(), so `locklab` and validate()
// print the same line.
CLI::Validator within(const harness::Bound& bound);

// Turns a "problem or nullopt" check into a validator.
template <class Check>
CLI::Validator checked_by(Check check, std::string description) {
  return CLI::Validator([check](std::string& text) { return check(text).value_or(std::string{}); },
                        std::move(description));
}

std::optional<std::string> endpoints_problem(const std::string& text);
// A name --lock may give: a generation, a shipped adapter, or any ext:LABEL
// (a user's, checked with --adapter and --catalog once every flag is read).
std::optional<std::string> lock_name_problem(const std::string& lock);

// `--adapter` (repeatable: LABEL='CMD ARGS' per label) and `--catalog FILE`,
// the user's own adapters (workload/user_adapters.h).
void add_adapter_flags(CLI::App& app, harness::AdapterFlags& flags);
// The user's adapters for the locks `named`, or the exit code of the one line said.
std::variant<harness::UserAdapters, int> user_adapters_or_exit(const harness::AdapterFlags& flags,
                                                               const std::vector<std::string>& named);
std::optional<std::string> one_endpoint_problem(const std::string& text);
std::optional<std::string> step_problem(const std::string& spec);
std::optional<std::string> client_counts_problem(const std::string& text);

// The workload flags shared by `run` and `compare`, bound to RunOptions (their
// defaults are its defaults). Returns --duration, whose default compare changes.
CLI::Option* add_workload_flags(CLI::App& app, harness::RunOptions& o);

// The app's own checks, before and during parsing, as today's messages:
// "unknown command 'x' (expected one of ...)" for a first word no subcommand
// has; then the parse. nullopt: parsed, run the command; else the exit code
// (help printed, or the one-line error said).
std::optional<int> parse_or_exit(CLI::App& app, int argc, char** argv);

// argv as one line a reader can paste back into a shell (words with spaces quoted).
std::string command_line(int argc, char** argv);

}  // namespace locklab::cli
