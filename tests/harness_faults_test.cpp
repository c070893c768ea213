// Faults (docs/faults.md, "Process and client faults"): the --fault grammar and
// registry, and each fault against real redis-server processes, through
// measure() (the function `locklab run` calls). Every fault is stopped by
// conditions, never by sleeps; every test also checks that the run ended
// without killing anyone (no client left stopped).
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/locklab_binary.h"
#include "nemesis/fault_registry.h"
#include "nemesis/fault_spec.h"
#include "nemesis/nemesis.h"
#include "report/matrix_cells.h"
#include "run/run.h"
#include "sweeps/matrix_columns.h"

namespace locklab::harness {
namespace {

using nlohmann::json;

// --- the grammar and the registry (no servers) ----------------------------------------

TEST(FaultSpec, KeysInAnyOrderAndTheWorkloadsOwnPoints) {
  auto spec = parse_fault_spec("holder-pause:client=2:until=other-acquired:at=locklab:cs-exit");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->name, "holder-pause");
  EXPECT_EQ(spec->params.at("client"), "2");
  EXPECT_EQ(spec->params.at("until"), "other-acquired");
  EXPECT_EQ(spec->params.at("at"), "locklab:cs-exit") << "the ':' inside the point is rejoined";
  EXPECT_EQ(spec->text, "holder-pause:client=2:until=other-acquired:at=locklab:cs-exit");
  EXPECT_TRUE(parse_fault_spec("holder-crash"));
  // A protocol step point's argument test may hold a ':' (resp_watch.h): rejoined too.
  auto resp = parse_fault_spec("holder-pause:at=resp:EVAL~redis:call:ms=10");
  ASSERT_TRUE(resp) << resp.error().message;
  EXPECT_EQ(resp->params.at("at"), "resp:EVAL~redis:call");
  EXPECT_EQ(resp->params.at("ms"), "10");
  EXPECT_FALSE(fault_spec_problem("holder-pause:at=resp:EVAL~redis:call:ms=10"));
  RunOptions options;
  options.lock = "lua-safe-delete";
  options.faults = {"holder-pause:at=resp:EVAL~redis:call:ms=10"};
  EXPECT_TRUE(make_faults(options)) << "the pattern EVAL~redis:call parses";
}

TEST(FaultSpec, MalformedSpecsAreOneLineUsageErrors) {
  for (const char* bad : {"", ":x=1", "Crash", "holder-crash:client", "holder-crash:=1", "holder-crash:client=",
                          "holder-crash:client=1:client=2"}) {
    auto spec = parse_fault_spec(bad);
    ASSERT_FALSE(spec) << bad;
    EXPECT_EQ(spec.error().kind, ErrorKind::usage);
    EXPECT_EQ(spec.error().message.find('\n'), std::string::npos);
    EXPECT_EQ(spec.error().message.rfind("bad fault '", 0), 0u) << spec.error().message;
  }
}

TEST(FaultRegistry, NamesKeysAndValuesAreChecked) {
  EXPECT_FALSE(fault_spec_problem("holder-crash:client=1:times=1"));
  EXPECT_NE(fault_spec_problem("explode")->find("unknown fault 'explode'"), std::string::npos);
  EXPECT_NE(fault_spec_problem("holder-crash:color=red")->find("no key 'color'"), std::string::npos);
  EXPECT_EQ(fault_names().size(), fault_table().size());

  RunOptions options;
  options.lock = "lua-safe-delete";
  options.clients = 3;
  auto check = [&](const std::string& text) -> std::string {
    auto spec = parse_fault_spec(text);
    if (!spec) return spec.error().message;
    auto fault = make_fault(*spec, options);
    return fault ? "" : fault.error().message;
  };
  EXPECT_EQ(check("holder-pause:ms=100"), "");
  EXPECT_EQ(check("slow-holder:ms=100:client=2"), "");
  EXPECT_EQ(check("clock-skew:offset=-500"), "");
  EXPECT_NE(check("holder-pause").find("either ms=MS or until"), std::string::npos);
  EXPECT_NE(check("holder-pause:ms=1:until=expired").find("either"), std::string::npos);
  EXPECT_NE(check("holder-pause:until=later").find("expired, other-acquired or other-inside"), std::string::npos);
  EXPECT_NE(check("holder-crash:client=3").find("between 0 and 2"), std::string::npos);
  EXPECT_NE(check("slow-holder:ms=abc").find("whole number"), std::string::npos);
  EXPECT_NE(check("slow-holder").find("needs ms="), std::string::npos);
  EXPECT_NE(check("random:count=4").find("between 1 and 3"), std::string::npos);
  options.mode = ClientMode::thread;
  EXPECT_NE(check("holder-crash").find("--mode process"), std::string::npos) << "a thread cannot die alone";
  EXPECT_NE(check("holder-pause:ms=5").find("--mode process"), std::string::npos);
  EXPECT_EQ(check("slow-holder:ms=5"), "") << "a slow section needs no process of its own";
}

// The matrix's column names are the faults' names; the run command's old word
// order is still accepted, and names the same fault.
TEST(FaultRegistry, TheOldSpellingsAreAliases) {
  RunOptions options;
  options.lock = "lua-safe-delete";
  options.clients = 2;
  for (const auto& [alias, name] : {std::pair{"crash-holder", "holder-crash"}, {"pause-holder:ms=5", "holder-pause"}}) {
    EXPECT_FALSE(fault_spec_problem(alias)) << alias;
    auto spec = parse_fault_spec(alias);
    ASSERT_TRUE(spec);
    auto fault = make_fault(*spec, options);
    ASSERT_TRUE(fault) << fault.error().message;
    EXPECT_EQ((*fault)->name(), name);
    EXPECT_NE(find_matrix_column(name), nullptr) << "the fault is named as its matrix column";
  }
  bool listed = false;
  for (const auto& line : fault_names()) listed |= line.rfind("holder-crash", 0) == 0 && line.find("(also crash-holder)") != std::string::npos;
  EXPECT_TRUE(listed) << "--help names the alias";
}

class NeedsOwnServers final : public Fault {
 public:
  FaultNeeds needs() const override { return {}; }  // the default: own servers
  nlohmann::json record() const override { return {{"spec", "test"}, {"applied", json::array()}}; }
  bool acted() const override { return false; }
};

TEST(FaultSet, NeedsAreTheUnionOfItsMembers) {
  FaultSet set;
  EXPECT_FALSE(set.needs().own_servers) << "no fault, no needs";
  RunOptions options;
  options.lock = "lua-safe-delete";
  options.faults = {"holder-crash"};
  options.redis = {*redis::Endpoint::parse("127.0.0.1:1")};
  EXPECT_FALSE(validate(options)) << "a process fault acts on our clients, so foreign servers are fine";
  auto faults = make_faults(options);
  ASSERT_TRUE(faults);
  EXPECT_FALSE((*faults)->needs().own_servers);
  EXPECT_TRUE((*faults)->needs().process_clients);
  (*faults)->add(std::make_unique<NeedsOwnServers>());
  EXPECT_TRUE((*faults)->needs().own_servers);
  EXPECT_EQ((*faults)->record().size(), 2u) << "one record per fault";
}

// Which faults read the lock's key (refused for a lock whose key is unknown: review #1).
TEST(FaultSet, TheFaultsThatReadTheLockKeySaySo) {
  RunOptions options;
  options.lock = "redlock";
  options.clients = 3;
  for (const auto& [spec, reads] : std::vector<std::pair<std::string, bool>>{
           {"holder-pause:until=expired", true},
           {"holder-pause:until=other-acquired", false},
           {"holder-pause:ms=100", false},
           {"holder-pause:at=resp:EVALSHA:until=expired", true},
           {"holder-crash", false},
           {"net:mode=cut:at=acquire", true},
           {"net:mode=cut", false},
           {"node-crash", true},
           {"node-crash:when=start", false},
           {"clock-jump", true}}) {
    options.faults = {spec};
    auto faults = make_faults(options);
    ASSERT_TRUE(faults) << spec << ": " << faults.error().message;
    EXPECT_EQ((*faults)->needs().lock_key, reads) << spec;
  }
}

// patience=MS on the faults that park a holder: at least half the lease (a
// shorter one would let a late contender read safe, not liveness), under the
// lease for a lock whose lease lapses (its own expiry would let the contender
// in), any length for a watchdog lock; on node-crash when=start (no holder is
// parked) it is refused. Each refusal says why.
TEST(FaultSet, ThePatienceOfAParkedHolderIsBoundedAndNeedsAHolder) {
  RunOptions options;
  options.clients = 2;
  options.ttl_ms = 2000;
  const auto accepted = [&options](const std::string& lock, const std::string& spec) {
    options.lock = lock;
    options.faults = {spec};
    auto faults = make_faults(options);
    EXPECT_TRUE(faults) << lock << " " << spec << ": " << faults.error().message;
  };
  accepted("lua-safe-delete", "failover:patience=1999");
  accepted("lua-safe-delete", "node-crash:restart=now:patience=1000");
  accepted("reentrant-watchdog", "clock-jump:patience=9000");
  accepted("setnx", "clock-jump:patience=9000");
  for (const auto& [lock, spec, why] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"lua-safe-delete", "clock-jump:patience=999", "between 1000 (half the lease) and 1999 ms (under the lease"},
           {"lua-safe-delete", "failover:patience=2000", "does not renew it"},
           {"reentrant-watchdog", "failover:patience=x", "patience must be between 1000"},
           {"lua-safe-delete", "node-crash:when=start:patience=1500", "patience need when=holder"}}) {
    options.lock = lock;
    options.faults = {spec};
    auto faults = make_faults(options);
    ASSERT_FALSE(faults) << lock << " " << spec;
    EXPECT_NE(faults.error().message.find(why), std::string::npos) << spec << ": " << faults.error().message;
  }
}

