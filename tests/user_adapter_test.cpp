// A lock of the user's own in every view (issue 26, "Your lock, first-class"):
// through the real binary, a correct compare-and-delete lock in python
// (tests/adapters/cad_lock.py), declared in a catalog of the user's
// (tests/adapters/user_catalog.json, the shipped catalog's format), runs in
// `matrix` (its classes observed, no expectation to differ from, its nearest
// generation named) and in `fleets`; `run --fleet` gives two unshipped
// labels two programs; each usage error is one line and exit 2. The matrix,
// fleets and runs start their own redis-servers on free ports. Needs Debian's
// python3-redis (skipped with a message without it).
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/locklab_binary.h"

namespace locklab::harness {
namespace {

using nlohmann::json;
using testing::run_locklab;
using testing::ScratchDir;

const std::string kAdapters = LOCKLAB_TEST_ADAPTERS_DIR;
const std::string kCatalog = kAdapters + "/user_catalog.json";
const std::string kCad = "/usr/bin/python3 " + kAdapters + "/cad_lock.py";

bool python_redis_installed() { return std::system("/usr/bin/python3 -c 'import redis' >/dev/null 2>&1") == 0; }

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// A usage error: exit 2, and one line on stderr holding `words`.
void expect_one_line(const testing::Outcome& run, const std::string& words) {
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << "not one line: " << run.err;
  EXPECT_NE(run.err.find(words), std::string::npos) << run.err;
}

TEST(UserAdapterMatrix, ACatalogLockShowsItsClassesAndItsNearestGeneration) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  ScratchDir out("locklab-user-matrix");
  const auto run = run_locklab("matrix --quick --catalog " + kCatalog +
                               " --lock ext:team-cad --fault holder-crash --fault release-race --out " + out.str());
  // No expectation is written for it: whatever it shows, nothing differs (exit 0, never 3).
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const json crash = read_json(out.path("cells/ext:team-cad__holder-crash.json"));
  const json race = read_json(out.path("cells/ext:team-cad__release-race.json"));
  // The dead holder's key lapses after its lease; the late compare-and-delete deletes nothing.
  EXPECT_EQ(crash.value("observed", ""), "liveness") << crash.dump();
  EXPECT_EQ(race.value("observed", ""), "safe") << race.dump();
  for (const auto* cell : {&crash, &race}) {
    EXPECT_TRUE(cell->value("matches", false));
    EXPECT_NE(cell->value("expected", "").find("none written"), std::string::npos) << cell->value("expected", "");
  }
  // Its release's EVAL was parked where the catalog's release_window says.
  EXPECT_NE(race.value("faults", json::array()).dump().find("resp:EVAL~cad_release"), std::string::npos);
  const json matrix = read_json(out.path("matrix.json"));
  const json nearest = matrix.value("nearest_generations", json::array());
  ASSERT_EQ(nearest.size(), 1u) << matrix.dump();
  EXPECT_EQ(nearest[0].value("library", ""), "ext:team-cad");
  EXPECT_EQ(nearest[0].value("generation", json()), "lua-safe-delete") << nearest[0].dump();
  const std::string page = testing::slurp(out.path("matrix.html"));
  EXPECT_NE(page.find("ext:team-cad behaves like generation 4 lua-safe-delete"), std::string::npos);
  EXPECT_EQ(run.err.find("expected"), std::string::npos) << run.err;  // no "differs" line for it
}

TEST(UserAdapterMatrix, AColumnNeedingAStepPointItDidNotDeclareIsNotApplicableSayingWhy) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  ScratchDir out("locklab-user-matrix-na");
  // Its init_ok (read before the row is planned) declares no step point; a catalog entry without them neither.
  auto run = run_locklab("matrix --quick --lock ext:mine --adapter 'mine=" + kCad + "' --fault release-race --fault "
                         "expire-gap --out " + out.str());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const json race = read_json(out.path("cells/ext:mine__release-race.json"));
  EXPECT_EQ(race.value("observed", ""), "n/a");
  EXPECT_NE(race.value("not_applicable", "").find("its init_ok declares no release_window"), std::string::npos)
      << race.dump();
  const json gap = read_json(out.path("cells/ext:mine__expire-gap.json"));
  EXPECT_NE(gap.value("not_applicable", "").find("its init_ok declares no acquire_gap"), std::string::npos)
      << gap.dump();
  // The page keeps its n/a cells with the reason (a generation's n/a cells it leaves out).
  EXPECT_NE(testing::slurp(out.path("matrix.md")).find("n/a: ext:mine: its init_ok declares no release_window"),
            std::string::npos);
  std::ofstream(out.path("no_window.json"))
      << R"({"peers": [{"name": "no-window", "adapter": ["/usr/bin/python3", ")" << kAdapters
      << R"(/cad_lock.py"], "key": "{key}", "capabilities": {"expires": true}}]})";
  run = run_locklab("matrix --quick --catalog " + out.path("no_window.json") + " --lock ext:no-window --fault "
                    "release-race --out " + out.path("second"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const json declared = read_json(out.path("second/cells/ext:no-window__release-race.json"));
  EXPECT_NE(declared.value("not_applicable", "").find("its catalog entry declares no release_window"),
            std::string::npos)
      << declared.dump();
}

// A user's row whose catch_waiters names a column that cannot catch its waiters (only failover,
// node-restart and node-minority do) is refused before any cell runs, as a shipped row's is: one line, exit 2.
TEST(UserAdapterMatrix, AColumnThatCannotCatchItsWaitersIsRefusedBeforeAnyCell) {
  ScratchDir out("locklab-user-matrix-catch");
  std::ofstream(out.path("catch.json"))
      << R"({"peers": [{"name": "catcher", "adapter": ["/usr/bin/python3", ")" << kAdapters
      << R"(/cad_lock.py"], "key": "{key}", "capabilities": {"expires": true, "owner_checked_release": true}, )"
      << R"("catch_waiters": {"holder-crash": "SET"}, "catch_waiters_reason": "a reason"}]})";
  const auto run = run_locklab("matrix --quick --catalog " + out.path("catch.json") +
                               " --lock ext:catcher --fault holder-crash --out " + out.path("m"));
  expect_one_line(run, "ext:catcher catches the waiters of 'holder-crash': only failover, node-restart and node-minority catch them");
  EXPECT_FALSE(std::ifstream(out.path("m/matrix.json")).good()) << "refused before any cell ran";
}

