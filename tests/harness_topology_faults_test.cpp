// The topology a fault needs (fronts, per-client links, a proxied replica, the
// clock shim) and the faults built on it, end to end through measure() against
// real redis-server processes: each fault reaches its expected verdict on every run.
#include <chrono>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "run/run.h"
#include "servers/lock_server_layout.h"
#include "support/conditions.h"

namespace locklab::testing {
namespace {

using namespace std::chrono_literals;
using harness::LockServerLayout;
using harness::LayoutPlan;
using harness::wait_until;

redis::Connection connect(const redis::ConnectionOptions& options) {
  auto connection = redis::Connection::connect(options);
  EXPECT_TRUE(connection) << connection.error().message;
  return std::move(connection).value();
}

std::unique_ptr<LockServerLayout> start(const LayoutPlan& plan) {
  auto topology = LockServerLayout::start(plan);
  EXPECT_TRUE(topology) << topology.error().message;
  return topology ? std::move(topology).value() : nullptr;
}

// ---- the topology ------------------------------------------------------------

TEST(LockServerLayout, ClientsReachEveryServerThroughTheirOwnLinks) {
  LayoutPlan plan;
  plan.lock_servers = 3;
  plan.clients = 2;
  plan.client_proxies = true;
  auto topology = start(plan);
  ASSERT_TRUE(topology);
  for (int client = 0; client < 2; ++client) {
    const auto endpoints = topology->client_endpoints(client);
    ASSERT_EQ(endpoints.size(), 3u);
    for (std::size_t j = 0; j < 3; ++j) {
      EXPECT_EQ(endpoints[j].endpoint.port, topology->client_link(client, j)->endpoint().port);
      EXPECT_NE(endpoints[j].endpoint.port, topology->server(j).endpoint().port);
      auto c = connect(endpoints[j]);
      ASSERT_TRUE(c.command({"SET", "from-" + std::to_string(client), "x"}));
    }
  }
  // Each link leads to its own server: what client 0 wrote through link (0, 2) is on server 2.
  auto direct = connect(topology->server(2).connection_options());
  EXPECT_TRUE(direct.command({"EXISTS", "from-0"})->integer() == 1);
}

TEST(LockServerLayout, CuttingOneClientsLinkLeavesTheOthersAlone) {
  LayoutPlan plan;
  plan.lock_servers = 1;
  plan.clients = 2;
  plan.client_proxies = true;
  auto topology = start(plan);
  ASSERT_TRUE(topology);
  auto c0 = connect(topology->client_endpoints(0)[0]);
  auto c1 = connect(topology->client_endpoints(1)[0]);
  topology->client_link(0, 0)->cut();
  EXPECT_FALSE(c0.command({"PING"})) << "client 0's link is cut";
  EXPECT_TRUE(c1.command({"PING"})) << "client 1's link is not";
  topology->heal_client_links();
  auto again = connect(topology->client_endpoints(0)[0]);
  EXPECT_TRUE(again.command({"PING"}));
}

TEST(LockServerLayout, FailoverSendsTheFrontAndEveryClientLinkToThePromotedReplica) {
  LayoutPlan plan;
  plan.lock_servers = 1;
  plan.clients = 1;
  plan.replica_via_proxy = true;
  plan.client_proxies = true;
  auto topology = start(plan);
  ASSERT_TRUE(topology);
  const int old_master_port = topology->server(0).endpoint().port;
  auto client = connect(topology->client_endpoints(0)[0]);
  topology->replication()->hold_replication();
  ASSERT_TRUE(client.command({"SET", "lock", "A"})->is_status("OK"));
  ASSERT_TRUE(wait_until([&] { return topology->replication()->held_bytes() > 0; }, 5s));

  auto promoted = topology->fail_over();
  ASSERT_TRUE(promoted) << promoted.error().message;
  EXPECT_NE(promoted->port, old_master_port);
  EXPECT_EQ(topology->server(0).endpoint().port, promoted->port);
  EXPECT_FALSE(client.command({"GET", "lock"})) << "the connection to the old master was reset";
  auto reconnected = connect(topology->client_endpoints(0)[0]);
  EXPECT_TRUE(reconnected.command({"GET", "lock"})->is_nil()) << "the new master never got A's lock";
  auto coordinator = connect(topology->endpoint(0));
  EXPECT_TRUE(coordinator.command({"SET", "lock", "B", "NX"})->is_status("OK")) << "a second client can take it";
}

TEST(LockServerLayout, RefusesReplicasForAMultiNodeLock) {
  LayoutPlan plan;
  plan.lock_servers = 5;
  plan.replica_via_proxy = true;
  auto topology = LockServerLayout::start(plan);
  ASSERT_FALSE(topology);
  EXPECT_EQ(topology.error().kind, ErrorKind::usage);
}

// ---- the faults, end to end through measure() -----------------------------------

harness::RunOptions run_options(const std::string& lock, std::vector<std::string> faults) {
  harness::RunOptions options;
  options.lock = lock;
  options.clients = 3;
  options.duration_s = 2.0;
  options.hold_ms = 1;
  options.ttl_ms = 1000;
  options.wait_ms = 500;
  options.faults = std::move(faults);
  return options;
}

nlohmann::json run(const harness::RunOptions& options) {
  auto document = harness::measure(options);
  EXPECT_TRUE(document) << document.error().message;
  return document ? *document : nlohmann::json::object();
}

std::string story(const nlohmann::json& document) {
  return document.value("verdict", "?") + " " + document["verdict_reasons"].dump() + "\nfaults: " +
         document["faults"].dump() + "\ntotals: " + document["totals"].dump();
}

// The fault's own record says it acted (and what it did, for the failure message).
bool applied(const nlohmann::json& document, const std::string& needle) {
  for (const auto& fault : document["faults"])
    for (const auto& event : fault["applied"])
      if (event["what"].get<std::string>().find(needle) != std::string::npos) return true;
  return false;
}

TEST(FailoverFault, LuaSafeDeleteLosesTheLockToAPromotedReplica) {
  const auto document = run(run_options("lua-safe-delete", {"failover"}));
  EXPECT_EQ(document["verdict"], "violation") << story(document);
  EXPECT_GE(document["safety"]["max_concurrent_holders"].get<int>(), 2) << story(document);
  EXPECT_TRUE(applied(document, "two holders")) << story(document);
}

TEST(FailoverFault, TheWaitGuardRefusesTheUnreplicatedAcquire) {
  auto options = run_options("lua-safe-delete", {"failover"});
  options.wait_replicas = 1;
  const auto document = run(options);
  EXPECT_EQ(document["verdict"], "safe") << story(document);
  EXPECT_TRUE(applied(document, "an acquire was refused")) << story(document);
  EXPECT_TRUE(applied(document, "no other client acquired")) << story(document);
}

TEST(FailoverFault, ReentrantWatchdogLosesTheLockToAPromotedReplica) {
  const auto document = run(run_options("reentrant-watchdog", {"failover"}));
  EXPECT_EQ(document["verdict"], "violation") << story(document);
  EXPECT_TRUE(applied(document, "two holders")) << story(document);
}

// The matrix's fenced x failover and x node-restart schedule (ttl 2 s, hold
// 100 ms, waits of 30 ms): the token counter goes back with the lost key, the
// new holder draws the old holder's token, and the contender, parked after its
// read until the old holder left, writes after it: a lost update, every run --
// not the luck of two 100 ms holds ending a millisecond apart (issue 25).
harness::RunOptions fenced_lost_key_options(const std::string& fault) {
  auto options = run_options("fenced", {fault});
  options.ttl_ms = 2000;
  options.hold_ms = 100;
  options.wait_ms = 30;
  options.duration_s = 1.5;
  return options;
}

void expect_fenced_lost_update(const nlohmann::json& document) {
  EXPECT_EQ(document["verdict"], "violation") << story(document);
  EXPECT_GE(document["safety"]["lost_updates"].get<int>(), 1) << story(document);
  EXPECT_EQ(document["safety"]["stale_writes_rejected"].get<int>(), 0) << story(document);
  EXPECT_TRUE(applied(document, "goes on to its write")) << story(document);
}

TEST(FailoverFault, FencedNewHolderDrawsTheOldTokenAndTheOldWriteLandsBetweenItsReadAndWrite) {
  expect_fenced_lost_update(run(fenced_lost_key_options("failover:after=acquire")));
}

TEST(NodeCrashFault, FencedEmptyRestartGivesTheOldTokenAgainAndTheOldWriteLandsBetweenTheNewReadAndWrite) {
  expect_fenced_lost_update(run(fenced_lost_key_options("node-crash:nodes=1:restart=now:when=holder")));
}

// warm-up=N park=read (a catalog row's park_holder; issue 25, item 7): the holder
// is parked only after 8 acquisitions, and after its accepted read. The lost
// counter hands out low tokens again; the resource refuses each newcomer below
// the holder's token, the holder staying parked through them, until one draws
// its token once more: both are admitted, a lost update, on every run.
void expect_climb_to_the_holders_token(const nlohmann::json& document) {
  EXPECT_EQ(document["verdict"], "violation") << story(document);
  EXPECT_GE(document["safety"]["lost_updates"].get<int>(), 1) << story(document);
  EXPECT_GE(document["safety"]["stale_writes_rejected"].get<int>(), 1) << "newcomers below its token: " << story(document);
  EXPECT_TRUE(applied(document, "warm-up over: 8 acquisitions")) << story(document);
  EXPECT_TRUE(applied(document, "goes on to its write")) << story(document);
  EXPECT_TRUE(document["faults"][0].value("bit", false)) << story(document);
}

harness::RunOptions warmed_up_options(const std::string& fault) {
  auto options = fenced_lost_key_options(fault);
  options.duration_s = 3;  // 8 sections of 100 ms first
  return options;
}

TEST(FailoverFault, AHolderParkedAfterItsWarmUpAndReadMeetsTheNewcomerThatDrawsItsTokenAgain) {
  expect_climb_to_the_holders_token(run(warmed_up_options("failover:after=acquire:warm-up=8:park=read")));
}

TEST(NodeCrashFault, AHolderParkedAfterItsWarmUpAndReadMeetsTheNewcomerThatDrawsItsTokenAgain) {
  expect_climb_to_the_holders_token(
      run(warmed_up_options("node-crash:nodes=1:restart=now:when=holder:warm-up=8:park=read")));
}

// A warm-up the run never completes parks nobody: the fault did not act, and
// the run is an error that says how many acquisitions it saw, never safe.
TEST(NodeCrashFault, AWarmUpTheRunNeverCompletesIsNotExercised) {
  auto options = fenced_lost_key_options("node-crash:nodes=1:restart=now:when=holder:warm-up=1000");
  options.duration_s = 1;
  const auto document = run(options);
  EXPECT_EQ(document["verdict"], "error") << story(document);
  EXPECT_FALSE(document["faults"][0].value("acted", true)) << story(document);
  EXPECT_NE(document.dump().find("of the 1000 acquisitions its warm-up waits for happened"), std::string::npos)
      << story(document);
}

// When an event of the fault's record was noted (ms), or -1.
double applied_at(const nlohmann::json& document, const std::string& needle) {
  for (const auto& fault : document["faults"])
    for (const auto& event : fault["applied"])
      if (event["what"].get<std::string>().find(needle) != std::string::npos) return event["t_ms"].get<double>();
  return -1;
}

// catch=PATTERN (nemesis/caught_waiters.h): before the fault acts, each
// contender's next matching request parks at its own proxy; once both are
// parked the fault acts, and the parked requests are dropped with their
// connections. The record names every waiter's request, before the act.
nlohmann::json caught_run(const std::string& fault) {
  auto options = run_options("lua-safe-delete", {fault});
  options.clients = 3;
  options.ttl_ms = 2000;
  options.hold_ms = 100;
  options.wait_ms = 30;
  options.duration_s = 2.5;  // the catch (up to 500 ms) and the failover on a loaded machine
  return run(options);
}

std::string applied_text(const nlohmann::json& document, const std::string& prefix) {
  for (const auto& fault : document["faults"])
    for (const auto& event : fault["applied"])
      if (event["what"].get<std::string>().rfind(prefix, 0) == 0) return event["what"].get<std::string>();
  return "";
}

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

void expect_both_waiters_caught_before(const nlohmann::json& document, const std::string& act) {
  const std::string caught = applied_text(document, "caught before the fault acts (SET): ");
  EXPECT_EQ(count_of(caught, "'s SET "), 2u) << "both contenders' SET: " << story(document);
  EXPECT_EQ(caught.find("sent none"), std::string::npos) << caught;
  ASSERT_GE(applied_at(document, act), 0) << story(document);
  EXPECT_LE(applied_at(document, "caught before the fault acts"), applied_at(document, act)) << story(document);
  EXPECT_TRUE(document["faults"][0].value("bit", false)) << story(document);
}

TEST(CaughtWaiters, TheKillCatchesEveryWaitersSetOnItsWay) {
  const auto document = caught_run("node-crash:nodes=1:restart=now:when=holder:catch=SET");
  expect_both_waiters_caught_before(document, "SIGKILL node(s) 0");
}

TEST(CaughtWaiters, TheFailoverCatchesEveryWaitersSetOnItsWay) {
  const auto document = caught_run("failover:after=acquire:catch=SET");
  expect_both_waiters_caught_before(document, "master killed");
}

// A contender that sends no match within the bound was not caught: the
// schedule did not decide the cell, so the fault did not bite, and its matrix
// cell is error ("not exercised", sweeps/cell_class_of_run.cpp), never a class.
TEST(CaughtWaiters, AWaiterThatSendsNoMatchLeavesTheFaultUnbitten) {
  const auto document = caught_run("node-crash:nodes=1:restart=now:when=holder:catch=HGETALL");
  EXPECT_FALSE(document["faults"][0].value("bit", true)) << story(document);
  EXPECT_TRUE(document["faults"][0].value("schedule_missed", false)) << story(document);
  EXPECT_TRUE(applied(document, "caught before the fault acts (HGETALL): nothing; client(s) ")) << story(document);
  EXPECT_NE(document["faults"][0].value("bite", "").find("sent no matching request within 500 ms"), std::string::npos)
      << story(document);
}

// split=PATTERN (nemesis/split_votes.h): with 2 of 5 nodes down, each live node
// answers one contender's first SET after the other's vote: client 0 takes
// nodes 2 and 3, client 1 node 4, and neither round has three. Generation 6
// gives a failed round's votes back and tries again, so one of them wins a
// later round: the split bit, and the lock held.
nlohmann::json split_run(const std::string& pattern, int ttl_ms) {
  auto options = run_options("redlock", {"node-crash:nodes=2:when=start:split=" + pattern});
  options.nodes = 5;
  options.clients = 2;
  options.duration_s = 1.5;
  options.ttl_ms = ttl_ms;
  return run(options);
}

// A ttl of 10 s gives generation 6 a 50 ms node timeout (ttl/200, at most 50): each
// first-round vote stays that long before its failed round gives it back, many polls.
TEST(SplitVotes, EachLiveNodeAnswersOneContenderFirstAndRedlockRecovers) {
  const auto document = split_run("SET", 10'000);
  EXPECT_TRUE(applied(document, "client 0 first on node(s) 2,3, client 1 on 4")) << story(document);
  for (const std::string held : {"client 0's SET locklab:lock", "client 1's SET locklab:lock"})
    EXPECT_TRUE(applied(document, held)) << held << ": " << story(document);
  std::size_t went_on = 0;
  for (const auto& event : document["faults"][0]["applied"])
    went_on += event["what"].get<std::string>().find("goes on to node") != std::string::npos ? 1 : 0;
  EXPECT_EQ(went_on, 3u) << "node 4 for client 0, nodes 2 and 3 for client 1: " << story(document);
  EXPECT_TRUE(document["faults"][0].value("bit", false)) << story(document);
  EXPECT_EQ(document["faults"][0].value("bite", "").rfind("the first round split: ", 0), 0u) << story(document);
  EXPECT_EQ(document["verdict"], "safe") << story(document);
  EXPECT_GT(document["totals"]["acquired"].get<int>(), 0) << "a later round won: " << story(document);
}

// A contender whose request never matches was never held: the round was not
// split, so the fault did not bite and the schedule says it missed (`error`).
TEST(SplitVotes, ARequestThatNeverComesLeavesTheFaultUnbitten) {
  const auto document = split_run("HGETALL", 500);
  EXPECT_FALSE(document["faults"][0].value("bit", true)) << story(document);
  EXPECT_TRUE(document["faults"][0].value("schedule_missed", false)) << story(document);
  EXPECT_NE(document["faults"][0].value("bite", "").find("never came within 500 ms, so the round was not split"),
            std::string::npos)
      << story(document);
  EXPECT_EQ(document["verdict"], "error") << story(document);
}

// A blind DEL (setnx-expire) deletes the contender's key and its holder
// re-enters at once: the contender still goes on as soon as the holder's
// parked section is over (read from the records), not after the patience.
TEST(ClockJumpFault, TheContenderGoesOnAsSoonAsTheHolderLeftEvenIfItReenteredAtOnce) {
  auto options = run_options("setnx-expire", {"clock-jump:offset=30000"});
  options.hold_ms = 100;
  options.wait_ms = 30;
  options.duration_s = 1.5;
  const auto document = run(options);
  EXPECT_EQ(document["verdict"], "violation") << story(document);
  const double parked = applied_at(document, "it waits there until client");
  const double went_on = applied_at(document, "left its section: client");
  ASSERT_GE(parked, 0) << story(document);
  ASSERT_GE(went_on, 0) << story(document);
  // The holder's 100 ms hold, not the 500 ms patience (ttl/2).
  EXPECT_LT(went_on - parked, 400) << story(document);
}

// restart=now reads the servers while the killed one is down, then restarts
// it: a reading after the restart raced the clients, and a library that
// retries its holder's script on the reconnected node refilled the key there
// (the fault read "kept" though the crash had lost it).
TEST(NodeCrashFault, AnImmediateRestartComesOnlyAfterTheServersWereRead) {
  auto options = run_options("lua-safe-delete", {"node-crash:nodes=1:restart=now:when=holder"});
  options.ttl_ms = 2000;
  options.hold_ms = 100;
  options.wait_ms = 30;
  options.duration_s = 1.5;
  const auto document = run(options);
  EXPECT_EQ(document["verdict"], "violation") << story(document);
  const double restarted = applied_at(document, "restarted at once, empty (no persistence), after the reading");
  ASSERT_GE(restarted, 0) << story(document);
  const std::string bite = document["faults"][0].value("bite", "");
  const auto at = bite.find("after the crash at ");
  ASSERT_NE(at, std::string::npos) << bite;
  EXPECT_NE(bite.find("still there on 0 server(s)"), std::string::npos) << bite;
  EXPECT_LE(std::stod(bite.substr(at + std::string("after the crash at ").size())), restarted) << story(document);
}

// patience=MS is how long the parked holder waits for a contender: with a
// lock nobody can take from it (setnx has no TTL to jump past), the holder
// stays inside the whole patience, then the fault says nobody got in.
TEST(ClockJumpFault, TheParkedHolderWaitsItsWholePatienceWhenNobodyGetsIn) {
  auto options = run_options("setnx", {"clock-jump:offset=30000:patience=1500"});
  options.clients = 2;
  options.hold_ms = 20;
  options.wait_ms = 30;
  options.duration_s = 2.5;
  const auto document = run(options);
  const double jumped = applied_at(document, "wall clock jumped");
  const double waited = applied_at(document, "no other client acquired within 1500 ms");
  ASSERT_GE(jumped, 0) << story(document);
  ASSERT_GE(waited, 0) << story(document);
  EXPECT_GE(waited - jumped, 1500) << story(document);
  EXPECT_FALSE(applied(document, "another client acquired")) << story(document);
}

TEST(NodeCrashFault, RedlockSurvivesTwoNodesDown) {
  const auto document = run(run_options("redlock", {"node-crash:nodes=2:restart=never"}));
  EXPECT_EQ(document["verdict"], "safe") << story(document);
  EXPECT_GT(document["totals"]["acquired"].get<int>(), 1) << "3 of 5 nodes still make a quorum\n" << story(document);
  EXPECT_GT(document["node_tally"]["errored"].get<int>(), 0) << story(document);
}

TEST(NodeCrashFault, RedlockImmediateEmptyRestartInTheHoldersMajorityLetsASecondClientIn) {
  for (const char* nodes : {"1", "2"}) {
    const auto document = run(run_options(
        "redlock", {std::string("node-crash:nodes=") + nodes + ":restart=now:holder-nodes=3"}));
    EXPECT_EQ(document["verdict"], "violation") << "nodes=" << nodes << "\n" << story(document);
    EXPECT_TRUE(applied(document, "another client acquired")) << story(document);
  }
}

TEST(NodeCrashFault, RedlockDelayedRestartIsSafe) {
  auto options = run_options("redlock", {"node-crash:nodes=1:restart=after-ttl:holder-nodes=3"});
  options.duration_s = 3.0;
  const auto document = run(options);
  EXPECT_EQ(document["verdict"], "safe") << story(document);
  EXPECT_TRUE(applied(document, "restarted empty after")) << story(document);
}

TEST(NodePauseFault, RedlockWithTwoNodesStoppedTimesOutOnThemAndStaysSafe) {
  const auto document = run(run_options("redlock", {"node-pause:nodes=2"}));
  EXPECT_EQ(document["verdict"], "safe") << story(document);
  EXPECT_GT(document["totals"]["acquired"].get<int>(), 1) << story(document);
  EXPECT_GT(document["node_tally"]["timed_out"].get<int>(), 0) << story(document);
  EXPECT_TRUE(applied(document, "SIGCONT at the end")) << story(document);
}

TEST(ClockJumpFault, LuaSafeDeleteHoldersKeyExpiresOnTheJumpedNode) {
  const auto document = run(run_options("lua-safe-delete", {"clock-jump:offset=30000"}));
  EXPECT_EQ(document["verdict"], "violation") << story(document);
  EXPECT_TRUE(applied(document, "another client acquired")) << story(document);
  // The fault read the jumped node: the key it held before the jump was gone after it.
  const std::string bite = document["faults"][0].value("bite", "");
  EXPECT_NE(bite.find("the key's PTTL there was"), std::string::npos) << bite;
  EXPECT_NE(bite.find(", gone at "), std::string::npos) << bite;
}

TEST(ClockJumpFault, RedlockBreaksOnlyWhenTheJumpedNodeIsInTheHoldersMajority) {
  const auto inside = run(run_options("redlock", {"clock-jump:node=2:offset=30000:holder-nodes=3"}));
  EXPECT_EQ(inside["verdict"], "violation") << story(inside);
  EXPECT_TRUE(applied(inside, "(in client")) << story(inside);
  // Outside the majority the jump touches no lease of the holder's: the race
  // never had its chance, and the run says so (docs/harness.md, "Bite").
  const auto outside = run(run_options("redlock", {"clock-jump:node=4:offset=30000:holder-nodes=3"}));
  EXPECT_EQ(outside["verdict"], "error") << story(outside);
  EXPECT_NE(outside["verdict_reasons"][0].get<std::string>().find("not on that node"), std::string::npos)
      << story(outside);
  EXPECT_TRUE(applied(outside, "(not in client")) << story(outside);
  EXPECT_TRUE(applied(outside, "no other client acquired")) << story(outside);
}

TEST(NetFault, HolderCutOffAfterAcquiringLosesTheLockAfterTheTtl) {
  const auto document = run(run_options("lua-safe-delete", {"net:mode=cut:at=held"}));
  EXPECT_EQ(document["verdict"], "violation") << story(document);
  EXPECT_TRUE(applied(document, "another client acquired")) << story(document);
}

TEST(NetFault, AcquireReplyDelayedBeyondTheTtlIsKeptBySingleServerAndDiscardedByRedlock) {
  auto options = run_options("lua-safe-delete", {"net:mode=delay:ms=1500:dir=down:at=acquire:client=0"});
  options.duration_s = 3.0;
  const auto kept = run(options);
  EXPECT_EQ(kept["verdict"], "violation") << story(kept);
  EXPECT_TRUE(applied(kept, "took the lock on every server")) << story(kept);
  EXPECT_TRUE(applied(kept, "'s acquire returned acquired")) << story(kept);
  options.lock = "redlock";
  const auto discarded = run(options);
  EXPECT_EQ(discarded["verdict"], "safe") << story(discarded);
  EXPECT_TRUE(applied(discarded, "took the lock on every server")) << "its votes did land\n" << story(discarded);
  EXPECT_FALSE(applied(discarded, "'s acquire returned acquired")) << "client 0 never believed it held\n"
                                                                   << story(discarded);
  EXPECT_EQ(discarded["fairness"]["per_client_acquired"][0], 0) << story(discarded);
}

TEST(NetFault, ReleaseDelayedPastExpiryAndAReacquireDeletesTheNextHoldersLock) {
  auto options = run_options("set-nx-px-token", {"net:mode=hold:dir=up:at=release:point=after-get-before-del"});
  options.duration_s = 3.0;
  const auto deleted = run(options);
  EXPECT_EQ(deleted["verdict"], "violation") << story(deleted);
  EXPECT_TRUE(applied(deleted, "a third client acquired")) << story(deleted);
  options.lock = "lua-safe-delete";
  options.faults = {"net:mode=hold:dir=up:at=release"};
  const auto kept = run(options);
  EXPECT_EQ(kept["verdict"], "safe") << story(kept);
  EXPECT_TRUE(applied(kept, "release let through")) << story(kept);
  EXPECT_TRUE(applied(kept, "no other client acquired")) << story(kept);
}

TEST(UnavailableFault, ALostAcquireReplyIsUnknownNeverNotHeld) {
  auto options = run_options("lua-safe-delete", {"unavailable:at=acquire:mode=drop-reply"});
  options.duration_s = 3.0;
  const auto document = run(options);
  EXPECT_EQ(document["verdict"], "safe") << story(document);
  EXPECT_GE(document["totals"]["unknown"].get<int>(), 1) << story(document);
  EXPECT_TRUE(applied(document, "unknown outcome")) << story(document);
}

TEST(UnavailableFault, RefusedAcquireAndFailedReleasesAreCountedAndSafe) {
  const auto refused = run(run_options("lua-safe-delete", {"unavailable:at=acquire:mode=refuse"}));
  EXPECT_EQ(refused["verdict"], "safe") << story(refused);
  EXPECT_GE(refused["totals"]["errors"].get<int>() + refused["totals"]["unknown"].get<int>(), 1) << story(refused);
  auto options = run_options("lua-safe-delete", {"unavailable:at=release:mode=drop-reply"});
  options.duration_s = 3.0;
  const auto lost = run(options);
  EXPECT_EQ(lost["verdict"], "safe") << story(lost);
  EXPECT_GE(lost["totals"]["release_errors"].get<int>(), 1) << story(lost);
}

// The matrix's unavailable-release schedule on the reentrant generation: the
// owner stays cut off after its refused release, so it cannot re-enter the
// hash it left (which would hide the stall); the others wait out its lease.
TEST(UnavailableFault, AReentrantOwnerKeptOffAfterItsRefusedReleaseLeavesTheOthersStalled) {
  auto options = run_options("reentrant-watchdog", {"unavailable:at=release:mode=refuse:until=other-acquired"});
  options.ttl_ms = 500;
  options.hold_ms = 20;
  options.stall_ms = 250;
  options.duration_s = 1.5;
  const auto document = run(options);
  // Once in a while the release call itself returns only as the run ends (the
  // refused links keep it busy): the owner cannot re-enter then either, so the
  // stall is the same, and the fault's "stay refused" note may be missing.
  EXPECT_GE(document["safety"]["stalls"].get<int>(), 1) << story(document);
  EXPECT_TRUE(applied(document, "release failed")) << story(document);
  EXPECT_TRUE(document["faults"][0]["bit"].get<bool>()) << story(document);
}

TEST(TopologyFaults, BadSpecsAreOneLineUsageErrors) {
  for (const auto& [lock, spec] : std::vector<std::pair<std::string, std::string>>{
           {"redlock", "failover"},
           {"lua-safe-delete", "node-crash:nodes=2"},
           {"redlock", "node-crash:holder-nodes=2"},
           {"redlock", "clock-jump:node=5"},
           {"lua-safe-delete", "net"},
           {"lua-safe-delete", "net:mode=delay"},
           {"lua-safe-delete", "net:mode=cut:dir=up"},
           {"lua-safe-delete", "unavailable:mode=maybe"},
           {"lua-safe-delete", "unavailable:until=other-acquired"},
           {"lua-safe-delete", "unavailable:at=release:until=never"},
           {"lua-safe-delete", "unavailable:at=release:mode=drop-reply:until=other-acquired"},
           {"local-mutex", "node-pause"}}) {
    auto document = harness::measure(run_options(lock, {spec}));
    ASSERT_FALSE(document) << spec;
    EXPECT_EQ(document.error().kind, ErrorKind::usage) << spec;
    EXPECT_EQ(document.error().message.find('\n'), std::string::npos) << document.error().message;
  }
}

}  // namespace
}  // namespace locklab::testing
