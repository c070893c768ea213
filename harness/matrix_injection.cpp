#include "matrix_injection.h"

#include <map>
#include <sstream>

namespace locklab::harness {
namespace {

// Until the fault registry is merged, the faults main's step actions express.
struct Spec {
  std::string name;
  std::map<std::string, std::string> params;
};

Spec split(const std::string& text) {
  Spec spec;
  std::stringstream parts(text);
  std::string part;
  std::getline(parts, spec.name, ':');
  while (std::getline(parts, part, ':')) {
    const auto eq = part.find('=');
    spec.params[part.substr(0, eq)] = eq == std::string::npos ? "" : part.substr(eq + 1);
  }
  return spec;
}

Status inject(const std::string& text, RunOptions& options) {
  const Spec spec = split(text);
  if (spec.name == "crash-holder") {
    const auto at = spec.params.find("at");
    const std::string point = at == spec.params.end() ? "locklab:cs-enter" : at->second;
    std::string step = point + ":crash:0";
    options.step_specs.push_back(step);
    options.steps.push_back(parse_step_action(step, nullptr).value());
    return Done{};
  }
  if (spec.name == "slow-holder") {
    options.hold_ms = std::stoi(spec.params.at("ms"));
    return Done{};
  }
  return Error{ErrorKind::usage, "unknown fault '" + spec.name + "'"};
}

}  // namespace

Result<nlohmann::json> measure_with_faults(const RunOptions& options, const std::vector<std::string>& specs) {
  RunOptions with_faults = options;
  for (const auto& spec : specs)
    if (auto injected = inject(spec, with_faults); !injected) return injected.error();
  return measure(with_faults);
}

std::optional<std::string> column_not_injectable(const FaultColumn& column) {
  static const char* const known[] = {"crash-holder", "slow-holder"};
  for (const auto& generation : generations()) {
    const CellPlan plan = plan_cell(generation, column, true);
    for (const auto& spec : plan.faults) {
      const std::string name = split(spec).name;
      if (std::find(std::begin(known), std::end(known), name) == std::end(known))
        return "fault '" + name + "' is not in this build";
    }
  }
  return std::nullopt;
}

}  // namespace locklab::harness