// catch=PATTERN (nemesis/caught_waiters.h) on node-crash (when=holder) and
// failover: a protocol pattern; it watches every contender's links, so a
// second watch on them is refused; each refusal says why.
TEST(FaultSet, CatchingTheWaitersNeedsAPatternAHolderAndTheLinksToItself) {
  RunOptions options;
  options.clients = 3;
  options.ttl_ms = 2000;
  options.lock = "lua-safe-delete";
  for (const auto& spec : {"node-crash:restart=now:catch=SET", "failover:catch=EVAL|EVALSHA"}) {
    options.faults = {spec};
    auto faults = make_faults(options);
    ASSERT_TRUE(faults) << spec << ": " << faults.error().message;
    EXPECT_TRUE((*faults)->needs().client_proxies) << spec;
  }
  for (const auto& [specs, why] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"node-crash:when=start:catch=SET"}, "catch needs when=holder"},
           {{"node-crash:restart=now:catch=SET>"}, "catch=SET>: "},
           {{"clock-jump:catch=SET"}, "clock-jump takes no key 'catch'"},
           {{"failover:catch=SET:x"}, "x is not KEY=VALUE"},
           {{"node-crash:restart=now:catch=SET", "holder-pause:at=resp:DEL:client=1:ms=100"}, "a second protocol step point"}}) {
    options.faults = specs;
    auto faults = make_faults(options);
    ASSERT_FALSE(faults) << specs.front();
    EXPECT_NE(faults.error().message.find(why), std::string::npos) << specs.front() << ": " << faults.error().message;
  }
  // A patience that leaves the catch no time under a lapsing lease, and other hosts' waiters
  // (not parked here), are refused too.
  for (const auto& [spec, hosts, why] : std::vector<std::tuple<std::string, int, std::string>>{
           {"node-crash:restart=now:patience=1990:catch=SET", 1, "catch needs at least 50 ms to catch the waiters"},
           {"failover:catch=SET", 2, "catch parks this host's waiters only"}}) {
    options.faults = {spec};
    options.hosts = hosts;
    auto faults = make_faults(options);
    ASSERT_FALSE(faults) << spec;
    EXPECT_NE(faults.error().message.find(why), std::string::npos) << spec << ": " << faults.error().message;
  }
  options.hosts = 1;
  // A Redis Cluster run has no per-client links to catch at.
  options.cluster = true;
  options.faults = {"failover:catch=SET"};
  auto on_cluster = make_faults(options);
  ASSERT_FALSE(on_cluster);
  EXPECT_NE(on_cluster.error().message.find("catch needs per-client links, which a --cluster run does not have"),
            std::string::npos)
      << on_cluster.error().message;
}

