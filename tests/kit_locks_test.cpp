// Issue 26's "Done when": a lock of a user's own on each kit, in `matrix` and
// `fleets` through `--catalog`, with its classes and its nearest generation.
// tests/adapters/ ships four adapters, each only its Redis calls on its kit:
// kit_cad.py and kit_cad.js, a correct lock (SET NX PX with a token, a
// compare-and-delete script), and kit_blind_del.py and kit_blind_del.js, the
// same acquire with a release that is a plain DEL. tests/adapters/kit_catalog.json
// names them (the shipped catalog's format), with each release's request as its
// release_window. Through the real binary, on redis-servers the matrix and the
// fleets start: the release race tells the two apart (the late compare-and-delete
// deletes nothing; the late DEL deletes the next holder's key), and the page
// names lua-safe-delete and setnx-expire. `--expect FILE` checks the same classes.
// Needs Debian's python3-redis and harness/adapters/kits/js/node_modules (ioredis).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/locklab_binary.h"

namespace locklab::harness {
namespace {

using nlohmann::json;
using testing::run_locklab;
using testing::ScratchDir;

const std::string kAdapters = LOCKLAB_TEST_ADAPTERS_DIR;
const std::string kCatalog = kAdapters + "/kit_catalog.json";
const std::vector<std::string> kCorrect = {"ext:kit-cad-py", "ext:kit-cad-js"};
const std::vector<std::string> kBlind = {"ext:kit-blind-del-py", "ext:kit-blind-del-js"};

// What the four adapters need: a missing one fails the test (it would prove nothing), saying what to install.
void require_libraries() {
  ASSERT_EQ(std::system("/usr/bin/python3 -c 'import redis' >/dev/null 2>&1"), 0)
      << "python3-redis is not installed (scripts/setup installs it)";
  ASSERT_TRUE(std::filesystem::is_directory(std::string(LOCKLAB_PEERS_DIR) + "/kits/js/node_modules/ioredis"))
      << "harness/adapters/kits/js/node_modules is missing: run harness/adapters/kits/js/install";
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in, nullptr, /*allow_exceptions=*/false);
}

std::string locks_flags() {
  std::string flags;
  for (const auto* group : {&kCorrect, &kBlind})
    for (const auto& lock : *group) flags += " --lock " + lock;
  return flags;
}

// The nearest generation the matrix names for `lock` ("" when none).
std::string nearest(const json& matrix, const std::string& lock) {
  for (const auto& row : matrix.value("nearest_generations", json::array()))
    if (row.value("library", "") == lock && row["generation"].is_string()) return row["generation"].get<std::string>();
  return "";
}

TEST(KitLocks, EachAdapterIsItsRedisCallsInAtMostFortyLines) {
  for (const auto* file : {"kit_cad.py", "kit_blind_del.py", "kit_cad.js", "kit_blind_del.js"}) {
    std::ifstream in(kAdapters + "/" + file);
    ASSERT_TRUE(in) << file;
    const auto lines = std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n');
    EXPECT_LE(lines, 40) << file;
  }
}

// The matrix on the two columns that tell them apart and place them: release-race
// (the late release) and holder-crash (a lease that frees a dead holder's key).
// Written expectations (--expect) for all four make the exit status the check.
TEST(KitLocks, TheMatrixTellsTheCorrectLockFromTheBlindDelAndNamesTheirGenerations) {
  require_libraries();
  ScratchDir out("locklab-kit-locks");
  std::ofstream(out.path("expect.json"))
      << R"({"ext:kit-cad-py": {"release-race": "safe", "holder-crash": "liveness"},)"
      << R"( "kit-cad-js": {"release-race": "safe", "holder-crash": "liveness"},)"
      << R"( "ext:kit-blind-del-py": {"release-race": ["me-violation", "wrong-owner"]},)"
      << R"( "ext:kit-blind-del-js": {"release-race": ["me-violation", "wrong-owner"]}})";
  const auto run = run_locklab("matrix --quick --catalog " + kCatalog + locks_flags() +
                               " --fault release-race --fault holder-crash --jobs 2 --expect " +
                               out.path("expect.json") + " --out " + out.str());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;  // every cell as --expect says (3 otherwise)
  for (const auto& lock : kCorrect) {
    const json race = read_json(out.path("cells/" + lock + "__release-race.json"));
    EXPECT_EQ(race.value("observed", ""), "safe") << race.dump();
    EXPECT_EQ(race["run"]["safety"].value("wrong_owner_releases", -1), 0) << lock;
    EXPECT_NE(race.value("faults", json::array()).dump().find("at=resp:EVAL:"), std::string::npos) << race.dump();
    EXPECT_TRUE(race.value("matches", false));
    EXPECT_EQ(race.value("expected_reason", "").rfind("--expect ", 0), 0u) << race.value("expected_reason", "");
    EXPECT_EQ(read_json(out.path("cells/" + lock + "__holder-crash.json")).value("observed", ""), "liveness") << lock;
  }
  for (const auto& lock : kBlind) {
    const json race = read_json(out.path("cells/" + lock + "__release-race.json"));
    const std::string observed = race.value("observed", "");
    EXPECT_TRUE(observed == "me-violation" || observed == "wrong-owner") << race.dump();
    EXPECT_GT(race["run"]["safety"].value("wrong_owner_releases", 0), 0) << lock << ": the late DEL deleted nothing";
    EXPECT_NE(race.value("faults", json::array()).dump().find("at=resp:DEL:"), std::string::npos) << race.dump();
    // Not named in --expect: shows its class, nothing to differ from.
    const json crash = read_json(out.path("cells/" + lock + "__holder-crash.json"));
    EXPECT_EQ(crash.value("observed", ""), "liveness") << lock;
    EXPECT_NE(crash.value("expected", "").find("none written"), std::string::npos) << crash.dump();
  }
  // The nearest generations, as matrix_likeness computes them from the written generation rows:
  // the first (teaching order) of those alike in both cells.
  const json matrix = read_json(out.path("matrix.json"));
  for (const auto& lock : kCorrect) EXPECT_EQ(nearest(matrix, lock), "lua-safe-delete") << matrix.dump();
  for (const auto& lock : kBlind) EXPECT_EQ(nearest(matrix, lock), "setnx-expire") << matrix.dump();
  // Each row names its language and version, from its adapter's init_ok (the README's headline table).
  const std::string table = testing::slurp(out.path("matrix.md"));
  EXPECT_NE(table.find("| ext:kit-cad-py | Python, kit-cad-py 1 |"), std::string::npos) << table;
  EXPECT_NE(table.find("| ext:kit-blind-del-js | JavaScript, kit-blind-del-js 1 |"), std::string::npos) << table;
  const std::string page = testing::slurp(out.path("matrix.html"));
  EXPECT_NE(page.find("ext:kit-cad-js behaves like generation 4 lua-safe-delete"), std::string::npos);
  EXPECT_NE(page.find("ext:kit-blind-del-js behaves like generation 1b setnx-expire"), std::string::npos);
}

// A cell --expect gets wrong differs, names itself on stderr, and the matrix exits 3, as a shipped cell would;
// the matrix read back from its cells (`locklab index`) keeps the check.
TEST(KitLocks, AnExpectationTheLockBreaksExitsThree) {
  require_libraries();
  ScratchDir out("locklab-kit-expect"), given("locklab-kit-expect-file");  // index reads every .json of `out`
  std::ofstream(given.path("wrong.json")) << R"({"kit-blind-del-py": {"release-race": "safe"}})";
  const auto run = run_locklab("matrix --quick --catalog " + kCatalog + " --lock ext:kit-blind-del-py --fault "
                               "release-race --expect " + given.path("wrong.json") + " --out " + out.path("matrix"));
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  EXPECT_NE(run.err.find("ext:kit-blind-del-py x release-race is "), std::string::npos) << run.err;
  const json race = read_json(out.path("matrix/cells/ext:kit-blind-del-py__release-race.json"));
  EXPECT_FALSE(race.value("matches", true)) << race.dump();
  EXPECT_NE(testing::slurp(out.path("matrix/matrix.md")).find("✗ (expected safe"), std::string::npos);
  ASSERT_EQ(run_locklab("compare --quick --lock lua-safe-delete --duration 0.3 --out " + out.str()).exit_code, 0);
  const auto index = run_locklab("index " + out.str());
  ASSERT_EQ(index.exit_code, 0) << index.err;
  EXPECT_NE(testing::slurp(out.path("index.md")).find("✗ (expected safe"), std::string::npos);
}

// A bad --expect file is one line and exit 2, before any cell runs.
TEST(KitLocks, ABadExpectFileIsOneLineAndExitTwo) {
  ScratchDir dir("locklab-kit-expect-usage");
  const auto one_line = [&](const std::string& body, const std::string& words) {
    std::ofstream(dir.path("e.json"), std::ios::trunc) << body;
    const auto run = run_locklab("matrix --quick --catalog " + kCatalog + " --lock ext:kit-cad-py --fault "
                                 "release-race --expect " + dir.path("e.json") + " --out " + dir.path("m"));
    EXPECT_EQ(run.exit_code, 2) << body << run.out << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_NE(run.err.find(words), std::string::npos) << run.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path("m/cells/ext:kit-cad-py__release-race.json"))) << body;
  };
  one_line("{\"ext:kit-cad-py\": ", "not a JSON object");
  one_line(R"({"ext:kit-cad-py": {"release-rac": "safe"}})", "'release-rac' is not a matrix column");
  one_line(R"({"ext:kit-cad-py": {"release-race": "sfe"}})", "\"sfe\" is not a class");
  one_line(R"({"ext:kit-cad-py": {"release-race": ["safe", "liveness", "deadlock"]}})", "give one class, or two");
  one_line(R"({"ext:nobody": {"release-race": "safe"}})", "ext:nobody is not a row of your own in this matrix");
  one_line(R"({"ext:redis-py": {"release-race": "safe"}})", "ext:redis-py is not a row of your own");
}

