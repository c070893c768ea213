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
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nemesis/fault_registry.h"
#include "fixtures/locklab_binary.h"

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

}  // namespace
}  // namespace locklab::testing