// warm-up=N and park=read (a catalog row's park_holder) say when and where a holder is parked:
// never with when=start, nor on a cluster, whose failover parks nobody, nor a warm-up beside
// holder-nodes (its blockers would land on a holder's key mid-run); each takes only its words.
TEST(FaultSet, WarmUpAndParkNeedAParkedHolderOffTheCluster) {
  RunOptions options;
  options.clients = 3;
  options.lock = "fenced";
  for (const char* spec : {"node-crash:nodes=1:restart=now:when=holder:warm-up=8:park=read",
                           "failover:after=acquire:warm-up=8:park=read", "failover:park=enter"}) {
    options.faults = {spec};
    auto faults = make_faults(options);
    EXPECT_TRUE(faults) << spec << ": " << (faults ? "" : faults.error().message);
  }
  for (const auto& [spec, why] : std::vector<std::pair<std::string, std::string>>{
           {"node-crash:nodes=1:when=start:warm-up=3", "warm-up and park need when=holder"},
           {"node-crash:nodes=1:when=start:park=read", "warm-up and park need when=holder"},
           {"node-crash:nodes=1:restart=now:park=write", "park"},
           {"failover:warm-up=1001", "warm-up must be between 0 and 1000 acquisitions"},
           {"failover:warm-up=-1", "warm-up must be between 0 and 1000 acquisitions"},
           {"clock-jump:warm-up=3", "warm-up"}}) {
    options.faults = {spec};
    auto refused = make_faults(options);
    ASSERT_FALSE(refused) << spec;
    EXPECT_NE(refused.error().message.find(why), std::string::npos) << spec << ": " << refused.error().message;
  }
  options.lock = "redlock";
  options.nodes = 5;
  options.faults = {"node-crash:nodes=1:restart=now:when=holder:holder-nodes=3:warm-up=2"};
  auto blockers = make_faults(options);
  ASSERT_FALSE(blockers);
  EXPECT_NE(blockers.error().message.find("warm-up cannot be used with holder-nodes"), std::string::npos)
      << blockers.error().message;
  options.cluster = true;
  options.lock = "lua-safe-delete";
  options.nodes = 1;
  options.faults = {"failover:warm-up=2"};
  auto cluster = make_faults(options);
  ASSERT_FALSE(cluster);
  EXPECT_NE(cluster.error().message.find("cannot be used with --cluster"), std::string::npos) << cluster.error().message;
}

