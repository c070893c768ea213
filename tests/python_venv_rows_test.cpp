// The Python venv rows (python-redis-lock and pottery on build/venv, which
// harness/adapters/kits/python/install fills from requirements.txt with --require-hashes;
// docs/adapters.md, "The Python kit's venv"; docs/peers.md, "The Python rows"): their expected
// cells are written down in docs/peers.md as in their catalog entries; without the venv they read "not
// installed", one line, and refuse by name; with it, one fault cell runs and ends at its
// expected class. Their acquire and release are the cases of tests/peer_adapters_test.cpp,
// which run for every catalog entry. A case that needs the venv skips, saying so, without it.
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "fixtures/row_cells.h"

namespace locklab::harness {
namespace {

namespace fs = std::filesystem;
using testing::RowsTest;

const std::vector<std::string> kPythonRows = {"ext:python-redis-lock", "ext:pottery-redlock"};

class PythonRows : public RowsTest {
 protected:
  PythonRows() : RowsTest("locklab-python") {}
  // The venv's interpreter, as the catalog names it (relative to harness/adapters/).
  static bool installed() { return ::access((peers_dir() + "/../../build/venv/bin/python3").c_str(), X_OK) == 0; }
};

// Every cell of both rows is written down, in its catalog entry and in docs/peers.md with the same class and reason.
TEST(PythonRowsExpectations, PeerDocsListEveryPythonCellWithTheSameClass) {
  testing::expect_cells_in_peer_docs(kPythonRows);
}

// python-redis-lock is the main job's Python venv row (issue 27: one row per language); pottery is
// not. python-redis-lock's lease is whole seconds: its catalog entry says so, and the matrix runs it
// with the 1 s lease it really takes.
TEST(PythonRowsCatalog, MainRowAndLeaseResolution) {
  const auto prl = find_lock("ext:python-redis-lock");
  const auto pottery = find_lock("ext:pottery-redlock");
  ASSERT_TRUE(prl && pottery);
  EXPECT_TRUE(prl->main_row);
  EXPECT_FALSE(pottery->main_row);
  EXPECT_EQ(prl->capabilities.ttl_resolution_ms, 1000);
  EXPECT_EQ(pottery->capabilities.ttl_resolution_ms, 1);
  EXPECT_TRUE(pottery->capabilities.multi_node);
}

// A catalog whose peers folder has no build/venv beside it: asking for a venv row is a usage error
// naming the missing interpreter, one line, and nothing runs; --libraries all leaves both out and runs.
TEST_F(PythonRows, WithoutTheVenvTheyReadNotInstalledByName) {
  const std::string peers = (fs::path(dir_) / "harness/adapters").string();  // ../../build/venv: dir_/build/venv
  catalog_alone(peers);
  fs::create_directories(fs::path(dir_) / "build/venv");
  std::ofstream(fs::path(dir_) / "build/venv/NOT_INSTALLED") << "pip install --require-hashes failed (a test's line)\n";
  const auto runs = run_not_installed(peers, "ext:python-redis-lock");
  expect_refused_and_skipped(runs);
  const auto& [refused, skipped] = runs;
  EXPECT_NE(skipped.err.find("ext:python-redis-lock"), std::string::npos) << skipped.err;
  EXPECT_NE(skipped.err.find("ext:pottery-redlock"), std::string::npos) << skipped.err;
  EXPECT_FALSE(fs::exists(dir_ + "/m/cells/ext:python-redis-lock__expire-gap.json")) << "a row that is not installed ran";
  EXPECT_NE(refused.err.find("--lock ext:python-redis-lock: not installed: " + dir_ +
                             "/build/venv/bin/python3 is missing (pip install --require-hashes failed (a test's line))"),
            std::string::npos)
      << refused.err;
}

// A venv whose pip install failed keeps its interpreter, not the libraries: NOT_INSTALLED still refuses its rows.
TEST_F(PythonRows, AVenvWhoseInstallFailedReadsIncomplete) {
  const std::string peers = (fs::path(dir_) / "harness/adapters").string();
  catalog_alone(peers);
  fs::create_directories(fs::path(dir_) / "build/venv/bin");
  fs::create_symlink("/bin/true", fs::path(dir_) / "build/venv/bin/python3");
  std::ofstream(fs::path(dir_) / "build/venv/NOT_INSTALLED") << "pip install --require-hashes failed (a test's line)\n";
  ::setenv("LOCKLAB_PEERS_DIR", peers.c_str(), 1);
  const auto refused = locklab::testing::run_locklab("matrix --quick --lock ext:pottery-redlock --out '" + dir_ + "/x'");
  ::unsetenv("LOCKLAB_PEERS_DIR");
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("--lock ext:pottery-redlock: not installed: " + dir_ +
                             "/build/venv is incomplete (pip install --require-hashes failed (a test's line))"),
            std::string::npos)
      << refused.err;
  EXPECT_FALSE(fs::exists(dir_ + "/x/cells")) << "a row that is not installed ran";
}

// One fault cell of the main job's Python venv row: SIGSTOP freezes the renewal thread with the
// holder (redis_lock/__init__.py:278-284), the 1 s lease lapses, a second holder enters.
TEST_F(PythonRows, PythonRedisLockHolderPauseIsAMeViolation) {
  if (!installed()) GTEST_SKIP() << "build/venv is missing: run harness/adapters/kits/python/install";
  testing::expect_one_cell("ext:python-redis-lock", "holder-pause", CellClass::me_violation, dir_ + "/m");
}

}  // namespace
}  // namespace locklab::harness