// A lock that refuses every acquire, before any fault as under one: under node-minority nothing
// is acquired, and that reads `liveness` (unavailable under the fault) only for a lock whose probe
// got the lock before the run; this one never did: `error`, a broken lock (sweeps/matrix.cpp).
TEST(UserAdapterMatrix, ALockThatNeverAcquiresIsErrorNotLivenessUnderAFault) {
  ScratchDir out("locklab-user-matrix-refuser");
  std::ofstream(out.path("refuser.json"))
      << R"({"peers": [{"name": "refuser", "adapter": ["/usr/bin/python3", ")" << kAdapters
      << R"(/refuses_every_acquire.py"], "key": "{key}", "capabilities": {"expires": true, )"
      << R"("owner_checked_release": true, "multi_node": true}}]})";
  const auto run = run_locklab("matrix --quick --catalog " + out.path("refuser.json") + " --lock ext:refuser --fault "
                               "node-minority --out " + out.path("m"));
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;  // a cell that could not be measured
  const json cell = read_json(out.path("m/cells/ext:refuser__node-minority.json"));
  EXPECT_EQ(cell.value("observed", ""), "error") << cell.dump();
  EXPECT_FALSE(cell["run"]["adapters"]["ext:refuser"].value("probe_acquired", true)) << cell.dump();
  EXPECT_TRUE(cell["run"]["safety"].value("every_acquire_refused", false)) << cell.dump();
}