// split=PATTERN (nemesis/split_votes.h) shares the live nodes between clients 0 and 1 when the
// run starts: it needs when=start, two clients, per-client links, and live nodes that two shares
// split with neither a majority. Each refusal is one line.
TEST(FaultSet, SplittingTheVotesNeedsTheStartTwoClientsAndAQuorumLock) {
  RunOptions options;
  options.clients = 2;
  options.nodes = 5;
  options.lock = "redlock";
  options.faults = {"node-crash:nodes=2:when=start:split=SET"};
  auto faults = make_faults(options);
  ASSERT_TRUE(faults) << faults.error().message;
  EXPECT_TRUE((*faults)->needs().client_proxies);
  EXPECT_TRUE((*faults)->needs().lock_key) << "it reads the votes: an adapter must name its key";
  for (const auto& [spec, clients, lock, why] : std::vector<std::tuple<std::string, int, std::string, std::string>>{
           {"node-crash:nodes=2:restart=now:split=SET", 2, "redlock", "split needs when=start"},
           {"node-crash:nodes=2:when=start:split=SET", 3, "redlock", "split shares the live nodes between clients 0 and 1"},
           {"node-crash:nodes=1:when=start:split=SET", 2, "lua-safe-delete", "split needs a quorum lock"},
           {"node-crash:nodes=4:when=start:split=SET", 2, "redlock", "(1 of 5 left alive)"},
           {"node-crash:nodes=3:when=start:split=SET", 2, "redlock", "with a minority down"},
           {"node-crash:nodes=2:when=start:split=SET>", 2, "redlock", "split=SET>: "}}) {
    options.faults = {spec};
    options.clients = clients;
    options.lock = lock;
    auto refused = make_faults(options);
    ASSERT_FALSE(refused) << spec;
    EXPECT_NE(refused.error().message.find(why), std::string::npos) << spec << ": " << refused.error().message;
  }
  options.clients = 2;
  options.lock = "redlock";
  options.faults = {"node-crash:nodes=2:when=start:split=SET"};
  options.hosts = 2;
  auto hosts = make_faults(options);
  ASSERT_FALSE(hosts);
  EXPECT_NE(hosts.error().message.find("split holds this host's contenders only"), std::string::npos) << hosts.error().message;
  options.hosts = 1;
  options.cluster = true;
  auto cluster = make_faults(options);
  ASSERT_FALSE(cluster);
  EXPECT_NE(cluster.error().message.find("split needs per-client links"), std::string::npos) << cluster.error().message;
  // Both contenders' links take the split's watch: an at=resp: fault beside it is a second one.
  options.cluster = false;
  options.faults = {"node-crash:nodes=2:when=start:split=SET", "holder-pause:at=resp:DEL:client=1:ms=100"};
  auto second = make_faults(options);
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message.find("a second protocol step point"), std::string::npos) << second.error().message;
}

// Each client's lock key (a fleet's members may lock different keys), and every known key once.
TEST(NemesisContext, EachClientsLockKeyAndEveryKeyOnce) {
  NemesisContext context;
  context.key = "k";
  EXPECT_EQ(lock_key_of(context, 2), "k") << "no client keys: every lock holds the run's key";
  EXPECT_EQ(lock_keys(context), std::vector<std::string>{"k"});
  context.client_keys = {"k", "mutex:k", "mutex:k", ""};
  EXPECT_EQ(lock_key_of(context, 1), "mutex:k");
  EXPECT_EQ(lock_key_of(context, 3), "") << "unknown";
  EXPECT_EQ(lock_keys(context), (std::vector<std::string>{"k", "mutex:k"}));
}

TEST(FaultRegistry, RandomScheduleIsAFunctionOfTheSeed) {
  RunOptions options;
  options.clients = 6;
  options.ttl_ms = 300;
  const auto a = random_schedule(11, 4, options);
  EXPECT_EQ(a, random_schedule(11, 4, options));
  EXPECT_NE(a, random_schedule(12, 4, options));
  ASSERT_EQ(a.size(), 4u);
  for (const auto& text : a) EXPECT_FALSE(fault_spec_problem(text)) << text;
}

