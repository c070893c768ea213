// The fault registry: `--fault NAME[:KEY=VALUE]...` -> a Fault.
//
// One table (nemesis/fault_registry.cpp, fault_table()) names every fault, the keys it takes,
// one line of help, and its factory. The factory gets the run's fault environment (fault_env.h), so it
// can check what depends on them (client=N < --clients, the process mode) and
// words every problem as one line: a usage error (exit 2).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "redis/result.h"

#include "nemesis/fault.h"
#include "nemesis/fault_env.h"
#include "nemesis/fault_spec.h"

namespace locklab::harness {

using FaultFactory = std::function<Result<std::unique_ptr<Fault>>(const FaultSpec&, const FaultEnv&)>;

struct FaultEntry {
  std::string name;
  std::vector<std::string> keys;  // the keys it accepts
  std::string help;               // one line, for --help and docs
  FaultFactory make;
  // Other spellings accepted for `name` (the run command's older word order, e.g.
  // crash-holder for holder-crash): one name everywhere, the old one still works.
  std::vector<std::string> aliases = {};
};

// Every registered fault, in the order `--help` lists them.
const std::vector<FaultEntry>& fault_table();
// "NAME  help" lines, one per fault (for --help).
std::vector<std::string> fault_names();

// The shape, the name and the keys of a spec (what the CLI can check before it
// knows the other options); nullopt when fine, else the one-line problem.
std::optional<std::string> fault_spec_problem(const std::string& text);

// The fault a spec names, built for these options.
Result<std::unique_ptr<Fault>> make_fault(const FaultSpec& spec, const FaultEnv& options);
// Every spec (the run's --fault list), in one set (empty when there are none).
Result<std::unique_ptr<FaultSet>> make_faults(const std::vector<std::string>& specs, const FaultEnv& options);

// `random:count=K`: the specs drawn from `seed` (a pure function: same seed,
// same schedule). Exposed for tests and the record.
std::vector<std::string> random_schedule(std::uint64_t seed, int count, const FaultEnv& options);

}  // namespace locklab::harness