TEST(UserAdapterMatrix, AnAdapterDeclaresItsReleaseWindowInItsInitOk) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  ScratchDir out("locklab-user-matrix-init-ok");
  const auto run = run_locklab("matrix --quick --lock ext:mine --adapter 'mine=" + kCad + " --declare' --fault "
                               "release-race --out " + out.str());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const json race = read_json(out.path("cells/ext:mine__release-race.json"));
  EXPECT_EQ(race.value("observed", ""), "safe") << race.dump();
  EXPECT_NE(race.value("faults", json::array()).dump().find("resp:EVAL~cad_release"), std::string::npos);
  // The replay line gives the adapter again, as the matrix read its init_ok: an entry of the
  // catalog it wrote beside the cells.
  EXPECT_NE(race["run"]["config"].value("command", "").find("--catalog " + out.path("declared_catalog.json")),
            std::string::npos)
      << race["run"]["config"].dump();
  const json declared = read_json(out.path("declared_catalog.json"));
  EXPECT_EQ(declared["peers"][0].value("release_window", ""), "resp:EVAL~cad_release") << declared.dump();

  // A malformed step point in init_ok is a usage error, as in a catalog: not
  // an "init_ok could not be read" that turns its columns n/a, exit 0.
  const auto bad = run_locklab("matrix --quick --lock ext:mine --adapter 'mine=" + kCad + " --declare-badly' --fault "
                               "release-race --out " + out.path("bad"));
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("must be empty or a protocol step point resp:PATTERN"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
}

// A cell's replay line lays out the servers the cell had: `run --adapter` hears
// init_ok only after its servers are up, so a lock declaring multi_node there is
// given again by the catalog the matrix wrote. declares_in_init_ok.py claims
// multi_node but locks one server only: the cell and its replay both lay out
// five servers and both find its key on one of them (before: the replay ran on one).
TEST(UserAdapterMatrix, AReplayLineLaysOutTheServersOfItsCell) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  ScratchDir out("locklab-user-replay");
  const auto matrix = run_locklab("matrix --quick --lock ext:team --adapter 'team=/usr/bin/python3 " + kAdapters +
                                  "/declares_in_init_ok.py --claim multi_node' --fault release-race --out " + out.str());
  EXPECT_EQ(matrix.exit_code, 1) << matrix.out << matrix.err;  // the cell could not judge: error
  const json cell = read_json(out.path("cells/ext:team__release-race.json"))["run"];
  const json entry = read_json(out.path("declared_catalog.json"))["peers"][0];
  EXPECT_TRUE(entry["capabilities"].value("multi_node", false)) << entry.dump();
  EXPECT_EQ(entry.value("key", ""), "team:{key}") << entry.dump();
  std::string line = cell["config"].value("command", "");
  ASSERT_EQ(line.rfind("locklab run ", 0), 0u) << line;
  const auto replay = run_locklab(line.substr(std::string("locklab ").size()) + " --json " + out.path("replay.json"));
  const json again = read_json(out.path("replay.json"));
  ASSERT_TRUE(again.is_object()) << replay.err;
  EXPECT_EQ(again["redis"]["endpoints"].size(), 5u) << again["redis"].dump();
  EXPECT_EQ(cell["redis"]["endpoints"].size(), 5u) << cell["redis"].dump();
  EXPECT_EQ(again.value("verdict", ""), cell.value("verdict", "")) << again.dump();
  EXPECT_NE(again.value("verdict_reasons", json::array()).dump().find("is on 1 of 5 lock servers"), std::string::npos);
}

// A clock jump past the run's ttl but not past the key's own lease (the
// adapter sets 20 x ttl: the PTTL the fault reads on the node just before
// the jump) takes nothing from the holder: the race never had its chance,
// and the run says so (`error`), whatever the lock did meanwhile.
TEST(UserAdapterRun, AClockJumpShorterThanTheKeysOwnLeaseIsNotExercised) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  ScratchDir out("locklab-user-long-lease");
  const auto run = run_locklab("run --lock ext:long --adapter 'long=" + kCad + " --lease-times 20' --clients 2 "
                               "--duration 2 --ttl 500 --hold 100 --wait 30 --retry 5 --oracle "
                               "--fault clock-jump:offset=5000 --json " + out.path("run.json"));
  const json document = read_json(out.path("run.json"));
  ASSERT_TRUE(document.is_object()) << run.out << run.err;
  EXPECT_EQ(document.value("verdict", ""), "error") << document.dump();
  const json fault = document["faults"][0];
  EXPECT_FALSE(fault.value("bit", true)) << fault.dump();
  const std::string bite = fault.value("bite", "");
  EXPECT_NE(bite.find("the key's PTTL there was"), std::string::npos) << bite;
  EXPECT_NE(bite.find(": not past that lease"), std::string::npos) << bite;
}