TEST(StepActions, PauseNeedsALengthOrACondition) {
  std::string why;
  EXPECT_FALSE(parse_step_action("locklab:cs-enter:pause", &why)) << "a bare pause had nothing to resume it";
  EXPECT_NE(why.find("pause=MS"), std::string::npos);
  auto timed = parse_step_action("locklab:cs-enter:pause=250:1", &why);
  ASSERT_TRUE(timed) << why;
  EXPECT_EQ(timed->kind, StepAction::Kind::pause);
  EXPECT_EQ(timed->pause.until, PauseRule::Until::time);
  EXPECT_EQ(timed->pause.ms.count(), 250);
  auto until = parse_step_action("after-get-before-del:pause-until=expired", &why);
  ASSERT_TRUE(until) << why;
  EXPECT_EQ(until->pause.until, PauseRule::Until::expired);
  EXPECT_FALSE(parse_step_action("p:pause-until=soon", &why));

  RunOptions options;
  options.lock = "setnx";
  options.mode = ClientMode::thread;
  options.steps = {*timed};
  const auto problem = validate(options);
  ASSERT_TRUE(problem) << "stopping a thread would stop the coordinator with it";
  EXPECT_NE(problem->find("--mode process"), std::string::npos) << *problem;
}

// --- faults against real servers --------------------------------------------------------

// A short run: 3 clients, a 300 ms lease, a few dozen attempts.
RunOptions small_run(const std::string& lock, std::vector<std::string> faults) {
  RunOptions options;
  options.lock = lock;
  options.clients = 3;
  options.ops = 40;
  options.ttl_ms = 300;
  options.faults = std::move(faults);
  return options;
}

json measured(const RunOptions& options, Nemesis* nemesis = nullptr) {
  auto document = measure(options, nemesis);
  EXPECT_TRUE(document) << (document ? "" : document.error().message);
  if (!document) return json::object();
  EXPECT_EQ((*document)["totals"]["killed_clients"], 0) << "every client came back by itself: none left stopped";
  return *document;
}

std::string applied_text(const json& d) {
  std::string all;
  for (const auto& fault : d["faults"])
    for (const auto& event : fault["applied"]) all += event["what"].get<std::string>() + "\n";
  return all;
}

// A client that fails mid-run (here: a thread whose step hook throws once it
// is inside) leaves its share of the run missing. That must never read as
// "safe": it used to vanish with only a line on stderr.
class ThrowsInside : public Nemesis {
 public:
  std::string name() const override { return "throws-inside"; }
  StepHook client_step_hook(int client) override {
    if (client != 0) return {};
    return [](std::string_view point) {
      if (point == kCsEnter) throw std::runtime_error("injected failure inside the critical section");
    };
  }
};

TEST(ClientFailure, AClientThatThrowsAfterTheBarrierMakesTheVerdictError) {
  RunOptions options = small_run("lua-safe-delete", {});
  options.mode = ClientMode::thread;
  ThrowsInside nemesis;
  const json d = measured(options, &nemesis);
  EXPECT_EQ(d["verdict"], "error") << d["verdict_reasons"];
  EXPECT_EQ(d["totals"]["failed_clients"], 1);
  EXPECT_NE(d["verdict_reasons"].dump().find("failed during the run"), std::string::npos) << d["verdict_reasons"];
}

TEST(CrashHolder, SetnxDeadlocksAndLeavesAKeyWithoutTtl) {
  RunOptions options = small_run("setnx", {"holder-crash"});
  options.ops.reset();
  options.duration_s = 1.2;
  options.wait_ms = 100;
  const json d = measured(options);
  EXPECT_EQ(d["verdict"], "deadlock") << d["verdict_reasons"];
  EXPECT_EQ(d["safety"]["keys_left_without_ttl"], 1);
  EXPECT_EQ(d["totals"]["crashed_clients"], 1);
  EXPECT_TRUE(d["safety"]["unavailability_open"].get<bool>()) << "nobody ever acquires again";
  EXPECT_NE(applied_text(d).find("killed at locklab:cs-enter"), std::string::npos) << d["faults"];
  EXPECT_EQ(d["config"]["faults"], json::array({"holder-crash"}));
}

// Issue 25 §4: with the default flags the stall threshold (3 x ttl = 6 s)
// outlasts the 3 s run, so no stall is found; the evidence still says
// deadlock: a key with no expiry, its owner dead inside, the other kept out.
TEST(CrashHolder, SetnxDeadlocksWithDefaultFlagsFromTheEvidence) {
  RunOptions options;
  options.lock = "setnx";
  options.clients = 2;
  options.faults = {"holder-crash"};
  const json d = measured(options);
  EXPECT_EQ(d["verdict"], "deadlock") << d["verdict_reasons"];
  EXPECT_EQ(d["safety"]["stalls"], 0) << "the run is shorter than the stall threshold";
  EXPECT_EQ(d["safety"]["keys_left_without_ttl"], 1);
  EXPECT_NE(d["verdict_reasons"].dump().find("died inside its section"), std::string::npos) << d["verdict_reasons"];
}

