#include "sweeps/cell_class_of_run.h"

#include <algorithm>

#include "support/json_read.h"

namespace locklab::harness {
namespace {

using nlohmann::json;

// The run's clients whose adapter died on its own (safety.adapter_deaths), one line each.
std::vector<std::string> adapter_deaths(const json& run) {
  std::vector<std::string> deaths;
  const json* safety = run.contains("safety") ? &run["safety"] : nullptr;
  if (safety == nullptr || !safety->contains("adapter_deaths") || !(*safety)["adapter_deaths"].is_array()) return deaths;
  for (const auto& death : (*safety)["adapter_deaths"])
    if (death.is_string()) deaths.push_back(death.get<std::string>());
  return deaths;
}

// A fault that bit by the lock's refusal (Bite::refused_not_held): nobody held, so never `safe`.
bool refused_not_held(const json& run) {
  const auto faults = run.find("faults");
  return faults != run.end() && faults->is_array() &&
         std::any_of(faults->begin(), faults->end(),
                     [](const json& f) { return f.is_object() && f.value("refused_not_held", false); });
}

// Every adapter of the run got the lock once before its clients ran (the probe): a lock that
// cannot acquire at all is broken, not made unavailable by a fault.
bool adapters_acquired_before(const json& run) {
  const auto adapters = run.find("adapters");
  if (adapters == run.end() || !adapters->is_object()) return true;  // a generation: no adapter to be broken
  return std::all_of(adapters->begin(), adapters->end(), [](const json& adapter) {
    return adapter.is_object() && adapter.value("probe_acquired", false);
  });
}

// No refused attempt may have taken the lock: an `unknown` one may have, unless the lock servers'
// witness watched the lock's key and saw no event on it at all.
bool refusals_took_nothing(const json& run) {
  if (number_at(run, "/totals/unknown") == 0) return true;
  const auto witness = run.find("witness");
  return witness != run.end() && witness->is_object() && witness->value("watched", false) &&
         witness->value("events", -1) == 0;
}

// Every acquire refused, the run's one error (Verdict::every_acquire_refused), while each of its
// faults acted and bit: the lock was unavailable under the fault (redlock-rs gives up at the first
// refused node under a node minority), not a run that failed to measure. Only for a lock that
// acquired before the fault, whose refusals took nothing (the servers say so).
bool refused_under_its_fault(const json& run) {
  const auto safety = run.find("safety");
  if (safety == run.end() || !safety->is_object() || !safety->value("every_acquire_refused", false)) return false;
  const auto faults = run.find("faults");
  if (faults == run.end() || !faults->is_array() || faults->empty()) return false;
  return adapters_acquired_before(run) && refusals_took_nothing(run) &&
         std::all_of(faults->begin(), faults->end(), [](const json& fault) {
           return fault.is_object() && fault.value("acted", false) && fault.value("bit", false);
         });
}

}  // namespace

CellClass classify(const json& run) {
  const std::string verdict = run.value("verdict", "error");
  if (verdict == "error") return refused_under_its_fault(run) ? CellClass::liveness : CellClass::error;
  const bool two_holders = number_at(run, "/safety/overlaps") > 0 || number_at(run, "/safety/lost_updates") > 0 ||
                           number_at(run, "/safety/max_concurrent_holders") >= 2;
  const bool wrong_owner = number_at(run, "/safety/wrong_owner_releases") > 0;
  if (verdict == "violation") return two_holders || !wrong_owner ? CellClass::me_violation : CellClass::wrong_owner;
  if (two_holders) return CellClass::me_violation;  // a verdict the checker did not call a violation still had two
  if (verdict == "deadlock") return CellClass::deadlock;
  // A library call still waiting past the harness's bound would have hung the service; an
  // adapter that died on its own (Node's default on an unhandled rejection) took the service down.
  if (number_at(run, "/safety/blocked_calls") > 0) return CellClass::liveness;
  if (!adapter_deaths(run).empty()) return CellClass::liveness;
  const double ttl_ms = number_at(run, "/config/ttl_ms");
  const double unavailable_ms = number_at(run, "/safety/unavailability_ms");
  // Half a lease: a crash right after acquiring leaves the rest of the lease,
  // a little less than one ttl, and that is the unavailability to report.
  if (number_at(run, "/safety/stalls") > 0 || (ttl_ms > 0 && unavailable_ms >= ttl_ms / 2)) return CellClass::liveness;
  if (refused_not_held(run)) return CellClass::liveness;  // the race ran, and the lock refused everyone
  return CellClass::safe;
}

std::string observed_reason(const json& run) {
  std::string why;
  if (number_at(run, "/safety/blocked_calls") > 0) why = text_at(run, "/safety/blocked");
  for (const auto& death : adapter_deaths(run)) why += (why.empty() ? "" : "; ") + death;
  if (refused_not_held(run) && why.empty())
    why = "every acquire failed while the fault's race had its chance: nobody held (the lock was unavailable)";
  if (run.value("verdict", "error") == "error" && refused_under_its_fault(run))
    why += (why.empty() ? "" : "; ") + std::string("every acquire refused while the fault acted: the lock was unavailable (") +
           text_at(run, "/verdict_reasons/0") + ")";
  return why;
}

bool exposed(const json& run) {
  if (run.value("verdict", "error") != "safe") return false;
  return (run.contains("exposed") && run["exposed"].is_boolean() && run["exposed"].get<bool>()) ||
         number_at(run, "/safety/leases_lost_nobody_entered") > 0;
}

// "not exercised: SPEC: what its bite saw" when a fault of the run did not
// bite (docs/harness.md, "Bite"): the cell cannot be at any class, its own
// expected one included. A record without "bit" (locklab.run/1) is not judged.
// A run in which a client's adapter died on its own stands (run/run.cpp,
// judge_faults_bit): the fault took the service down before its race could
// run, and that is the cell's finding (liveness), not a schedule that missed --
// unless the record says the schedule missed ("schedule_missed": a catch= that
// did not catch every waiter, nemesis/caught_waiters.h): then the deaths are
// the undecided interleaving's, and the cell is not exercised all the same.
std::optional<std::string> not_exercised(const json& run) {
  if (!run.contains("faults") || !run["faults"].is_array()) return std::nullopt;
  const bool died = !adapter_deaths(run).empty();
  for (const auto& fault : run["faults"]) {
    if (!fault.is_object() || !fault.contains("bit") || fault["bit"] != false) continue;
    if (died && fault.value("schedule_missed", false) != true) continue;
    return "not exercised: " + fault.value("spec", std::string("?")) + ": " + fault.value("bite", std::string());
  }
  return std::nullopt;
}

}  // namespace locklab::harness