TEST(UserAdapterFleets, ACatalogLockSharesTheKeyWithLuaSafeDelete) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  ScratchDir out("locklab-user-fleets");
  const auto run = run_locklab("fleets --catalog " + kCatalog + " --lock ext:team-cad --lock lua-safe-delete "
                               "--duration 0.5 --out " + out.str());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const json fleets = read_json(out.path("fleets.json"));
  ASSERT_EQ(fleets.value("pairs", json::array()).size(), 1u) << fleets.dump();
  const json& pair = fleets["pairs"][0];
  EXPECT_EQ(pair.value("verdict", ""), "safe") << pair.dump();
  EXPECT_EQ(pair.value("overlaps", -1), 0);
  // Both lock the same key with compare-and-delete: they share it (or, on a slow machine, one
  // got in too rarely to show it), never "cannot".
  const std::string sharing = pair.value("sharing", "");
  EXPECT_TRUE(sharing == "shares" || sharing == "not shown") << pair.dump();
}

// An adapter given by --adapter alone is asked before the pairs run: fleets
// judges it by what its init_ok declares, its key and notifies_waiters as well
// as multi_node (tests/adapters/declares_in_init_ok.py locks `team:` + the
// run's key, and says so only there).
TEST(UserAdapterFleets, FleetsReadsTheKeyAndTheWordsAnInitOkDeclares) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  ScratchDir out("locklab-user-fleets-init-ok");
  const auto run = run_locklab("fleets --lock ext:team --adapter 'team=/usr/bin/python3 " + kAdapters +
                               "/declares_in_init_ok.py --claim notifies_waiters' --lock lua-safe-delete "
                               "--duration 0.5 --out " + out.str());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const json pair = read_json(out.path("fleets.json")).value("pairs", json::array()).at(0);
  const json& team = pair["members"][0];
  EXPECT_EQ(team.value("lock", ""), "ext:team") << pair.dump();
  EXPECT_EQ(team.value("key", ""), "team:locklab:lock") << pair.dump();
  EXPECT_TRUE(team.value("notifies_waiters", false)) << pair.dump();
  EXPECT_EQ(pair.value("sharing", ""), "cannot") << pair.dump();
  EXPECT_NE(pair.value("why", json::array()).dump().find("\"code\":\"key\""), std::string::npos) << pair.dump();
}