// Issue 25 §4: a crashed holder of a TTL lock is no deadlock: its key expires.
TEST(CrashHolder, ATtlLocksDeadHolderIsNoDeadlock) {
  RunOptions options;
  options.lock = "lua-safe-delete";
  options.clients = 2;
  options.duration_s = 1.0;
  options.ttl_ms = 300;
  options.faults = {"holder-crash"};
  const json d = measured(options);
  EXPECT_EQ(d["verdict"], "safe") << d["verdict_reasons"];
  EXPECT_EQ(d["safety"]["keys_left_without_ttl"], 0);
}

// Issue 25 §5a: a holder that crashes at locklab:cs-enter ends its section
// there (it stamps its death just before _exit), not when the coordinator
// reaps it. With a 1 ms lease and no pause between attempts the next holder
// used to come in while the dead one was being reaped: an overlap with the
// dead client, and the live occupancy counting it. 40 operations: the
// document's timeline shows the sections.
TEST(CrashHolder, ACrashedHoldersSectionEndsAtItsDeathNotAtTheReaping) {
  for (int run = 0; run < 3; ++run) {
    RunOptions options = small_run("lua-safe-delete", {"holder-crash"});
    options.ttl_ms = 1;
    options.hold_ms = 0;
    options.retry_ms = 0;
    const json d = measured(options);
    ASSERT_EQ(d["faults"][0]["applied"].size(), 1u) << d["faults"];
    const json& killed = d["faults"][0]["applied"][0];
    const int dead = std::stoi(killed["what"].get<std::string>().substr(std::string("client ").size()));
    const double died_ms = killed["t_ms"];
    double dead_enter = -1, dead_exit = -1;
    for (const auto& section : d["timeline"]["sections"])
      if (section[0] == dead) dead_enter = section[1], dead_exit = section[2];
    // The timeline starts 20 sections before the first overlap: one between
    // live holders (a 1 ms lease lost for real) may leave the early death out.
    if (dead_enter < 0 && d["timeline"]["first_section"] > 0) continue;
    ASSERT_GE(dead_enter, 0) << d["timeline"];
    EXPECT_LE(dead_exit, died_ms + 0.05) << "run " << run << ": the section ends at the death, not at the reaping";
    for (const auto& section : d["timeline"]["sections"]) {
      if (section[0] == dead || section[1].get<double>() <= died_ms + 0.05) continue;
      EXPECT_GE(section[1].get<double>(), dead_exit) << "run " << run << ": entered after the death, no overlap";
    }
    // The verdict itself is not asserted: a 1 ms lease may lapse under a live
    // holder too, a real overlap between live clients.
    EXPECT_EQ(d["verdict_reasons"].dump().find("live occupancy"), std::string::npos)
        << "run " << run << ": the dead client left the occupancy as it died: " << d["verdict_reasons"];
  }
}

TEST(CrashHolder, LuaSafeDeleteRecoversAfterAboutOneTtl) {
  const json d = measured(small_run("lua-safe-delete", {"holder-crash"}));
  EXPECT_EQ(d["verdict"], "safe") << d["verdict_reasons"];
  EXPECT_EQ(d["totals"]["crashed_clients"], 1);
  ASSERT_TRUE(d["safety"]["unavailability_ms"].is_number()) << d["safety"];
  const double window = d["safety"]["unavailability_ms"];
  // The dead holder's key must expire first; the coordinator sees the death a
  // few ms after it happened, hence the small slack below the lease.
  EXPECT_GE(window, 300 - 20);
  EXPECT_LT(window, 3 * 300) << "the next holder comes once the lease is over, not a stall later";
  EXPECT_FALSE(d["safety"]["unavailability_open"].get<bool>());
}

TEST(CrashHolder, NoCrashMeansNoUnavailability) {
  const json d = measured(small_run("lua-safe-delete", {}));
  EXPECT_TRUE(d["safety"]["unavailability_ms"].is_null());
  EXPECT_EQ(d["faults"], json::array());
}

TEST(PauseHolder, LuaSafeDeleteOverlapsTheNextHolder) {
  const json d = measured(small_run("lua-safe-delete", {"holder-pause:until=other-acquired"}));
  EXPECT_EQ(d["verdict"], "violation") << d["verdict_reasons"];
  EXPECT_GE(d["safety"]["max_concurrent_holders"].get<int>(), 2) << "the stopped holder still counts as inside";
  const std::string what = applied_text(d);
  EXPECT_NE(what.find("SIGSTOP client"), std::string::npos) << what;
  EXPECT_NE(what.find("another client acquired and wrote"), std::string::npos) << what;
}

TEST(PauseHolder, SigstopFreezesTheWatchdogToo) {
  // Generation 5's watchdog renews while the process runs; SIGSTOP stops it
  // with everything else, so the lease runs out under a live holder.
  const json d = measured(small_run("reentrant-watchdog", {"holder-pause:until=other-acquired"}));
  EXPECT_EQ(d["verdict"], "violation") << d["verdict_reasons"];
}

