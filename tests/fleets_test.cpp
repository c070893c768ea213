// `locklab fleets` (issue 18 §5): which pairs of locks can share a key, and why
// not. End to end through the binary: a sweep over three locks, where
// lua-safe-delete and redis-py's `Lock` never break on one key (they share it
// when each got in often enough to show it) and redis-semaphore's `Mutex`
// (which locks `mutex:K`, the catalog says) shares it with neither, whether or
// not its run happened to show an overlap. Then each rule of the
// judgment (sweeps/fleet_judgment.h) on a pair's counts, the report's counts,
// the catalog's `key` field, and the usage errors.
//
// The end-to-end sweep needs Debian's python3-redis (skipped without it) and
// harness/adapters/kits/js/node_modules (harness/adapters/kits/js/install; scripts/setup runs it).
// ctest label: peers.
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/locklab_binary.h"
#include "report/fleets_report.h"
#include "sweeps/fleet_judgment.h"

namespace locklab::harness {
namespace {

using nlohmann::json;
using testing::run_locklab;
using testing::ScratchDir;

bool python_redis_installed() { return std::system("/usr/bin/python3 -c 'import redis' >/dev/null 2>&1") == 0; }

// The pair of `fleets.json` whose locks are a and b, in that order.
json pair_of(const json& fleets, const std::string& a, const std::string& b) {
  for (const auto& pair : fleets.value("pairs", json::array()))
    if (pair["members"][0]["lock"] == a && pair["members"][1]["lock"] == b) return pair;
  ADD_FAILURE() << a << " + " << b << " is not in fleets.json";
  return json::object();
}

std::vector<std::string> codes(const json& pair) {
  std::vector<std::string> out;
  for (const auto& reason : pair.value("why", json::array())) out.push_back(reason["code"]);
  return out;
}

// What is certain, and only that: the semaphore pairs cannot share (the catalog's keys), whether
// or not the run showed an overlap; the same-key pair never breaks, and is `shares` exactly when
// each lock got in kFleetMinSections times (in 0.5 s, redis-py's clients have got in 9 times
// beside lua-safe-delete's 397: then it is `not shown`).
TEST(FleetsSweep, ThreeLocksTheSameKeyPairHoldsTheOthersCannotForTheirKeys) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  ScratchDir out("locklab-fleets");
  const auto run = run_locklab("fleets --lock lua-safe-delete --lock ext:redis-py --lock ext:redis-semaphore "
                               "--duration 0.5 --out " + out.str());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("3 pairs"), std::string::npos) << run.out;
  std::ifstream in(out.path("fleets.json"));
  const json fleets = json::parse(in, nullptr, false);
  ASSERT_FALSE(fleets.is_discarded());
  EXPECT_EQ(fleets["schema"], "locklab.fleets/1");
  EXPECT_NE(fleets["command"].get<std::string>().find("fleets --lock lua-safe-delete"), std::string::npos);
  ASSERT_EQ(fleets["pairs"].size(), 3u);

  const json same = pair_of(fleets, "lua-safe-delete", "ext:redis-py");
  EXPECT_EQ(same["verdict"], "safe") << same.dump(1);
  EXPECT_EQ(same["overlaps"], 0);
  EXPECT_EQ(same["counter"]["expected"], same["counter"]["actual"]);
  EXPECT_GT(same["members"][1]["attempts"].get<long long>(), 0) << "redis-py must really have contended";
  const bool enough = same["members"][0]["acquired"].get<long long>() >= kFleetMinSections &&
                      same["members"][1]["acquired"].get<long long>() >= kFleetMinSections;
  EXPECT_EQ(same["sharing"], enough ? "shares" : "not shown") << same.dump(1);
  EXPECT_EQ(codes(same), std::vector<std::string>{enough ? "same" : "few"}) << same.dump(1);
  EXPECT_TRUE(same["members"][1]["noop_us"].contains("p50")) << "the adapter's round trip is recorded";