TEST(UserAdapterFleets, RunFleetGivesTwoUnshippedLabelsTwoPrograms) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  ScratchDir out("locklab-user-fleet-run");
  const std::string blind = "/usr/bin/python3 " + kAdapters + "/watchdog_blind_del.py";
  const auto run = run_locklab("run --fleet ext:a:1,ext:b:1 --adapter 'a=" + kCad + "' --adapter 'b=" + blind +
                               "' --ops 10 --json " + out.path("run.json"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const json document = read_json(out.path("run.json"));
  const json adapters = document.value("adapters", json::object());
  ASSERT_TRUE(adapters.contains("ext:a") && adapters.contains("ext:b")) << adapters.dump();
  EXPECT_NE(adapters["ext:a"]["command"].dump().find("cad_lock.py"), std::string::npos) << adapters.dump();
  EXPECT_NE(adapters["ext:b"]["command"].dump().find("watchdog_blind_del.py"), std::string::npos) << adapters.dump();
  // One bare command for both is refused, not run twice.
  expect_one_line(run_locklab("run --fleet ext:a:1,ext:b:1 --adapter '" + kCad + "' --ops 10"),
                  "one command for 2 unshipped labels");
}

TEST(UserAdapterUsage, EachMistakeIsOneLineAndExitTwo) {
  ScratchDir dir("locklab-user-usage");
  const std::string mine = " --adapter 'mine=" + kCad + "'";
  expect_one_line(run_locklab("matrix --lock ext:mine" + mine + mine), "ext:mine is given twice");
  expect_one_line(run_locklab("fleets --lock ext:team-cad --lock setnx --catalog " + kCatalog +
                              " --adapter 'team-cad=" + kCad + "'"),
                  "ext:team-cad is given twice");
  expect_one_line(run_locklab("matrix --lock ext:other" + mine), "no --lock ext:mine");
  expect_one_line(run_locklab("fleets --lock ext:other --lock setnx" + mine), "no --lock ext:mine");
  expect_one_line(run_locklab("matrix --lock ext:redis-py --adapter 'redis-py=" + kCad + "'"), "shipped adapter");
  expect_one_line(run_locklab("matrix --lock ext:nobody --fault holder-crash"), "unknown lock 'ext:nobody'");
  std::ofstream(dir.path("not_json.json")) << "{\"peers\": [";
  expect_one_line(run_locklab("matrix --catalog " + dir.path("not_json.json")), "is not a catalog of adapters");
  std::ofstream(dir.path("bad_word.json"))
      << R"({"peers": [{"name": "x", "adapter": ["/bin/true"], "capabilities": {"expirs": true}}]})";
  expect_one_line(run_locklab("fleets --catalog " + dir.path("bad_word.json")), "capability 'expirs'");
  std::ofstream(dir.path("twice.json")) << R"({"peers": [{"name": "x", "adapter": ["/bin/true"]},)"
                                        << R"( {"name": "x", "adapter": ["/bin/true"]}]})";
  expect_one_line(run_locklab("run --lock ext:x --catalog " + dir.path("twice.json")), "ext:x is given twice");
  expect_one_line(run_locklab("matrix --catalog " + dir.path("missing.json")), "cannot read");
  std::ofstream(dir.path("expects.json"))
      << R"({"peers": [{"name": "x", "adapter": ["/bin/true"], "expected": {"holder-crash": {"class": "safe", "reason": "r"}}}]})";
  expect_one_line(run_locklab("matrix --catalog " + dir.path("expects.json")), "\"expected\" is the shipped rows' field");

  expect_one_line(run_locklab("matrix --lock ext:mine --adapter 'mine='"), "empty command");
  expect_one_line(run_locklab("matrix --lock ext:a/b" + mine), "a label is letters");
  expect_one_line(run_locklab("run --lock 'ext:a/../x' --adapter '" + kCad + "'"), "a label is letters");
}

// compare and scale take your own lock too (the same flags), beside a generation.
TEST(UserAdapterSweeps, CompareAndScaleRunYourOwnLock) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  ScratchDir dir("locklab-user-sweeps");
  const std::string mine = " --adapter 'mine=" + kCad + "'";
  const auto compared = run_locklab("compare --quick --duration 0.5 --lock ext:mine --lock lua-safe-delete" + mine +
                                    " --out " + dir.path("compare"));
  ASSERT_EQ(compared.exit_code, 0) << compared.err;
  EXPECT_EQ(read_json(dir.path("compare/ext:mine.json"))["adapters"]["ext:mine"]["library"], "team-cad");
  const auto scaled = run_locklab("scale --lock ext:mine --clients 1,2 --duration 0.5" + mine + " --out " +
                                  dir.path("scale"));
  ASSERT_EQ(scaled.exit_code, 0) << scaled.err;
  EXPECT_NE(testing::slurp(dir.path("scale/scale.md")).find("ext:mine"), std::string::npos);
}

// A bare --adapter in a fleet with a shipped member is the unshipped label's:
// the shipped member runs the shipped adapter (it was refused as "yours").
TEST(UserAdapterFleets, ABareAdapterBesideAShippedMemberIsTheUnshippedLabels) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  ScratchDir dir("locklab-user-fleet-bare");
  const auto run = run_locklab("run --fleet ext:mine:1,ext:redis-py:1 --adapter '" + kCad + "'" +
                               " --ops 20 --hold 1 --json " + dir.path("r.json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json d = read_json(dir.path("r.json"));
  EXPECT_EQ(d["adapters"]["ext:redis-py"]["library"], "redis-py") << d["adapters"].dump();
  EXPECT_EQ(d["adapters"]["ext:mine"]["library"], "team-cad") << d["adapters"].dump();
}

}  // namespace
}  // namespace locklab::harness