TEST(PauseHolder, FencedRejectsTheStaleWrite) {
  const json d = measured(small_run("fenced", {"holder-pause:until=other-acquired"}));
  EXPECT_EQ(d["verdict"], "safe") << d["verdict_reasons"];
  EXPECT_GE(d["safety"]["stale_writes_rejected"].get<int>(), 1) << "the resumed holder's token is older";
  EXPECT_EQ(d["safety"]["lost_updates"], 0);
}

TEST(PauseHolder, ATimedPauseLongerThanTheLeaseOverlaps) {
  // No client=: the first holder is stopped (a fixed client may not get the
  // lock before the others used up the attempts).
  const json d = measured(small_run("lua-safe-delete", {"holder-pause:ms=700"}));
  EXPECT_EQ(d["verdict"], "violation") << d["verdict_reasons"];
  EXPECT_NE(applied_text(d).find("SIGSTOP client"), std::string::npos) << d["faults"];
  EXPECT_NE(applied_text(d).find(": after"), std::string::npos) << d["faults"];
}

// The key is gone at the server a little before its section's entry + ttl
// (the SET landed before its reply came back), and the bite judges the lapse by
// that entry. Resuming at the first sight of the gone key went on "before its
// lease had ended" on a loaded machine (CI, stop 39): the pause lasts a whole
// ttl as well. Three runs: the old resume fell short in about one run in three.
TEST(PauseHolder, UntilExpiredResumesOnceTheKeyIsGoneAndTheLeaseIsOver) {
  for (int run = 0; run < 3; ++run) {
    const json d = measured(small_run("lua-safe-delete", {"holder-pause:until=expired"}));
    const std::string what = applied_text(d);
    const std::string said = "the key expired, after ";
    const auto at = what.find(said);
    ASSERT_NE(at, std::string::npos) << d["faults"];
    EXPECT_GE(std::stoi(what.substr(at + said.size())), 300) << "run " << run << ": " << what;
    EXPECT_TRUE(d["faults"][0]["bit"].get<bool>()) << "run " << run << ": " << d["faults"][0]["bite"];
    EXPECT_NE(d["verdict"], "error") << "run " << run << ": " << d["verdict_reasons"];
  }
}

TEST(PauseHolder, AConditionThatNeverHoldsEndsAtItsBound) {
  // setnx never expires: the pause ends at max=, and the run still ends on its own.
  const json d = measured(small_run("setnx", {"holder-pause:until=expired:max=400"}));
  const std::string what = applied_text(d);
  EXPECT_TRUE(what.find("pause bound") != std::string::npos || what.find("no other client") != std::string::npos)
      << what;
}

TEST(SlowHolder, TheWatchdogKeepsASlowHolderSafe) {
  const json d = measured(small_run("reentrant-watchdog", {"slow-holder:ms=1000"}));
  EXPECT_EQ(d["verdict"], "safe") << d["verdict_reasons"];
  EXPECT_NE(applied_text(d).find("1000 ms longer"), std::string::npos) << d["faults"];
}

TEST(SlowHolder, WithoutAWatchdogTheLeaseRunsOut) {
  const json d = measured(small_run("lua-safe-delete", {"slow-holder:ms=1000"}));
  EXPECT_EQ(d["verdict"], "violation") << d["verdict_reasons"];
}

TEST(ClockSkew, AContenderAheadStealsAGetsetTimestampLock) {
  // The skewed client 1 steals whenever client 0 holds. Client 0 must get the
  // lock at all: client 1 re-acquires right after its own release, so client 0
  // polls every ms (a ~1-in-10 chance per handoff, over ~100 handoffs).
  RunOptions options = small_run("getset-timestamp", {"clock-skew:client=1:offset=5000"});
  options.clients = 2;
  options.ops = 200;
  options.hold_ms = 5;
  options.wait_ms = 200;
  options.retry_ms = 1;
  const json d = measured(options);
  EXPECT_EQ(d["verdict"], "violation") << d["verdict_reasons"];
  EXPECT_GT(d["safety"]["overlaps"].get<int>(), 0);
}

TEST(ClockSkew, TheServersLeaseIgnoresClientClocks) {
  RunOptions options = small_run("lua-safe-delete", {"clock-skew:client=1:offset=5000"});
  options.clients = 2;
  options.ops = 100;
  options.hold_ms = 5;
  options.wait_ms = 200;
  const json d = measured(options);
  EXPECT_EQ(d["verdict"], "safe") << d["verdict_reasons"];
}

