// Judging what the oracle read (oracle_side.h, host_coordinator.h) against
// this host's verdict, and the document's "multihost" and "oracles" blocks.
// measure() (run.cpp) calls these only when the run has an oracle: --oracle,
// with or without --run-id.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "redis/result.h"

#include "history/checker.h"
#include "history/history.h"
#include "run/host_coordinator.h"
#include "run/options.h"

namespace locklab::harness {

// Oracle commands that failed, over every client (their own and their removal after death).
std::int64_t oracle_errors(const SharedHistory& history);

// The barriers' outcomes: the start one when every client was set up, the end one when all were done.
struct Barriers {
  const Status& started_together;
  const Status& finished_together;
};

// With an oracle: both barriers must have held, every oracle command must
// have been applied, and the oracle must have seen no pair of holders the
// resource did not serialise (across every host of the run). `last_error`
// is the clients' last error, the likely cause of failed oracle commands.
void judge_across_hosts(Verdict& verdict, const Result<OracleReading>& reading, const Barriers& barriers,
                        std::int64_t failed_oracle_commands, const std::string& last_error);

// Whether the history and the oracle agree on overlapping holders (one host only).
struct Agreement {
  bool judged = false;  // both readings exist and the run is on one host
  bool agree = true;
};
Agreement check_agreement(Verdict& verdict, const Safety& safety, const Result<OracleReading>& reading, int hosts);

// The document's "oracles" block: both oracles' figures side by side.
nlohmann::json oracles_block(const Safety& safety, const Result<OracleReading>& reading, const Agreement& agreement,
                             std::int64_t failed_oracle_commands);

// The document's "multihost" block (--run-id): what this host and the oracle saw.
nlohmann::json multihost_block(const RunOptions& options, const Result<OracleReading>& reading,
                               const std::optional<std::int64_t>& counter_final, std::int64_t confirmed);

}  // namespace locklab::harness
