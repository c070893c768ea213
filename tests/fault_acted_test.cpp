// "A fault that did nothing must never read as safe" (issue 16 §1), for every
// fault of the table (harness/nemesis/fault_registry.cpp fault_table()): each has a case here,
// keyed by its name, whose setup the fault cannot act on.
//   - up front: where the flags tell (the lock servers are not ours: --redis,
//     --sentinel), the run is refused, exit 2, one line, before anything starts;
//   - at run time (our own servers, real redis-server processes): the run ends
//     with verdict error, and the first reasons name the fault that did not act,
//     its record says "acted": false.
// A fault added to the table without a case here fails EveryFaultHasACase.
//
// The run-time setups, and why the fault cannot act in them:
//   at=no-such-point       no lock reaches that step point;
//   holder-crash:times=2   (given first) both clients die as they enter, before
//                          any later fault's hook at locklab:cs-enter or cs-exit;
//   --ops 1 + clock-skew:client=1
//                          client 1 is held back until client 0 holds, and by
//                          then client 0 has claimed the one operation: client 1
//                          never makes an attempt.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/locklab_binary.h"
#include "nemesis/fault_registry.h"

namespace locklab::testing {
namespace {

using nlohmann::json;

struct NotActing {
  std::string spec;                  // the fault under test, as given to --fault
  std::vector<std::string> up_front;  // argument lists refused with exit 2 (empty: the flags cannot tell)
  std::string run;                   // a run that reaches verdict error (empty: none can be built)
};

// Arguments every run-time case shares: few, short sections, a short lease.
const std::string kRun = "run --lock lua-safe-delete --clients 2 --ttl 400 --hold 1 ";
const std::string kBothDie = "--ops 10 --fault holder-crash:times=2 ";                   // before the fault under test
const std::string kClientOneIdle = "--ops 1 --fault clock-skew:client=1:offset=0 ";   // client 1 never attempts

// Refused up front on servers that are not ours (no server answers 127.0.0.1:1: a run would exit 1, not 2).
std::vector<std::string> not_our_servers(const std::string& spec) {
  return {"run --lock lua-safe-delete --redis 127.0.0.1:1 --fault " + spec,
          "run --lock lua-safe-delete --sentinel 127.0.0.1:1 --fault " + spec};
}

std::map<std::string, NotActing> cases() {
  std::map<std::string, NotActing> all;
  auto add = [&](const std::string& name, NotActing c) { all.emplace(name, std::move(c)); };
  add("holder-crash", {"holder-crash:at=no-such-point", {}, kRun + "--ops 10 --fault holder-crash:at=no-such-point"});
  add("holder-pause",
      {"holder-pause:ms=50:at=no-such-point", {}, kRun + "--ops 10 --fault holder-pause:ms=50:at=no-such-point"});
  add("slow-holder", {"slow-holder:ms=50", {}, kRun + kBothDie + "--fault slow-holder:ms=50"});
  add("clock-skew", {"clock-skew:client=1:offset=0", {}, kRun + kClientOneIdle});
  add("random", {"random:count=2", {}, kRun + kBothDie + "--fault random:count=2"});
  add("failover", {"failover", not_our_servers("failover"), kRun + kBothDie + "--fault failover"});
  add("node-crash", {"node-crash", not_our_servers("node-crash"), kRun + kBothDie + "--fault node-crash"});
  add("node-pause", {"node-pause", not_our_servers("node-pause"), ""});  // SIGSTOPs from the start: no run-time case
  add("clock-jump", {"clock-jump", not_our_servers("clock-jump"), kRun + kBothDie + "--fault clock-jump"});
  add("net", {"net:mode=cut:target=holder:at=held", not_our_servers("net:mode=cut:target=holder:at=held"),
              kRun + kBothDie + "--fault net:mode=cut:target=holder:at=held"});
  add("unavailable", {"unavailable:at=release", not_our_servers("unavailable:at=release"),
                      kRun + kBothDie + "--fault unavailable:at=release"});
  return all;
}

TEST(FaultActed, EveryFaultHasACase) {
  const auto all = cases();
  for (const auto& entry : harness::fault_table())
    EXPECT_EQ(all.count(entry.name), 1u) << "fault '" << entry.name << "' has no not-acting case in fault_acted_test";
  for (const auto& [name, c] : all) {
    EXPECT_EQ(c.spec.substr(0, c.spec.find(':')), name);
    EXPECT_TRUE(!c.up_front.empty() || !c.run.empty()) << name << ": a case needs a setup";
  }
}

TEST(FaultActed, RefusedUpFrontWhereTheFlagsTell) {
  for (const auto& [name, c] : cases())
    for (const auto& args : c.up_front) {
      const Outcome outcome = run_locklab(args);
      EXPECT_EQ(outcome.exit_code, 2) << args << ": " << outcome.err;
      EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << args << ": one line";
      EXPECT_NE(outcome.err.find("--fault: " + name + " acts on servers locklab starts itself"), std::string::npos)
          << args << ": " << outcome.err;
    }
}

// One case per run, so a failure names its fault and the runs stay short.
class RunTime : public ::testing::TestWithParam<std::string> {};

TEST_P(RunTime, VerdictIsErrorNamingTheFault) {
  const NotActing c = cases().at(GetParam());
  ASSERT_FALSE(c.run.empty());
  const ScratchDir dir("fault-acted");
  const std::string json_path = dir.path("run.json");
  const Outcome outcome = run_locklab(c.run + " --json '" + json_path + "'");
  EXPECT_EQ(outcome.exit_code, 1) << c.run << ": verdict error is exit 1\n" << outcome.err;
  const std::string text = slurp(json_path);
  ASSERT_FALSE(text.empty()) << c.run << ": no document\n" << outcome.err;
  const json document = json::parse(text);
  EXPECT_EQ(document["verdict"], "error") << document["verdict_reasons"].dump();
  ASSERT_FALSE(document["verdict_reasons"].empty());
  const std::string expected = "fault " + c.spec + " did not act: ";
  bool named = false;
  for (const auto& reason : document["verdict_reasons"])
    named = named || reason.get<std::string>().rfind(expected, 0) == 0;
  EXPECT_TRUE(named) << "no reason starts with '" << expected << "': " << document["verdict_reasons"].dump();
  EXPECT_EQ(document["verdict_reasons"][0].get<std::string>().rfind("fault ", 0), 0u)
      << "the faults that did not act come first: " << document["verdict_reasons"].dump();
  bool recorded = false;
  for (const auto& record : document["faults"])
    if (record["spec"] == c.spec) {
      recorded = true;
      EXPECT_EQ(record["acted"], false) << record.dump();
    }
  EXPECT_TRUE(recorded) << document["faults"].dump();
}

std::vector<std::string> run_time_cases() {
  std::vector<std::string> names;
  for (const auto& [name, c] : cases())
    if (!c.run.empty()) names.push_back(name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(EachFault, RunTime, ::testing::ValuesIn(run_time_cases()),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// The same faults acting: the record says so, and the verdict is the checker's.
TEST(FaultActed, AFaultThatActedIsRecordedAsActing) {
  const ScratchDir dir("fault-acted");
  const std::string json_path = dir.path("run.json");
  const Outcome outcome =
      run_locklab(kRun + "--ops 10 --fault holder-crash --json '" + json_path + "'");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  const json document = json::parse(slurp(json_path));
  ASSERT_EQ(document["faults"].size(), 1u);
  EXPECT_EQ(document["faults"][0]["acted"], true) << document["faults"].dump();
  EXPECT_NE(document["verdict"], "error") << document["verdict_reasons"].dump();
}

// The reasons of a run's document that start with `prefix`, joined (empty: none).
std::string reasons_starting(const json& document, const std::string& prefix) {
  std::string found;
  for (const auto& reason : document["verdict_reasons"])
    if (reason.get<std::string>().rfind(prefix, 0) == 0) found += reason.get<std::string>() + "\n";
  return found;
}

// A run through the binary that writes a document; exit code in *exit_code.
json run_document(const std::string& args, int* exit_code = nullptr) {
  const ScratchDir dir("fault-acted");
  const std::string json_path = dir.path("run.json");
  const Outcome outcome = run_locklab(args + " --json '" + json_path + "'");
  if (exit_code != nullptr) *exit_code = outcome.exit_code;
  const std::string text = slurp(json_path);
  EXPECT_FALSE(text.empty()) << args << ": no document\n" << outcome.err;
  return text.empty() ? json::object() : json::parse(text);
}

// Issue 25 §1: net at=acquire counted as acted in before_run, before its
// target sent anything. Client 1 is held back (clock-skew) until client 0
// holds, and by then client 0 claimed the one operation: client 1 never sends
// a byte, so its delayed links delayed nothing.
TEST(FaultActed, NetAtAcquireActsOnlyOnceTheTargetsTrafficMetTheLinks) {
  const std::string net = "net:mode=delay:ms=1500:dir=down:at=acquire:client=1";
  int exit_code = 0;
  const json idle = run_document(kRun + kClientOneIdle + "--fault " + net, &exit_code);
  EXPECT_EQ(exit_code, 1);
  EXPECT_EQ(idle["verdict"], "error") << idle["verdict_reasons"].dump();
  EXPECT_NE(reasons_starting(idle, "fault " + net + " did not act: ").find("client 1 sent nothing while its links"),
            std::string::npos)
      << idle["verdict_reasons"].dump();
  for (const auto& record : idle["faults"]) {
    if (record["spec"] != net) continue;
    EXPECT_EQ(record["acted"], false) << record.dump();
  }

  // Two operations: client 0's request waits in its held link, so client 1
  // claims the other and its reply is delayed.
  const json acting = run_document(kRun + "--ops 2 --fault " + net);
  ASSERT_EQ(acting["faults"].size(), 1u);
  EXPECT_EQ(acting["faults"][0]["acted"], true) << acting["faults"].dump();
  EXPECT_NE(acting["faults"][0].dump().find("traffic met the faulted links"), std::string::npos)
      << acting["faults"].dump();
}

// Issue 25 §2: a pause that ended because no other client was left was not
// exercised. --ops 1: the holder claimed the one operation, the other client
// finishes at once, and the pause ends for want of anyone to exploit it.
TEST(FaultActed, APauseNobodyCouldExploitDidNotAct) {
  const std::string pause = "holder-pause:until=other-acquired:max=1500";
  int exit_code = 0;
  const json document = run_document(kRun + "--ops 1 --fault " + pause, &exit_code);
  EXPECT_EQ(exit_code, 1);
  EXPECT_EQ(document["verdict"], "error") << document["verdict_reasons"].dump();
  const std::string reason = reasons_starting(document, "fault " + pause + " did not act: ");
  EXPECT_NE(reason.find("not exercised: no other client is left"), std::string::npos) << document["verdict_reasons"].dump();
  ASSERT_EQ(document["faults"].size(), 1u);
  EXPECT_EQ(document["faults"][0]["acted"], false);
}

// Issue 25 §2: every fault stages a race with a contender; with one client
// there is none, and the run is refused before anything starts.
TEST(FaultActed, EveryFaultIsRefusedWithOneClient) {
  for (const auto& [name, c] : cases()) {
    const std::string args = "run --lock lua-safe-delete --clients 1 --ops 3 --fault " + c.spec;
    const Outcome outcome = run_locklab(args);
    EXPECT_EQ(outcome.exit_code, 2) << args << ": " << outcome.err;
    EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << args << ": one line: " << outcome.err;
    EXPECT_NE(outcome.err.find("needs a contender"), std::string::npos) << args << ": " << outcome.err;
  }
  const Outcome skew = run_locklab("run --lock getset-timestamp --clients 1 --fault clock-skew:client=0:offset=2500");
  EXPECT_EQ(skew.exit_code, 2) << skew.err;
  EXPECT_NE(skew.err.find("needs a contender"), std::string::npos) << skew.err;
}

// Issue 25 §2: servers killed and restarted before any client starts lose
// nothing: a spec that can never bite is refused, and says why.
TEST(FaultActed, ANodeRestartedBeforeAnyClientStartsIsRefused) {
  const Outcome outcome =
      run_locklab("run --lock lua-safe-delete --clients 2 --ops 3 --fault node-crash:nodes=1:restart=now:when=start");
  EXPECT_EQ(outcome.exit_code, 2) << outcome.err;
  EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << outcome.err;
  EXPECT_NE(outcome.err.find("before any client holds a key"), std::string::npos) << outcome.err;
}

// Issue 25 §3a: a step point the lock never reaches is a usage error that
// lists the generation's points and the workload's own.
TEST(StepActed, AnUnknownStepPointIsRefusedNamingTheKnownOnes) {
  const Outcome outcome = run_locklab("run --lock lua-safe-delete --clients 2 --ops 20 --step no-such-point:crash");
  EXPECT_EQ(outcome.exit_code, 2) << outcome.err;
  EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << outcome.err;
  for (const char* point : {"no-such-point", "before-release", "before-undo", "locklab:cs-enter", "locklab:cs-exit",
                            "locklab:cs-read"})
    EXPECT_NE(outcome.err.find(point), std::string::npos) << point << ": " << outcome.err;
  // Another generation's point is unknown to this one.
  const Outcome other = run_locklab("run --lock lua-safe-delete --clients 2 --ops 20 --step after-get-before-del:delay=1");
  EXPECT_EQ(other.exit_code, 2) << other.err;
}

// Issue 25 §3c: an adapter calls no step hook of ours; the refusal names the
// protocol step point form that acts there instead.
TEST(StepActed, AStepOnAnAdapterIsRefusedNamingTheRespForm) {
  const Outcome outcome = run_locklab("run --lock ext:redis-py --clients 2 --ops 20 --step after-get-before-del:pause=400");
  EXPECT_EQ(outcome.exit_code, 2) << outcome.err;
  EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << outcome.err;
  EXPECT_NE(outcome.err.find("--fault holder-pause:at=resp:DEL:ms=400"), std::string::npos) << outcome.err;
}

// Issue 25 §3b: a step whose point is never reached did not act: the run is
// error, and the document's step_actions say which step fired.
TEST(StepActed, AStepThatNeverFiredMakesTheRunAnError) {
  // before-undo: only a --wait-replicas guard that found too few replicas gets there.
  int exit_code = 0;
  const json never = run_document(kRun + "--ops 10 --step before-undo:crash", &exit_code);
  EXPECT_EQ(exit_code, 1);
  EXPECT_EQ(never["verdict"], "error") << never["verdict_reasons"].dump();
  EXPECT_FALSE(reasons_starting(never, "step before-undo:crash did not act: ").empty()) << never["verdict_reasons"].dump();
  ASSERT_EQ(never["step_actions"].size(), 1u) << never.dump();
  EXPECT_EQ(never["step_actions"][0]["fired"], 0);
  EXPECT_EQ(never["step_actions"][0]["acted"], false);

  const json fired = run_document(kRun + "--ops 10 --step before-release:delay=1");
  ASSERT_EQ(fired["step_actions"].size(), 1u) << fired.dump();
  EXPECT_GE(fired["step_actions"][0]["fired"].get<int>(), 1) << "once per client that released";
  EXPECT_LE(fired["step_actions"][0]["fired"].get<int>(), 2);
  EXPECT_EQ(fired["step_actions"][0]["acted"], true);
  EXPECT_NE(fired["verdict"], "error") << fired["verdict_reasons"].dump();
}

}  // namespace
}  // namespace locklab::testing
