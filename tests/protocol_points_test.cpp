// holder-pause and holder-crash at a protocol step point (at=resp:PATTERN,
// nemesis/protocol_faults.h), end to end through measure() against real
// redis-server processes: the matrix's release-race and expire-gap cells,
// replayed with the request parked at the fault proxy instead of a step point
// inside the lock, end in the class written down for the in-process cell
// (its column's record, harness/sweeps/matrix_columns.cpp). The proxy knows nothing of the
// lock's code: this is how a library behind an adapter gets the same columns.
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "registry.h"

#include "fixtures/locklab_binary.h"
#include "run/run.h"
#include "sweeps/matrix.h"
#include "sweeps/matrix_expectations.h"
#include "workload/lock_catalog.h"

namespace locklab::testing {
namespace {

using harness::CellClass;
using harness::CellPlan;
using nlohmann::json;

// The matrix's own plan of the cell (its workload, its pause), with its
// in-process step point `at=POINT` replaced by `at=resp:PATTERN` (+ `keys`).
CellPlan protocol_plan(const std::string& lock, const std::string& column, const std::string& pattern,
                       const std::string& keys) {
  const Generation* generation = find_generation(lock);
  EXPECT_NE(generation, nullptr) << lock;
  CellPlan plan = harness::plan_cell(*generation, *harness::find_matrix_column(column), /*quick=*/true);
  EXPECT_EQ(plan.faults.size(), 1u);
  std::string& spec = plan.faults.at(0);
  const auto at = spec.find("at=");
  EXPECT_NE(at, std::string::npos) << spec;
  const auto end = spec.find(':', at);
  spec.replace(at, end == std::string::npos ? std::string::npos : end - at, "at=resp:" + pattern + keys);
  plan.options.faults = plan.faults;
  return plan;
}

// The run of `options`, measured again (at most twice more) when no client
// ever held the lock: a quick redlock plan's node timeout is 5 ms (ttl/200,
// impls/g6_redlock.h), and under the sanitizers on a loaded machine every
// attempt of a run can miss its quorum, so no holder ever reaches the step
// point. Such a run says nothing of the fault; any run with a holder is judged.
Result<json> measure_with_a_holder(const harness::RunOptions& options) {
  auto document = harness::measure(options);
  for (int again = 0; again < 2 && document && (*document)["totals"].value("acquired", 0) == 0; ++again)
    document = harness::measure(options);
  return document;
}

// The fault's record in the document (the first and only one).
const json& fault_record(const json& document) { return document.at("faults").at(0); }

bool record_says(const json& record, const std::string& words) {
  for (const auto& event : record.at("applied"))
    if (event.at("what").get<std::string>().find(words) != std::string::npos) return true;
  return false;
}

void expect_cell(const std::string& lock, const std::string& column, const std::string& pattern,
                 const std::vector<std::string>& recorded, const std::string& keys = "") {
  const CellPlan plan = protocol_plan(lock, column, pattern, keys);
  auto document = measure_with_a_holder(plan.options);
  ASSERT_TRUE(document) << document.error().message;
  const auto expected = harness::expected_cell(lock, column);
  ASSERT_TRUE(expected);
  const json& record = fault_record(*document);
  EXPECT_EQ(record.at("acted"), true) << record.dump();
  EXPECT_EQ(harness::classify(*document), expected->expected)
      << lock << " x " << column << " with " << plan.faults[0] << ": verdict " << (*document)["verdict"]
      << ", expected " << harness::class_name(expected->expected) << " (" << expected->reason << ")\n"
      << (*document)["verdict_reasons"].dump() << "\n" << record.dump() << "\nsections [client, enter_ms, exit_ms]: "
      << (*document)["timeline"]["sections"].dump() << "\noverlaps: " << (*document)["timeline"]["overlaps"].dump()
      << "\ntotals: " << (*document)["totals"].dump() << "\nnode votes: " << (*document)["node_tally"].dump();
  for (const auto& words : recorded) EXPECT_TRUE(record_says(record, words)) << words << " in " << record.dump();
}

// The check-then-DEL race of seed 004 §6: GET said "mine", the DEL parks, the
// key expires, the other client takes it, the DEL goes on and deletes its key.
TEST(ProtocolPoints, SetNxPxTokensReleaseRaceAtTheParkedDelIsAViolation) {
  expect_cell("set-nx-px-token", "release-race", "GET>DEL",
              {"'s DEL locklab:matrix parked on its link to lock server 0 (resp:GET>DEL)", "SIGSTOP client",
               "'s parked DEL locklab:matrix let through: its pause is over", "SIGCONT client"});
}

// The same pause on the compare-and-delete script: the stale release deletes nothing.
TEST(ProtocolPoints, LuaSafeDeletesReleaseScriptParkedIsSafe) {
  expect_cell("lua-safe-delete", "release-race", "EVALSHA|EVAL",
              {"'s EVALSHA ", "parked on its link to lock server 0 (resp:EVALSHA|EVAL)", "SIGSTOP client"});
}

// Redlock's release runs the script on every node: the first to arrive parks,
// the client's other links hold from then on, and all go on together. Its
// acquire runs the same script to undo a lost race: when=holder watches a
// client only once it holds, so the release is what parks.
TEST(ProtocolPoints, RedlocksReleaseParkedOnEveryNodeIsSafe) {
  expect_cell("redlock", "release-race", "EVALSHA|EVAL",
              {"holds the lock: its links watched for resp:EVALSHA|EVAL", "parked on its link to lock server ",
               "SIGSTOP client", "let through: its pause is over"},
              ":when=holder");
}

// A crash on a multi-node lock (review #14, the race of #3): Redlock's holder
// dies as its release script parks on one node; its other links hold from
// then, and all of them are dropped and reset once it is dead, so the release
// reaches no node and its keys block everyone for a lease: the holder-crash
// cell's class (liveness), as for a crash inside the section.
TEST(ProtocolPoints, RedlocksHolderDyingAtItsReleaseScriptIsTheHolderCrashCell) {
  const Generation* redlock = find_generation("redlock");
  ASSERT_NE(redlock, nullptr);
  CellPlan plan = harness::plan_cell(*redlock, *harness::find_matrix_column("holder-crash"), /*quick=*/true);
  plan.faults = {"holder-crash:at=resp:EVALSHA|EVAL:when=holder"};
  plan.options.faults = plan.faults;
  auto document = measure_with_a_holder(plan.options);
  ASSERT_TRUE(document) << document.error().message;
  const json& record = fault_record(*document);
  EXPECT_EQ(record.at("acted"), true) << record.dump();
  for (const auto& words : {"parked on its link to lock server ", ": SIGKILL (pid ", "dropped, its links reset"})
    EXPECT_TRUE(record_says(record, words)) << words << " in " << record.dump();
  EXPECT_FALSE(record_says(record, "not seen")) << record.dump();
  EXPECT_EQ((*document)["totals"]["crashed_clients"], 1) << (*document)["totals"];
  const auto expected = harness::expected_cell("redlock", "holder-crash");
  ASSERT_TRUE(expected);
  EXPECT_EQ(harness::classify(*document), expected->expected)
      << (*document)["verdict"] << " " << (*document)["verdict_reasons"] << "\n" << record.dump();
}

// The SETNX/EXPIRE gap: the EXPIRE parks, the client dies, the EXPIRE is
// dropped: a key without a TTL that nobody ever frees.
TEST(ProtocolPoints, SetnxExpiresCrashAtTheParkedExpireIsADeadlock) {
  expect_cell("setnx-expire", "expire-gap", "SETNX>EXPIRE",
              {"'s EXPIRE locklab:matrix 1 parked on its link to lock server 0 (resp:SETNX>EXPIRE)",
               ": SIGKILL (pid ", "its parked EXPIRE locklab:matrix 1 dropped, its links reset"});
}

// ---- a library behind an adapter at a protocol step point (review #14, #2) ---------

bool python_redis_installed() {
  return std::system("/usr/bin/python3 -c 'import redis' >/dev/null 2>&1") == 0;
}

// An adapter run whose holder's release script parks for `ms` (when=holder: an
// acquire's own scripts cannot match) and is let through after the pause.
harness::RunOptions parked_release(const std::string& lock, int ttl_ms, int ms) {
  harness::RunOptions options;
  options.lock = lock;
  options.clients = 3;
  options.ops = 30;
  options.ttl_ms = ttl_ms;
  options.faults = {"holder-pause:at=resp:EVALSHA|EVAL:when=holder:ms=" + std::to_string(ms)};
  return options;
}

// What the release answered is the subject here, not the race: the pause is a
// fixed one, so whether a new holder was inside when it ended varies. Either
// the race ran and the lock held (safe, bit), or the run says it never ran
// ("not exercised": error, and nothing else) (docs/harness.md, "Bite").
void expect_release_after_pause(const json& d) {
  if (fault_record(d).value("bit", false)) {
    EXPECT_EQ(d["verdict"], "safe") << d["verdict_reasons"] << "\n" << fault_record(d).dump();
  } else {
    EXPECT_EQ(d["verdict"], "error") << d["verdict_reasons"] << "\n" << fault_record(d).dump();
    EXPECT_EQ(d["verdict_reasons"].size(), 1u) << "not exercised, and nothing else: " << d["verdict_reasons"];
    EXPECT_EQ(d["verdict_reasons"][0].get<std::string>().rfind("not exercised: ", 0), 0u) << d["verdict_reasons"];
  }
  EXPECT_EQ(fault_record(d)["acted"], true) << fault_record(d).dump();
  EXPECT_TRUE(record_says(fault_record(d), "let through: its pause is over")) << fault_record(d).dump();
  EXPECT_EQ(d["totals"]["release_errors"], 0) << "a release answered after the pause is not an error: "
                                              << d["verdict_reasons"];
  EXPECT_EQ(d["totals"]["failed_clients"], 0) << d["verdict_reasons"];
}

// redis-py's release script parked past its ttl: the compare-and-delete finds
// another token (safe), and a pause longer than AdapterLock's 2 s margin is
// not "did not answer release within 2000 ms": its bound counts no time the
// client and its adapter were stopped (support/awake_time.h).
TEST(ProtocolPoints, RedisPysReleaseParkedLongerThanTheMarginIsSafe) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  auto document = harness::measure(parked_release("ext:redis-py", 1000, 2500));
  ASSERT_TRUE(document) << document.error().message;
  expect_release_after_pause(*document);
}

// A Node adapter's own bound on a release (protocol.js's ANSWER_MS, 1.5 s)
// counts no stopped time either: a 1.7 s pause inside the lease is a release
// that succeeded, not a release error (the run is error all the same: the
// pause ended inside the lease, so the race it stands for never ran).
TEST(ProtocolPoints, WarlocksReleaseParkedLongerThanItsAdaptersBoundIsAnswered) {
  ASSERT_TRUE(std::filesystem::is_directory(harness::peers_dir() + "/kits/js/node_modules"))
      << "harness/adapters/kits/js/node_modules is missing: run harness/adapters/kits/js/install";
  auto document = harness::measure(parked_release("ext:node-redis-warlock", 3000, 1700));
  ASSERT_TRUE(document) << document.error().message;
  expect_release_after_pause(*document);
}

// A pattern no request matches: the fault did not act, the run is error.
TEST(ProtocolPoints, APatternNothingMatchesMakesTheRunError) {
  harness::RunOptions options;
  options.lock = "lua-safe-delete";
  options.clients = 2;
  options.ops = 4;
  options.ttl_ms = 400;
  options.hold_ms = 1;
  options.mode = harness::ClientMode::process;
  options.faults = {"holder-pause:at=resp:FLUSHALL:ms=50"};
  auto document = harness::measure(options);
  ASSERT_TRUE(document) << document.error().message;
  EXPECT_EQ((*document)["verdict"], "error");
  EXPECT_EQ((*document)["verdict_reasons"][0],
            "fault holder-pause:at=resp:FLUSHALL:ms=50 did not act: no client sent a request matching resp:FLUSHALL");
  EXPECT_EQ(fault_record(*document)["acted"], false);
}

// Refused before anything starts, one line, exit 2.
TEST(ProtocolPoints, BadSpecsAreUsageErrors) {
  const std::string run = "run --lock lua-safe-delete --clients 2 --ops 2 ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--fault 'holder-pause:at=resp:GET>:ms=50'", "bad RESP pattern 'GET>': an empty step"},
      {"--fault 'holder-crash:at=resp:'", "bad RESP pattern '': empty"},
      {"--fault 'holder-crash:at=resp:DEL~a b'", "needs a text without"},
      {"--redis 127.0.0.1:1 --fault 'holder-crash:at=resp:DEL'", "acts on servers locklab starts itself"},
      {"--mode thread --fault 'holder-crash:at=resp:DEL'", "needs --mode process"},
      {"--fault 'holder-crash:at=resp:DEL:when=later'", "when must be one of start|holder"},
      {"--fault 'holder-crash:at=locklab:cs-exit:when=holder'", "when= goes with at=resp:PATTERN"},
      // One watch per link (review #8): a second protocol step point on the same client's links.
      {"--fault 'holder-pause:at=resp:DEL:ms=10' --fault 'holder-crash:at=resp:GET'",
       "holder-crash:at=resp:GET': a second protocol step point on every client's links"},
      {"--fault 'holder-pause:at=resp:DEL:ms=10:client=1' --fault 'holder-crash:at=resp:GET:client=1'",
       "holder-crash:at=resp:GET:client=1': a second protocol step point on client 1's links"},
      {"--fault 'holder-pause:at=resp:DEL:ms=10' --fault 'holder-crash:at=resp:GET:client=0'",
       "holder-crash:at=resp:GET:client=0': a second protocol step point on client 0's links"},
  };
  for (const auto& [args, words] : cases) {
    const Outcome outcome = run_locklab(run + args);
    EXPECT_EQ(outcome.exit_code, 2) << args << ": " << outcome.err;
    EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << args << ": " << outcome.err;
    EXPECT_NE(outcome.err.find(words), std::string::npos) << args << ": " << outcome.err;
  }
  const Outcome apart = run_locklab(run + "--fault 'holder-pause:at=resp:DEL:ms=10:client=0' "
                                           "--fault 'holder-crash:at=resp:DEL:client=1'");
  EXPECT_NE(apart.exit_code, 2) << "two clients' links, one watch each: " << apart.err;
  const Outcome local = run_locklab("run --lock local-mutex --fault 'holder-crash:at=resp:DEL'");
  EXPECT_EQ(local.exit_code, 2) << local.err;
  EXPECT_NE(local.err.find("needs a lock that uses Redis"), std::string::npos) << local.err;
}

}  // namespace
}  // namespace locklab::testing