  // The catalog decides these; the run's overlaps, which come by chance, only confirm it or not.
  for (const std::string other : {"lua-safe-delete", "ext:redis-py"}) {
    const json cannot = pair_of(fleets, other, "ext:redis-semaphore");
    EXPECT_EQ(cannot["sharing"], "cannot") << cannot.dump(1);
    const bool showed = cannot["overlaps"] != 0 || cannot["counter"]["expected"] != cannot["counter"]["actual"];
    EXPECT_EQ(codes(cannot), (std::vector<std::string>{"key", showed ? "confirmed" : "unconfirmed"})) << cannot.dump(1);
    EXPECT_NE(cannot["why"][0]["text"].get<std::string>().find("`mutex:locklab:lock`"), std::string::npos)
        << "the key comes from the catalog: " << cannot["why"][0]["text"];
  }
  const std::string md = testing::slurp(out.path("fleets.md"));
  EXPECT_NE(md.find(enough ? "| **ext:redis-py** | **shares** |" : "| **ext:redis-py** | not shown |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("no: key"), std::string::npos) << md;
}

// ---- the judgment, one rule at a time, on a pair's counts --------------------

PairMember member(const std::string& lock, const std::string& key, std::int64_t acquired) {
  PairMember m;
  m.lock = lock;
  m.key = key;
  m.clients = 2;
  m.counts.attempts = acquired;
  m.counts.acquired = acquired;
  return m;
}

FleetPair safe_pair(PairMember a, PairMember b) {
  FleetPair pair;
  pair.verdict = "safe";
  pair.counter_expected = pair.counter_actual = a.counts.acquired + b.counts.acquired;
  pair.members = {std::move(a), std::move(b)};
  judge_pair(pair);
  return pair;
}

std::vector<std::string> codes(const FleetPair& pair) {
  std::vector<std::string> out;
  for (const auto& reason : pair.why) out.push_back(reason.code);
  return out;
}

TEST(FleetJudgment, SafeExactAndBothInIsShared) {
  const FleetPair pair = safe_pair(member("a", "K", 30), member("b", "K", kFleetMinSections));
  EXPECT_EQ(pair.sharing, Sharing::shares);
  EXPECT_EQ(codes(pair), std::vector<std::string>{"same"});
  EXPECT_NE(pair.why[0].text.find("same key `K` on one server: the counter exact over 30 + 10 sections"),
            std::string::npos) << pair.why[0].text;
}

// Too few sections of one lock: no overlap is what two locks that ignore each other would show too.
TEST(FleetJudgment, ALockThatGotInFewerThanTheMinimumShowsNothing) {
  PairMember never = member("fair-queue", "K", 0);
  never.counts.timeouts = 2;
  const FleetPair pair = safe_pair(never, member("ext:redis-py", "K", 617));
  EXPECT_EQ(pair.sharing, Sharing::not_shown) << "not one-sided: nothing shows that they exclude each other";
  EXPECT_EQ(codes(pair), std::vector<std::string>{"few"});
  EXPECT_EQ(pair.why[0].text.rfind("fair-queue got in 0 times and timed out 2 times, ext:redis-py got in 617 times: "
                                   "with fewer than 10 sections of a lock", 0), 0u) << pair.why[0].text;
  EXPECT_EQ(safe_pair(member("a", "K", 0), member("b", "K", 40)).sharing, Sharing::not_shown)
      << "0 acquired and 0 timeouts is not sharing";
  EXPECT_EQ(safe_pair(member("a", "K", kFleetMinSections - 1), member("b", "K", 40)).sharing, Sharing::not_shown);
}

TEST(FleetJudgment, OverlapsWithDifferentKeysAndServersSayBoth) {
  FleetPair pair;
  pair.verdict = "violation";
  pair.overlaps = 5;
  pair.lock_servers = 5;
  pair.counter_expected = 20;
  pair.counter_actual = 17;
  pair.members = {member("ext:many", "K", 10), member("ext:one", "mutex:K", 10)};
  pair.members[0].multi_node = true;
  judge_pair(pair);
  EXPECT_EQ(pair.sharing, Sharing::cannot);
  EXPECT_EQ(codes(pair), (std::vector<std::string>{"servers", "key", "confirmed"}));
  EXPECT_NE(pair.why[0].text.find("ext:many takes a majority of the 5 lock servers, ext:one only the first"),
            std::string::npos) << pair.why[0].text;
  EXPECT_NE(pair.why[1].text.find("ext:one `mutex:K`"), std::string::npos) << pair.why[1].text;
  EXPECT_EQ(pair.why[2].text, "this run showed it: 5 overlapping pairs of sections, the counter 17 for 20 sections");
}

TEST(FleetJudgment, WrongTypeIsAValueTypeAnyOtherErrorIsNamed) {
  FleetPair pair;
  pair.verdict = "error";
  pair.members = {member("hash", "K", 4), member("timestamp", "K", 6)};
  pair.members[0].counts.errors = 3;
  pair.members[0].counts.unknown = 2;
  pair.members[0].counts.last_error = "script failed: WRONGTYPE Operation against a key holding the wrong kind of value";
  pair.members[1].counts.release_errors = 1;
  pair.members[1].counts.last_error = "K holds 'abc', not a timestamp";
  pair.counter_expected = pair.counter_actual = 10;
  judge_pair(pair);
  EXPECT_EQ(pair.sharing, Sharing::cannot);
  EXPECT_EQ(codes(pair), (std::vector<std::string>{"type", "errors"}));
  EXPECT_NE(pair.why[0].text.find("hash got WRONGTYPE on the shared key (3 of 4 acquires (2 more of unknown outcome) "
                                  "failed)"), std::string::npos) << pair.why[0].text;
  EXPECT_NE(pair.why[1].text.find("not a timestamp"), std::string::npos) << pair.why[1].text;
}

// node-redisson beside setnx: its script meets a string, and its adapter calls
// the failed script's outcome unknown. WRONGTYPE is still the server's own word
// that the two keep different types there: cannot, not "not measured".
TEST(FleetJudgment, WrongTypeOnCallsOfUnknownOutcomeIsStillAValueType) {
  FleetPair pair;
  pair.verdict = "error";
  pair.verdict_reasons = {"fleet: ext:node-redisson failed 1278 of 1668 acquires"};
  pair.members = {member("setnx", "K", 157), member("ext:node-redisson", "K", 390)};
  pair.members[1].counts.attempts = 1668;
  pair.members[1].counts.unknown = 1278;
  pair.members[1].counts.last_error = "acquire unknown: WRONGTYPE Operation against a key holding the wrong kind of value";
  pair.counter_expected = pair.counter_actual = 547;
  judge_pair(pair);
  EXPECT_EQ(pair.sharing, Sharing::cannot);
  EXPECT_EQ(codes(pair), std::vector<std::string>{"type"});
  EXPECT_NE(pair.why[0].text.find("ext:node-redisson got WRONGTYPE on the shared key (1278 of 1668 acquires, of "
                                  "unknown outcome, failed)"), std::string::npos) << pair.why[0].text;
}

TEST(FleetJudgment, ABreakNoFactExplainsSaysSo) {
  FleetPair pair;
  pair.verdict = "violation";
  pair.verdict_reasons = {"2 overlapping critical-section pairs"};
  pair.overlaps = 2;
  pair.members = {member("a", "K", 4), member("b", "K", 6)};
  judge_pair(pair);
  EXPECT_EQ(pair.sharing, Sharing::cannot);
  EXPECT_EQ(codes(pair), std::vector<std::string>{"unexplained"});
  EXPECT_NE(pair.why[0].text.find("2 overlapping"), std::string::npos);
}

// An error verdict no lock's failure explains is the harness's: the run says nothing of the pair.
TEST(FleetJudgment, AnErrorVerdictTheLocksDidNotCauseIsNotMeasured) {
  FleetPair pair;
  pair.verdict = "error";
  pair.verdict_reasons = {"the two oracles disagree: the history saw 1 overlapping pair(s), the oracle Redis 0",
                          "1 overlapping critical-section pairs (up to 2 holders at once)"};
  pair.overlaps = 1;
  pair.counter_expected = pair.counter_actual = 80;
  pair.members = {member("a", "K", 40), member("b", "K", 40)};
  judge_pair(pair);
  EXPECT_EQ(pair.sharing, Sharing::not_measured) << "not cannot: the oracles disagree";
  EXPECT_EQ(codes(pair), std::vector<std::string>{"run"});
  EXPECT_EQ(pair.why[0].text, "the run could not be judged: " + pair.verdict_reasons[0]);
}

// Outcomes an adapter could not tell are legal, and counted apart from its errors; with no
// fault they leave the run unjudged (the run's verdict is error), not the pair `cannot`.
TEST(FleetJudgment, UnknownOutcomesAreNotErrorsAndLeaveTheRunNotMeasured) {
  FleetPair pair;
  pair.verdict = "error";
  pair.verdict_reasons = {"fleet: ext:b failed 3 of 40 acquires and 0 releases on the shared key"};
  pair.members = {member("a", "K", 40), member("ext:b", "K", 37)};
  pair.members[1].counts.attempts = 40;
  pair.members[1].counts.unknown = 3;
  pair.members[1].counts.last_error = "no answer within 2000 ms";
  pair.counter_expected = pair.counter_actual = 77;
  judge_pair(pair);
  EXPECT_EQ(pair.sharing, Sharing::not_measured);
  EXPECT_EQ(codes(pair), std::vector<std::string>{"run"});
  EXPECT_EQ(pair.why[0].text.rfind("ext:b could not tell the outcome of 3 of 40 acquires (unknown)", 0), 0u)
      << pair.why[0].text;
}

TEST(FleetJudgment, AStarvedLockIsOneSidedAndANotifyingOtherIsWhy) {
  PairMember waiter = member("poller", "K", 12);
  waiter.counts.timeouts = 15;
  PairMember notifier = member("queue", "K", 300);
  notifier.notifies_waiters = true;
  const FleetPair pair = safe_pair(notifier, waiter);
  EXPECT_EQ(pair.sharing, Sharing::one_sided);
  EXPECT_EQ(codes(pair), std::vector<std::string>{"starved"});
  EXPECT_NE(pair.why[0].text.find("queue's release wakes its own waiters, who take the key before poller polls again"),
            std::string::npos) << pair.why[0].text;
}

TEST(FleetJudgment, ALockThatTimedOutAsOftenAsItGotInStarved) {
  PairMember poller = member("poller", "K", 20);
  poller.counts.timeouts = 20;
  const FleetPair starved = safe_pair(member("queue", "K", 750), poller);
  EXPECT_EQ(starved.sharing, Sharing::one_sided);
  EXPECT_NE(starved.why[0].text.find("poller starved: it got in 20 times and timed out 20 times, queue got in 750 times"),
            std::string::npos) << starved.why[0].text;
  EXPECT_EQ(starved.why[0].text.find("wake"), std::string::npos) << "nobody here wakes anybody";
  PairMember queued = member("queued", "K", 0);
  queued.counts.timeouts = 2;
  queued.notifies_waiters = true;
  const FleetPair unwoken = safe_pair(queued, member("poller", "K", 600));
  EXPECT_EQ(unwoken.sharing, Sharing::not_shown) << "it never got in";
  EXPECT_NE(unwoken.why[0].text.find("its waiters wait for a wake-up that poller's release does not send"),
            std::string::npos) << unwoken.why[0].text;
  poller.counts.timeouts = 19;
  EXPECT_EQ(safe_pair(member("queue", "K", 750), poller).sharing, Sharing::shares) << "19 timeouts in 39 is no starving";
}

// Different keys never exclude each other: the catalog says so, whatever one run happened to show.
TEST(FleetJudgment, DifferentKeysCannotShareEvenWhenTheRunShowedNoOverlap) {
  const FleetPair pair = safe_pair(member("a", "K", 50), member("b", "lock.K", 50));
  EXPECT_EQ(pair.sharing, Sharing::cannot);
  EXPECT_EQ(codes(pair), (std::vector<std::string>{"key", "unconfirmed"}));
  EXPECT_EQ(pair.why[0].text, "different keys: a locks `K`, b `lock.K`: neither sees the other's lock");
  EXPECT_EQ(pair.why[1].text.rfind("this run showed no overlap: a got in 50 times", 0), 0u) << pair.why[1].text;
}

// The catalog's fact stands when the harness could not judge the run; the remark says why it is unconfirmed.
TEST(FleetJudgment, DifferentKeysCannotShareWhenTheRunCouldNotBeJudged) {
  FleetPair pair;
  pair.verdict = "error";
  pair.verdict_reasons = {"barrier: a client did not arrive"};
  pair.members = {member("a", "K", 50), member("b", "mutex:K", 50)};
  pair.counter_expected = pair.counter_actual = 100;
  judge_pair(pair);
  EXPECT_EQ(pair.sharing, Sharing::cannot);
  EXPECT_EQ(codes(pair), (std::vector<std::string>{"key", "unconfirmed"}));
  EXPECT_EQ(pair.why[1].text, "this run could not be judged: barrier: a client did not arrive");
}

// Different servers, and one lock barely got in: no overlap could show; the catalog decides.
TEST(FleetJudgment, AStarvedLockOnOtherServersCannotShareEvenWithoutAnOverlap) {
  PairMember majority = member("ext:quorum", "K", 0);
  majority.multi_node = true;
  majority.counts.timeouts = 2;
  FleetPair pair;
  pair.verdict = "safe";
  pair.lock_servers = 5;
  pair.counter_expected = pair.counter_actual = 700;
  pair.members = {member("one-node", "K", 700), majority};
  judge_pair(pair);
  EXPECT_EQ(pair.sharing, Sharing::cannot);
  EXPECT_EQ(codes(pair), (std::vector<std::string>{"servers", "unconfirmed"}));
  EXPECT_EQ(pair.why[1].text, "this run showed no overlap: one-node got in 700 times and timed out 0 times, "
                              "ext:quorum got in 0 times and timed out 2 times");
}

TEST(FleetJudgment, ARunThatCouldNotBeMadeIsNotMeasured) {
  FleetPair pair;
  pair.error = "adapter ext:x: exited with status 3 before answering init";
  pair.members = {member("a", "K", 0), member("ext:x", "", 0)};
  judge_pair(pair);
  EXPECT_EQ(pair.sharing, Sharing::not_measured);
  EXPECT_EQ(codes(pair), std::vector<std::string>{"run"});
}

// ---- the report's counts -----------------------------------------------------

TEST(FleetsReport, NotShownPairsAndUnknownOutcomesAreCountedApart) {
  FleetsResult result;
  result.workload = "w";
  PairMember never = member("fair-queue", "K", 0);
  never.counts.timeouts = 2;
  result.pairs = {safe_pair(member("a", "K", 40), member("b", "K", 40)), safe_pair(never, member("ext:c", "K", 600))};
  result.pairs[1].members[1].counts.unknown = 4;  // the judgment ran before; this is what the report reads
  const json counts = fleets_json(result)["counts"];
  EXPECT_EQ(counts["shares"], 1);
  EXPECT_EQ(counts["not_shown"], 1);
  EXPECT_EQ(counts["one_sided"], 0);
  const json member_c = fleets_json(result)["pairs"][1]["members"][1];
  EXPECT_EQ(member_c["unknown"], 4);
  EXPECT_EQ(member_c["errors"], 0);
  const std::string summary = fleets_summary(result);
  EXPECT_NE(summary.find("1 share a key, 0 one-sided, 0 cannot, 1 not shown."), std::string::npos) << summary;
  EXPECT_NE(summary.find("\n- Not shown (a lock got in fewer than 10 times: no evidence either way): "
                         "fair-queue + ext:c.\n"), std::string::npos) << summary;
  const std::string md = fleets_markdown(result);
  EXPECT_NE(md.find("| **ext:c** |  | not shown |"), std::string::npos) << md;
  EXPECT_NE(md.find("| fair-queue + ext:c | not shown |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 0 / 600 | 2 / 0 | 0 / 0 | 0 / 4 |"), std::string::npos) << "sections, timeouts, errors, unknown";
}

// ---- the catalog's `key` field ----------------------------------------------

TEST(FleetsCatalog, AKeyWithoutThePlaceholderIsRefusedOnOneLine) {
  ScratchDir peers("locklab-fleets-catalog");
  std::ofstream(peers.path("catalog.json"))
      << R"({"schema": "locklab.peers/1", "peers": [{"name": "x", "adapter": ["/bin/true"], "key": "mutex:K"}]})";
  ::setenv("LOCKLAB_PEERS_DIR", peers.str().c_str(), 1);  // the child's catalog
  const auto run = run_locklab("run --lock ext:x --ops 1");
  ::unsetenv("LOCKLAB_PEERS_DIR");
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_NE(run.err.find("catalog.json: peer 1: its key must be a string containing {key}"), std::string::npos)
      << run.err;
  EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << "one line: " << run.err;
}

// "failover_topology" is "" or "cluster" (issue 27 item 3); anything else is refused on one line.
TEST(FleetsCatalog, AnUnknownFailoverTopologyIsRefusedOnOneLine) {
  ScratchDir peers("locklab-fleets-catalog");
  std::ofstream(peers.path("catalog.json"))
      << R"({"schema": "locklab.peers/1", "peers": [{"name": "x", "adapter": ["/bin/true"], "key": "{key}", )"
      << R"("failover_topology": "sentinel"}]})";
  ::setenv("LOCKLAB_PEERS_DIR", peers.str().c_str(), 1);
  const auto run = run_locklab("run --lock ext:x --ops 1");
  ::unsetenv("LOCKLAB_PEERS_DIR");
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_NE(run.err.find("catalog.json: peer 1: failover_topology must be \"\" or \"cluster\""), std::string::npos)
      << run.err;
  EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << "one line: " << run.err;
}

// A shipped catalog whose one entry has `fields` is refused when a run loads it: exit 2, one
// line saying `says` about peer 1.
void expect_catalog_refused(const std::string& fields, const std::string& says) {
  ScratchDir peers("locklab-fleets-catalog");
  std::ofstream(peers.path("catalog.json"))
      << R"({"schema": "locklab.peers/1", "peers": [{"name": "x", "adapter": ["/bin/true"], "key": "{key}", )"
      << fields << "}]}";
  ::setenv("LOCKLAB_PEERS_DIR", peers.str().c_str(), 1);
  const auto run = run_locklab("run --lock ext:x --ops 1");
  ::unsetenv("LOCKLAB_PEERS_DIR");
  EXPECT_EQ(run.exit_code, 2) << fields << run.out << run.err;
  EXPECT_NE(run.err.find("catalog.json: peer 1: " + says), std::string::npos) << fields << run.err;
  EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << "one line: " << run.err;
}

// "resend_ms" (how long a command a reset caught takes to come back) is a whole number of ms from
// 0 to 60000; one above 0 says where the library sets it ("resend_reason", a string) and belongs to a
// lock that claims auto_extends (only such a lock's parked holder is kept longer); otherwise one
// line, exit 2.
TEST(FleetsCatalog, AResendTimeIsCheckedOnOneLine) {
  const std::string watchdog = R"("capabilities": {"expires": true, "auto_extends": true}, )";
  for (const auto& [fields, says] : std::vector<std::pair<std::string, std::string>>{
           {watchdog + R"("resend_ms": -1)", "resend_ms must be a whole number of ms from 0 to 60000"},
           {watchdog + R"("resend_ms": 60001)", "resend_ms must be a whole number of ms from 0 to 60000"},
           {watchdog + R"("resend_ms": 4500.5)", "resend_ms must be a whole number of ms from 0 to 60000"},
           {watchdog + R"("resend_ms": "3s")", "resend_ms must be a whole number of ms from 0 to 60000"},
           {watchdog + R"("resend_ms": 4500)", "a resend_ms above 0 needs its resend_reason"},
           {watchdog + R"("resend_reason": 3)", "resend_reason must be a string"},
           {R"("capabilities": {"expires": true}, "resend_ms": 4500, "resend_reason": "a 3 s timeout")",
            "resend_ms is for a lock that claims auto_extends"}}) {
    expect_catalog_refused(fields, says);
  }
}

// "catch_waiters" ({COLUMN: PATTERN}, each a protocol pattern) says why in "catch_waiters_reason";
// otherwise one line, exit 2 (which columns may catch is the matrix's check: MatrixRun.
// ACatalogCellNamingNoClassDiffersSayingWhich in matrix_test.cpp).
TEST(FleetsCatalog, CaughtWaitersAreCheckedOnOneLine) {
  for (const auto& [fields, says] : std::vector<std::pair<std::string, std::string>>{
           {R"("catch_waiters": "SET")", "catch_waiters must be an object {COLUMN: PATTERN}"},
           {R"("catch_waiters": {"failover": 3}, "catch_waiters_reason": "r")", "catch_waiters.failover must be a string"},
           {R"("catch_waiters": {"failover": "SET>"}, "catch_waiters_reason": "r")", "catch_waiters.failover: "},
           {R"("catch_waiters": {"failover": "EVAL~redis:call"}, "catch_waiters_reason": "r")",
            "catch_waiters.failover: a pattern cannot hold ':'"},
           {R"("catch_waiters": {"node-restart": "EVAL|EVALSHA"})", "catch_waiters needs its catch_waiters_reason"}}) {
    expect_catalog_refused(fields, says);
  }
}

// "park_holder" ({COLUMN: {"warm_up": N, "after_read": BOOL}}) says why in "park_holder_reason";
// otherwise one line, exit 2 (which columns may park is the matrix's check: MatrixPlan.
// ARowThatParksItsHolderLateGetsTheWarmUpInThoseColumnsOnly).
TEST(FleetsCatalog, AParkedHolderPlanIsCheckedOnOneLine) {
  for (const auto& [fields, says] : std::vector<std::pair<std::string, std::string>>{
           {R"("park_holder": [8])", "park_holder must be an object {COLUMN: {warm_up, after_read}}"},
           {R"("park_holder": {"failover": 8}, "park_holder_reason": "r")", "park_holder.failover must be an object"},
           {R"("park_holder": {"failover": {"warmup": 8}}, "park_holder_reason": "r")",
            "park_holder.failover: no field 'warmup' (warm_up, after_read)"},
           {R"("park_holder": {"failover": {"warm_up": 8.5}}, "park_holder_reason": "r")",
            "park_holder.failover.warm_up must be a whole number of acquisitions, 0 to 1000"},
           {R"("park_holder": {"failover": {"warm_up": 4294967297}}, "park_holder_reason": "r")",
            "park_holder.failover.warm_up must be a whole number of acquisitions, 0 to 1000"},
           {R"("park_holder": {"failover": {"after_read": "yes"}}, "park_holder_reason": "r")",
            "park_holder.failover.after_read must be true or false"},
           {R"("park_holder": {"failover": {"warm_up": 8}})", "park_holder needs its park_holder_reason"}}) {
    expect_catalog_refused(fields, says);
  }
}

// ---- usage --------------------------------------------------------------------

TEST(FleetsUsage, BadFlagsAreOneLineAndExitTwo) {
  for (const auto& [args, line] : std::initializer_list<std::pair<const char*, const char*>>{
           {"--lock lua-safe-delete", "--lock: give at least two locks (or none: the default pairs)"},
           {"--lock setnx --lock setnx", "--lock: setnx is given twice"},
           {"--lock setnx --lock no-such", "--lock: unknown lock 'no-such'"},
           {"--lock setnx --lock redlock --clients 0", "--clients: Value 0 not in range 1 to 128"},
           {"--lock setnx --lock redlock --ops 5 --duration 1", "--ops excludes --duration"},
       }) {
    const auto run = run_locklab(std::string("fleets ") + args);
    EXPECT_EQ(run.exit_code, 2) << args << ": " << run.out << run.err;
    EXPECT_EQ(run.err.rfind(std::string("locklab: ") + line, 0), 0u) << args << ": " << run.err;
    EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << args << ": one line: " << run.err;
  }
}

}  // namespace
}  // namespace locklab::harness
