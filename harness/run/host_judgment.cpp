#include "run/host_judgment.h"

#include <string>

#include "servers/server_stats.h"

namespace locklab::harness {
namespace {

nlohmann::json pairs_json(const OraclePairs& pairs) {
  return {{"violations", pairs.violations}, {"fenced_off", pairs.fenced_off}, {"serialized", pairs.serialized}};
}

}  // namespace

nlohmann::json multihost_block(const RunOptions& options, const Result<OracleReading>& reading,
                               const std::optional<std::int64_t>& counter_final, std::int64_t confirmed) {
  return {{"run_id", options.run_id},
          {"host", host_label()},
          {"hosts", options.hosts},
          {"oracle", options.oracle->to_string()},
          {"max_occupancy", reading ? reading->max_occupancy : -1},
          {"overlapped_entries", reading ? reading->overlapped_entries : -1},
          {"violating_pairs", reading ? reading->pairs.violations : -1},
          {"pairs", reading ? pairs_json(reading->pairs) : nlohmann::json(nullptr)},
          {"counter_final", counter_final ? nlohmann::json(*counter_final) : nlohmann::json(nullptr)},
          {"confirmed_increments", confirmed}};
}

std::int64_t oracle_errors(const SharedHistory& history) {
  std::int64_t errors = 0;
  for (int i = 0; i < history.clients(); ++i) errors += history.slot(i).oracle_errors.load();
  return errors;
}

void judge_across_hosts(Verdict& verdict, const Result<OracleReading>& reading, const Barriers& barriers,
                        std::int64_t failed_oracle_commands, const std::string& last_error) {
  auto error = [&verdict](const std::string& why) {
    verdict.verdict = "error";
    verdict.reasons.insert(verdict.reasons.begin(), why);
  };
  for (const Status* barrier : {&barriers.started_together, &barriers.finished_together})
    if (!*barrier) error("barrier: " + barrier->error().message);
  if (failed_oracle_commands > 0)
    error(std::to_string(failed_oracle_commands) +
          " oracle command(s) failed: the oracle may have missed a holder (" + last_error + ")");
  if (!reading) {
    error("cannot read the oracle: " + reading.error().message);
  } else if (reading->pairs.violations > 0) {
    if (verdict.verdict != "error") verdict.verdict = "violation";
    verdict.reasons.push_back("the oracle saw " + std::to_string(reading->pairs.violations) +
                              " pair(s) of sections inside at once that the resource did not serialise (at most " +
                              std::to_string(reading->max_occupancy) + " holders at once)");
  }
}

// One host: the history and the oracle Redis watched the same sections, so
// after the fencing rule they must agree on whether two holders overlapped.
// (Several hosts: the oracle also sees the others' sections; merge judges.)
Agreement check_agreement(Verdict& verdict, const Safety& safety, const Result<OracleReading>& reading, int hosts) {
  if (!reading || hosts != 1) return {};
  const bool history_saw = safety.overlaps.pairs > 0;
  const bool oracle_saw = reading->pairs.violations > 0;
  if (history_saw == oracle_saw) return {true, true};
  verdict.verdict = "error";
  verdict.reasons.insert(verdict.reasons.begin(),
                         "the two oracles disagree: the history saw " + std::to_string(safety.overlaps.pairs) +
                             " overlapping pair(s), the oracle Redis " + std::to_string(reading->pairs.violations) +
                             " violating pair(s)");
  return {true, false};
}

nlohmann::json oracles_block(const Safety& safety, const Result<OracleReading>& reading, const Agreement& agreement,
                             std::int64_t failed_oracle_commands) {
  nlohmann::json history = {{"overlapping_pairs", safety.overlaps.pairs},
                            {"fenced_off_pairs", safety.overlaps_fenced_off},
                            {"serialized_pairs", safety.overlaps_serialized_by_fence},
                            {"max_concurrent", safety.overlaps.max_concurrent}};
  nlohmann::json redis = nullptr;
  if (reading)
    redis = {{"pairs", pairs_json(reading->pairs)},
             {"max_occupancy", reading->max_occupancy},
             {"overlapped_entries", reading->overlapped_entries},
             {"sections", reading->sections},
             {"failed_commands", failed_oracle_commands}};
  return {{"history", history},
          {"redis", redis},
          {"agree", agreement.judged ? nlohmann::json(agreement.agree) : nlohmann::json(nullptr)}};
}

}  // namespace locklab::harness