TEST(StepPause, TheCoordinatorResumesAStepPause) {
  // Used to SIGSTOP the client with nothing to resume it: verdict error every time.
  // Any client, once each: every client is stopped at its first entry for
  // 600 ms (2 leases), so the first one's section spans the next holders'.
  RunOptions options = small_run("lua-safe-delete", {});
  options.step_specs = {"locklab:cs-enter:pause=600"};
  options.steps = {*parse_step_action(options.step_specs[0], nullptr)};
  const json timed = measured(options);
  EXPECT_EQ(timed["verdict"], "violation") << timed["verdict_reasons"];
  EXPECT_EQ(timed["nemesis"], "step-actions");

  // Every client stops at its first entry until another one wrote; nobody
  // can, so each pause ends at its bound (10 x ttl) -- and the run ends by itself.
  options.step_specs = {"locklab:cs-enter:pause-until=other-acquired"};
  options.steps = {*parse_step_action(options.step_specs[0], nullptr)};
  const json until = measured(options);
  EXPECT_EQ(until["verdict"], "violation") << until["verdict_reasons"];
}

TEST(CheckerUnderFaults, ACrashedClientsOverlapStillCounts) {
  // The first holder overstays its lease (slow, 1 s); every client dies at
  // cs-exit, before releasing. The holders after the first enter while it
  // sleeps; all sections end at their client's death, and the overlaps they
  // had are still on record.
  RunOptions options = small_run("lua-safe-delete", {"slow-holder:ms=1000", "holder-crash:at=locklab:cs-exit:times=3"});
  const json d = measured(options);
  EXPECT_EQ(d["verdict"], "violation") << d["verdict_reasons"];
  EXPECT_EQ(d["totals"]["crashed_clients"], 3);
  EXPECT_GE(d["safety"]["overlaps"].get<int>(), 1);
}

TEST(RandomFaults, OneSeedOneScheduleAnotherSeedAnother) {
  auto schedule_of = [](std::uint64_t seed) {
    RunOptions options = small_run("lua-safe-delete", {"random:count=2"});
    options.clients = 4;
    options.seed = seed;
    const json d = measured(options);
    // A drawn pause may find nobody left to exploit it (issue 25: not
    // exercised, so random did not act): the only error allowed.
    if (d["verdict"] == "error") {
      EXPECT_EQ(d["verdict_reasons"][0].get<std::string>().rfind("fault random:count=2 did not act: ", 0), 0u)
          << d["verdict_reasons"];
    }
    EXPECT_EQ(d["faults"].size(), 1u);
    return d["faults"][0]["schedule"];
  };
  const json first = schedule_of(3);
  EXPECT_EQ(first.size(), 2u);
  EXPECT_EQ(schedule_of(3), first) << "the same seed replays the same schedule";
  EXPECT_NE(schedule_of(4), first);
}

// --- the CLI ---------------------------------------------------------------------

TEST(FaultCli, BadSpecsExit2WithOneLine) {
  for (const char* args : {"run --lock setnx --fault explode", "run --lock setnx --fault holder-crash:color=red",
                           "run --lock setnx --fault holder-pause:ms=x", "run --lock setnx --clients 2 --fault holder-crash:client=5",
                           "run --lock setnx --mode thread --fault holder-pause:ms=5",
                           "run --lock setnx --fault random:count=9"}) {
    const auto run = testing::run_locklab(args);
    EXPECT_EQ(run.exit_code, 2) << args << ": " << run.err;
    ASSERT_FALSE(run.err.empty()) << args;
    EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << args << ": " << run.err;
  }
  EXPECT_EQ(testing::run_locklab("run --help").exit_code, 0);
}

TEST(FaultCli, TheFaultRunsFromTheCommandLine) {
  const auto run = testing::run_locklab(
      "run --lock lua-safe-delete --clients 3 --ops 30 --ttl 300 --fault holder-crash --fault slow-holder:ms=600");
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

// `locklab run --fault` says which fault acted and when: one line per recorded
// action, in time order, after the summary (issue 19 §1).
TEST(FaultCli, EveryFaultActionIsPrintedWithItsTimeInOrder) {
  const auto run = testing::run_locklab(
      "run --lock lua-safe-delete --clients 3 --ops 30 --ttl 300 --fault holder-crash --fault slow-holder:ms=600");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto heading = run.out.find("fault actions (ms after the clients started, in time order):\n");
  ASSERT_NE(heading, std::string::npos) << run.out;
  EXPECT_LT(run.out.find("lua-safe-delete: "), heading) << "after the summary";
  static const std::regex line(R"(^ +(-?[0-9]+\.[0-9]{2}) ms  (holder-crash|slow-holder:ms=600): (.+)$)");
  std::istringstream lines(run.out.substr(heading));
  std::string text;
  std::getline(lines, text);  // the heading
  double previous = -1e9;
  std::set<std::string> faults;
  while (std::getline(lines, text)) {
    std::smatch match;
    ASSERT_TRUE(std::regex_match(text, match, line)) << text << "\n" << run.out;
    const double t_ms = std::stod(match[1].str());
    EXPECT_GE(t_ms, previous) << "in time order:\n" << run.out;
    previous = t_ms;
    faults.insert(match[2].str());
  }
  EXPECT_EQ(faults, (std::set<std::string>{"holder-crash", "slow-holder:ms=600"})) << "each fault's actions";
}

}  // namespace
}  // namespace locklab::harness
