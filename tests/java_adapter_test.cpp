// The Java rows (Redisson and Spring Integration's RedisLockRegistry through harness/adapters/kits/java;
// docs/adapters.md, "The Java kit"; docs/peers.md, "Redisson", "Spring Integration RedisLockRegistry"):
// their expected cells are written down in docs/peers.md
// as in their catalog entries; without their build they read "not installed", one line, and refuse by name;
// with it, one fault cell runs and ends at its expected class. The acquire and release of
// each Java row are the cases of tests/peer_adapters_test.cpp, which run for every catalog
// entry. A case that needs the build skips, saying so, when harness/adapters/kits/java/install
// has not built it (no JDK or Maven here).
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/row_cells.h"

namespace locklab::harness {
namespace {

namespace fs = std::filesystem;
using testing::RowsTest;

const std::vector<std::string> kJavaRows = {"ext:redisson", "ext:redisson+failfast", "ext:redisson-3.18.1",
                                            "ext:redisson-3.18.1+trylock", "ext:spring-redis-lock-registry",
                                            // Redisson's other locks (docs/peers.md, "Redisson's other locks")
                                            "ext:redisson-fair", "ext:redisson-3.18.1-fair", "ext:redisson-fenced",
                                            "ext:redisson-spin", "ext:redisson-3.18.1-spin", "ext:redisson-redlock",
                                            "ext:redisson-3.18.1-redlock"};

class JavaRows : public RowsTest {
 protected:
  JavaRows() : RowsTest("locklab-java") {}
  static bool built(const std::string& name) {
    return fs::exists(fs::path(peers_dir()) / "kits/java/target" / name / (name + ".jar"));
  }
};

// Every cell of every Java row is written down, in its catalog entry and in docs/peers.md with the same class and reason.
TEST(JavaRowsExpectations, PeerDocsListEveryJavaCellWithTheSameClass) {
  testing::expect_cells_in_peer_docs(kJavaRows);
}

// Without kits/java/target (no JDK, no Maven, or a failed install), asking for a Java row is a
// usage error naming what is missing, and nothing runs; `--libraries all` leaves them out and runs.
TEST_F(JavaRows, WithoutTheirBuildTheyReadNotInstalledByName) {
  const std::string peers = (fs::path(dir_) / "peers").string();
  catalog_alone(peers);
  const auto runs = run_not_installed(peers, "ext:redisson-3.18.1");
  expect_refused_and_skipped(runs);
  const auto& [refused, skipped] = runs;
  // The full matrix's rows leave them out with one line, and the matrix goes on.
  EXPECT_NE(skipped.err.find("ext:redisson-fair, ext:redisson-3.18.1-fair, ext:redisson-fenced, ext:redisson-spin, "
                             "ext:redisson-3.18.1-spin, ext:redisson-redlock, ext:redisson-3.18.1-redlock"),
            std::string::npos)
      << skipped.err;
  EXPECT_NE(skipped.err.find("ext:redisson, ext:redisson+failfast, ext:redisson-3.18.1, ext:redisson-3.18.1+trylock"),
            std::string::npos)
      << skipped.err;
  EXPECT_NE(skipped.err.find("ext:spring-redis-lock-registry"), std::string::npos) << skipped.err;  // the Rust rows follow it
  EXPECT_TRUE(skipped.err.find("java is not installed") != std::string::npos ||
              skipped.err.find("kits/java/target is missing") != std::string::npos) << skipped.err;
  EXPECT_NE(refused.err.find("--lock ext:redisson-3.18.1: "), std::string::npos) << refused.err;
  const bool no_java = refused.err.find("java is not installed") != std::string::npos;
  const bool no_jar = refused.err.find("not installed: " + peers + "/kits/java/target is missing (build the Java "
                                       "adapters: harness/adapters/kits/java/install)") != std::string::npos;
  EXPECT_TRUE(no_java || no_jar) << refused.err;
}

// The main job's rows (`matrix --quick`, --libraries main) hold one Java row, the newest Redisson's
// `getLock` (issue 27: one row per language); seed 000's 3.18.1 and the variants are rows of
// `--libraries all` only (a variant is never a main row).
TEST(JavaRowsCatalog, OnlyTheNewestRedissonIsARowOfTheMainJob) {
  for (const std::string& row : kJavaRows) {
    const auto found = find_lock(row);
    ASSERT_TRUE(found) << row;
    EXPECT_EQ(found->main_row, row == "ext:redisson") << row;
  }
}

// One fault cell of seed 000's Redisson: SIGSTOP freezes the JVM and its watchdog, the lease
// lapses, a second holder enters (RedissonBaseLock.java:122-159 in 3.18.1).
TEST_F(JavaRows, Redisson3181HolderPauseIsAMeViolation) {
  if (!built("redisson-3.18.1")) GTEST_SKIP() << "the Java adapters are not built: run harness/adapters/kits/java/install";
  testing::expect_one_cell("ext:redisson-3.18.1", "holder-pause", CellClass::me_violation, dir_ + "/m");
}

// Seed 000's own topology (issue 27 item 3): the failover column of a getLock row runs on a
// Redis Cluster with replicas, the client on useClusterServers(). Redisson WAITs for the replica
// after its lock script and throws when none acknowledged (RedissonBaseLock.java:208-240), so
// no client holds an unreplicated lock: the fault fails the master over with the key on it and
// nobody inside (its bite: every acquire refused meanwhile), and the refusals, blocked past the
// wait, are the class: liveness, never safe. The bite says whether the lock was usable after.
// While the slot moves, 3.18.1 could grant twice: it sizes its WAIT by the master's connected
// replicas (RedissonBaseLock.java:212-218, none: no WAIT, no check), and both the old master (its
// replica just promoted) and the new one (none yet) have none. The fault pauses the old master's
// writes until it is a replica (a lost master grants nothing), so the cell is liveness alone.
TEST_F(JavaRows, Redisson3181FailoverOnTheClusterRefusesAnUnreplicatedLock) {
  if (!built("redisson-3.18.1")) GTEST_SKIP() << "the Java adapters are not built: run harness/adapters/kits/java/install";
  const auto lock = find_lock("ext:redisson-3.18.1");
  ASSERT_TRUE(lock);
  EXPECT_EQ(lock->failover_topology, "cluster");
  const auto run = locklab::testing::run_locklab("matrix --quick --lock ext:redisson-3.18.1 --fault failover --jobs 1 --out '" +
                                        dir_ + "/m'");
  const auto loaded = load_matrix(dir_ + "/m");
  ASSERT_TRUE(loaded) << loaded.error().message << run.err;
  ASSERT_EQ(loaded->cells.size(), 1u);
  const auto& cell = loaded->cells[0];
  EXPECT_TRUE(cell.observed == CellClass::liveness || cell.observed == CellClass::error)
      << run.out;  // never safe, and no second holder while the slot moves
  const bool has_config = cell.run.is_object() && cell.run.contains("config");
  const std::string command = has_config ? cell.run["config"].value("command", std::string()) : std::string();
  EXPECT_NE(command.find("--cluster"), std::string::npos) << "the replay line runs it on the cluster: " << command;
  if (cell.observed == CellClass::liveness) {
    const std::string bite = cell.run["faults"].dump();
    EXPECT_NE(bite.find("every acquire failed"), std::string::npos) << bite;
    EXPECT_NE(bite.find("\"refused_not_held\":true"), std::string::npos) << bite;
    EXPECT_NE(bite.find("usable after it"), std::string::npos) << "usability after the failover: " << bite;
    EXPECT_NE(bite.find("writes paused until it is a replica"), std::string::npos) << bite;
  } else if (cell.observed == CellClass::error) {
    EXPECT_NE(cell.error.find("not exercised"), std::string::npos) << cell.error;  // never safe: a run with no refusal
  }
}

// Spring Integration's RedisLockRegistry (docs/peers.md, "Spring Integration RedisLockRegistry"): release-race
// parks the holder's delete (DELEX, or the fallback script) until its lease lapsed and another client is inside;
// the compare-and-delete then deletes nothing (RedisLockRegistry.java:915-922) and unlock() throws (:669-679).
TEST_F(JavaRows, SpringLockRegistryReleaseRaceIsSafe) {
  if (!built("spring-integration-redis-7.1.2")) GTEST_SKIP() << "the Java adapters are not built: run harness/adapters/kits/java/install";
  testing::expect_one_cell("ext:spring-redis-lock-registry", "release-race", CellClass::safe, dir_ + "/m");
}

// Redisson's fenced lock, its token carried to the resource (catalog `token_at_resource`): SIGSTOP
// freezes the JVM and its watchdog, the lease lapses and a second holder enters, but with a larger
// token (RedissonFencedLock.java:106-118), and the fenced counter refuses the stopped holder's stale
// one: safe, as generation 7's cell. Without the token it would read me-violation, as getLock's.
TEST_F(JavaRows, RedissonFencedHolderPauseIsFencedOff) {
  if (!built("redisson-fenced-4.7.0")) GTEST_SKIP() << "the Java adapters are not built: run harness/adapters/kits/java/install";
  const auto run = locklab::testing::run_locklab("matrix --quick --lock ext:redisson-fenced --fault holder-pause --jobs 2 --out '" +
                                        dir_ + "/m'");
  const auto loaded = load_matrix(dir_ + "/m");
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_EQ(loaded->cells.size(), 1u);
  std::ifstream in(dir_ + "/m/cells/ext:redisson-fenced__holder-pause.json");
  const auto cell = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(cell.is_discarded());
  // At a load average of 30 on 2 cores a waiter's JVM answered its acquire a second past its bound
  // before the pause ended: no second holder to fence off. Not the fence's to judge: skipped, saying so.
  const auto blocked = cell["run"]["safety"].value("blocked_calls", 0);
  if (loaded->cells[0].observed == CellClass::liveness && blocked > 0)
    GTEST_SKIP() << "a waiter's acquire blocked past its bound under this machine's load: no second holder got in";
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(loaded->cells[0].observed, CellClass::safe) << run.out;
  EXPECT_TRUE(loaded->cells[0].matches());
  EXPECT_GE(cell["run"]["safety"].value("stale_writes_rejected", 0), 1) << "the stale holder's token was not refused";
}

// `token_at_resource` is a fencing row's alone, a boolean; the shipped fenced row carries it.
TEST_F(JavaRows, TokenAtResourceIsAFencingRowsBoolean) {
  const auto fenced = find_lock("ext:redisson-fenced");
  ASSERT_TRUE(fenced);
  EXPECT_TRUE(fenced->token_at_resource);
  EXPECT_FALSE(find_lock("ext:redisson")->token_at_resource);
  const std::string path = dir_ + "/catalog.json";
  const auto write = [&](const std::string& fencing, const std::string& flag) {
    std::ofstream(path) << R"({"peers": [{"name": "mine", "key": "{key}", "adapter": ["/bin/true"],
      "capabilities": {"expires": true, "owner_checked_release": true, "reentrant": false, "fencing": )"
                        << fencing << R"(, "multi_node": false, "notifies_waiters": false, "auto_extends": false},
      "release_window": "", "acquire_gap": "", "token_at_resource": )" << flag << "}]}";
  };
  write("true", "true");
  const auto good = read_catalog(path, dir_);
  ASSERT_TRUE(good) << good.error().message;
  EXPECT_TRUE(good->at(0).token_at_resource);
  for (const auto& [fencing, flag] : {std::pair{"false", "true"}, std::pair{"true", "\"yes\""}}) {
    write(fencing, flag);
    const auto bad = read_catalog(path, dir_);
    ASSERT_FALSE(bad) << fencing << " " << flag;
    EXPECT_NE(bad.error().message.find("token_at_resource must be true or false, and true only with fencing"),
              std::string::npos) << bad.error().message;
  }
}

}  // namespace
}  // namespace locklab::harness
