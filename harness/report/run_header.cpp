// A run's own header and the events of its timeline (run_header.h).
#include "report/run_header.h"

#include <algorithm>
#include <cstdint>
#include <sstream>

#include "support/json_read.h"
#include "support/text.h"

namespace locklab::harness {
namespace {

using nlohmann::json;

std::string faults_text(const json& config) {
  std::string out;
  for (const char* field : {"faults", "step"}) {
    const json specs = config.value(field, json::array());
    if (!specs.is_array()) continue;
    for (const auto& spec : specs)
      if (spec.is_string()) out += (out.empty() ? "" : ", ") + spec.get<std::string>();
  }
  return out.empty() ? "no fault" : "fault " + out;
}

// The fields that make two runs' setups the same (the lock aside: a comparison differs in it).
constexpr const char* kSetupFields[] = {"clients", "mode",  "ops",  "duration_s", "hold_ms", "ttl_ms",
                                        "wait_ms", "retry_ms", "faults", "step", "command"};

}  // namespace

std::string run_header(const json& run) {
  const json c = run.value("config", json::object());
  std::ostringstream out;
  out << text_at(run, "/lock") << ": " << faults_text(c) << "; " << c.value("clients", 0) << " "
      << c.value("mode", std::string("?")) << " clients, " << workload_text(c) << ", hold " << c.value("hold_ms", 0)
      << " ms, ttl " << c.value("ttl_ms", 0) << " ms, wait " << c.value("wait_ms", 0) << " ms, retry "
      << c.value("retry_ms", 0) << " ms.";
  const std::string command = c.value("command", std::string());
  out << (command.empty() ? std::string(" Made by: (not recorded)") : " Made by: `" + command + "`");
  return out.str();
}

std::string workload_text(const json& config, bool each) {
  // -1: not recorded (a run has one of the two; the other is null).
  if (const double ops = number_at(config, "/ops", -1); ops >= 0)
    return std::to_string(static_cast<std::int64_t>(ops)) + " attempts";
  const double duration = number_at(config, "/duration_s", -1);
  if (duration < 0) return "";
  std::ostringstream out;  // as the stream prints a double: 2.5, 10, 0.25
  out << duration << (each ? " s each" : " s");
  return out.str();
}

bool same_setup(const std::vector<json>& runs) {
  if (runs.size() < 2) return true;
  const json first = runs.front().value("config", json::object());
  return std::all_of(runs.begin() + 1, runs.end(), [&](const json& run) {
    const json c = run.value("config", json::object());
    return std::all_of(std::begin(kSetupFields), std::end(kSetupFields),
                       [&](const char* f) { return first.value(f, json()) == c.value(f, json()); });
  });
}

json timeline_of(const json& run) {
  json t = run.value("timeline", json::object());
  if (!t.is_object()) t = json::object();
  json marks = json::array();
  const json faults = run.value("faults", json::array());
  if (faults.is_array())
    for (const auto& fault : faults)
      for (const auto& act : fault.value("applied", json::array()))
        marks.push_back({{"t_ms", act.value("t_ms", 0.0)}, {"fault", fault.value("spec", std::string("?"))},
                         {"what", act.value("what", std::string("?"))}});
  std::stable_sort(marks.begin(), marks.end(),
                   [](const json& a, const json& b) { return a["t_ms"].get<double>() < b["t_ms"].get<double>(); });
  json stalls = json::array();
  for (const auto& stall : run.value("/safety/stall_spans"_json_pointer, json::array()))
    stalls.push_back({stall.value("from_ms", 0.0), stall.value("to_ms", 0.0)});
  t["marks"] = marks;
  t["stalls"] = stalls;
  return t;
}

std::vector<std::string> timeline_events(const json& run) {
  const json t = timeline_of(run);
  std::vector<std::string> lines;
  for (const auto& mark : t["marks"])
    lines.push_back(mark["fault"].get<std::string>() + " at " + fixed(mark["t_ms"].get<double>(), 1) +
                    " ms: " + mark["what"].get<std::string>());
  for (const auto& stall : t["stalls"])
    lines.push_back("stall " + fixed(stall[0].get<double>(), 0) + "–" + fixed(stall[1].get<double>(), 0) +
                    " ms: nobody inside while clients waited");
  return lines;
}

}  // namespace locklab::harness
