#include "run/merge_runs.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>

#include "support/json_read.h"

namespace locklab::harness {

namespace {

// The single-run order of verdicts: a run that could not measure overrules its findings.
int verdict_rank(const std::string& verdict) {
  if (verdict == "error") return 3;
  if (verdict == "violation") return 2;
  if (verdict == "deadlock") return 1;
  return 0;  // safe
}

void at_least(std::string& verdict, const std::string& candidate) {
  if (verdict_rank(candidate) > verdict_rank(verdict)) verdict = candidate;
}

// What the hosts' documents add up to.
struct MergedHosts {
  std::set<std::string> run_ids, locks, labels;
  std::vector<std::string> duplicates;
  nlohmann::json hosts = nlohmann::json::array();
  std::int64_t acquired = 0, confirmed = 0, unconfirmed = 0;
  long long counter_final = -1, max_occupancy = 0, overlapped = 0, violating_pairs = 0;
  std::string worst = "safe";
  std::vector<std::string> reasons;
};

void add_host(MergedHosts& merged, const nlohmann::json& run) {
  const auto& mh = run["multihost"];
  merged.run_ids.insert(mh["run_id"].get<std::string>());
  merged.locks.insert(run["lock"].get<std::string>());
  const std::string host = mh["host"].get<std::string>();
  if (!merged.labels.insert(host).second) merged.duplicates.push_back(host);
  merged.acquired += run["totals"]["acquired"].get<std::int64_t>();
  merged.confirmed += run["counter"]["expected"].get<std::int64_t>();
  merged.unconfirmed += run["counter"]["unconfirmed_writes"].get<std::int64_t>();
  // null when that host could not read it: -1, as no host yet (judge_merged says so when none could).
  merged.counter_final =
      std::max(merged.counter_final, static_cast<long long>(number_at(run, "/multihost/counter_final", -1)));
  merged.max_occupancy = std::max(merged.max_occupancy, mh["max_occupancy"].get<long long>());
  merged.overlapped = std::max(merged.overlapped, mh["overlapped_entries"].get<long long>());
  merged.violating_pairs = std::max(merged.violating_pairs, mh.value("violating_pairs", 0LL));
  const std::string verdict = run["verdict"];
  at_least(merged.worst, verdict);
  if (verdict != "safe") merged.reasons.push_back("host " + host + ": " + verdict);
  merged.hosts.push_back({{"host", host}, {"verdict", verdict}, {"acquired", run["totals"]["acquired"]},
                          {"confirmed_increments", run["counter"]["expected"]}});
}

// The shared counter against every host's writes, and the oracle's pairs.
void judge_merged(MergedHosts& m, std::string& verdict) {
  if (m.violating_pairs > 0) {
    at_least(verdict, "violation");
    m.reasons.push_back("the oracle saw " + std::to_string(m.violating_pairs) +
                        " pair(s) of sections inside at once that the resource did not serialise (at most " +
                        std::to_string(m.max_occupancy) + " holders at once)");
  }
  if (m.counter_final < 0) {
    at_least(verdict, "error");
    m.reasons.push_back("no host could read the final counter");
  } else if (m.counter_final < m.confirmed) {
    at_least(verdict, "violation");
    m.reasons.push_back(std::to_string(m.confirmed - m.counter_final) + " lost counter updates (final " +
                        std::to_string(m.counter_final) + ", confirmed " + std::to_string(m.confirmed) + ")");
  } else if (m.counter_final > m.confirmed + m.unconfirmed) {
    at_least(verdict, "violation");
    m.reasons.push_back("the counter grew by " + std::to_string(m.counter_final - m.confirmed - m.unconfirmed) +
                        " more than every recorded write");
  }
}

}  // namespace

Result<nlohmann::json> merge_runs(const std::vector<nlohmann::json>& runs) {
  using nlohmann::json;
  if (runs.empty()) return Error{ErrorKind::usage, "merge: no run documents"};
  MergedHosts m;
  for (const auto& run : runs) {
    if (!run.contains("multihost") || !run["multihost"].is_object())
      return Error{ErrorKind::usage, "merge: a document without \"multihost\" (not a --run-id run)"};
    add_host(m, run);
  }
  if (m.run_ids.size() != 1) return Error{ErrorKind::usage, "merge: the documents come from different run ids"};
  if (m.locks.size() != 1) return Error{ErrorKind::usage, "merge: the documents ran different locks"};

  std::string verdict = m.worst;
  // The counter is every host's: with a host missing or one counted twice the
  // sums judge nothing. Said first: it overrules what follows.
  std::vector<std::string> unmergeable;
  if (!m.duplicates.empty())
    unmergeable.push_back("host " + m.duplicates.front() + " given more than once: its share would count twice");
  const int expected_hosts = runs.front()["multihost"]["hosts"].get<int>();
  if (static_cast<int>(m.labels.size()) != expected_hosts)
    unmergeable.push_back(std::to_string(m.labels.size()) + " host document(s) for a run of " +
                          std::to_string(expected_hosts) + " hosts: the shared counter cannot be judged");
  if (!unmergeable.empty()) {
    verdict = "error";
    m.reasons.insert(m.reasons.begin(), unmergeable.begin(), unmergeable.end());
  } else {
    judge_merged(m, verdict);
  }
  return json{{"schema", "locklab.merged/1"},
              {"run_id", *m.run_ids.begin()},
              {"lock", *m.locks.begin()},
              {"hosts", m.hosts},
              {"acquired", m.acquired},
              {"counter", {{"final", m.counter_final}, {"confirmed", m.confirmed}, {"unconfirmed_writes", m.unconfirmed}}},
              {"oracle", {{"max_occupancy", m.max_occupancy}, {"overlapped_entries", m.overlapped},
                          {"violating_pairs", m.violating_pairs}}},
              {"verdict", verdict},
              {"verdict_reasons", m.reasons}};
}

}  // namespace locklab::harness