// The four in fleets, through the same catalog: each pair measured on one
// server and one key, and the correct lock shares it with lua-safe-delete
// (fault-free, a blind DEL shares it too: its race needs a late release).
TEST(KitLocks, FleetsPairsThemThroughTheCatalog) {
  require_libraries();
  ScratchDir out("locklab-kit-fleets");
  const auto run = run_locklab("fleets --catalog " + kCatalog + " --lock ext:kit-cad-py --lock ext:kit-blind-del-js "
                               "--lock lua-safe-delete --duration 0.5 --out " + out.str());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const json pairs = read_json(out.path("fleets.json")).value("pairs", json::array());
  ASSERT_EQ(pairs.size(), 3u) << pairs.dump();
  for (const auto& pair : pairs) {
    EXPECT_EQ(pair.value("verdict", ""), "safe") << pair.dump();
    const std::string sharing = pair.value("sharing", "");
    EXPECT_TRUE(sharing == "shares" || sharing == "not shown") << pair.dump();  // "not shown": one got in too rarely
    for (const auto& member : pair["members"]) {
      EXPECT_EQ(member.value("key", ""), "locklab:lock") << pair.dump();  // the catalog's "{key}"
      EXPECT_EQ(member.value("errors", -1), 0) << pair.dump();
    }
  }
}

}  // namespace
}  // namespace locklab::harness
