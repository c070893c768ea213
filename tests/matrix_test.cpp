// `locklab matrix`: the cell classes computed from run documents, the
// expectations written down for every cell, and the quick matrix itself
// against real redis-server processes: every cell must end in its expected
// class (each generation's known weakness shows, each fix holds).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>

#include <nlohmann/json.hpp>

#include "sweeps/matrix.h"
#include "sweeps/matrix_expectations.h"
#include "report/matrix_report.h"
#include "registry.h"
#include "run/run.h"
#include "servers/redis_server.h"
#include "fixtures/locklab_binary.h"

namespace locklab::harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A run document with only what classify() reads.
json run(const std::string& verdict, json safety, int ttl_ms = 200) {
  return {{"verdict", verdict}, {"safety", std::move(safety)}, {"config", {{"ttl_ms", ttl_ms}}}};
}

json quiet() {
  return {{"overlaps", 0}, {"lost_updates", 0}, {"max_concurrent_holders", 1}, {"wrong_owner_releases", 0},
          {"stalls", 0},   {"unavailability_ms", nullptr}, {"stale_writes_rejected", 0}};
}

json with(json safety, const std::string& key, json value) {
  safety[key] = std::move(value);
  return safety;
}

TEST(MatrixPlan, EveryColumnHasItsPlan) {
  // The columns are listed in report/ (the report draws them) and planned in
  // sweeps/: a column without a plan would run its cells with no fault at all.
  for (const auto& column : fault_columns()) EXPECT_TRUE(has_plan(column.name)) << column.name;
  EXPECT_FALSE(has_plan("no-such-column"));
}

TEST(MatrixClassify, EachClassFromItsRunDocument) {
  EXPECT_EQ(classify(run("safe", quiet())), CellClass::safe);
  EXPECT_EQ(classify(run("violation", with(quiet(), "overlaps", 2))), CellClass::me_violation);
  EXPECT_EQ(classify(run("violation", with(quiet(), "lost_updates", 1))), CellClass::me_violation);
  EXPECT_EQ(classify(run("violation", with(quiet(), "max_concurrent_holders", 2))), CellClass::me_violation);
  EXPECT_EQ(classify(run("violation", with(quiet(), "wrong_owner_releases", 1))), CellClass::wrong_owner);
  EXPECT_EQ(classify(run("violation", with(with(quiet(), "wrong_owner_releases", 1), "overlaps", 1))),
            CellClass::me_violation);
  EXPECT_EQ(classify(run("deadlock", with(quiet(), "stalls", 1))), CellClass::deadlock);
  EXPECT_EQ(classify(run("safe", with(quiet(), "stalls", 1))), CellClass::liveness);
  EXPECT_EQ(classify(run("error", quiet())), CellClass::error);
}

// A cell whose fault did not act is error, never its expected class (issue 16
// §1): here a real run whose holder-crash waits at a step point no lock
// reaches -- otherwise a quiet, safe run.
TEST(MatrixClassify, ACellWhoseFaultDidNotActIsError) {
  RunOptions options;
  options.lock = "lua-safe-delete";
  options.clients = 2;
  options.ops = 10;
  options.ttl_ms = 400;
  options.faults = {"holder-crash:at=no-such-point"};
  auto document = measure(options);
  ASSERT_TRUE(document) << document.error().message;
  EXPECT_EQ((*document)["faults"][0]["acted"], false);
  EXPECT_EQ(classify(*document), CellClass::error) << (*document)["verdict_reasons"].dump();
  json acted = *document;  // the same run with the fault's part left out: what the cell would be
  acted["verdict"] = "safe";
  EXPECT_EQ(classify(acted), CellClass::safe) << "nothing else made it error";
}

TEST(MatrixClassify, UnavailabilityOfHalfALeaseIsLivenessLessIsSafe) {
  EXPECT_EQ(classify(run("safe", with(quiet(), "unavailability_ms", 100), 200)), CellClass::liveness);
  EXPECT_EQ(classify(run("safe", with(quiet(), "unavailability_ms", 99), 200)), CellClass::safe);
  EXPECT_EQ(classify(run("safe", with(quiet(), "unavailability_ms", nullptr), 200)), CellClass::safe);
}

TEST(MatrixClassify, FencedOverlapsThatTheResourceRefusedStaySafe) {
  // The checker counts only effective sections: refused ones are reported apart.
  json safety = with(quiet(), "stale_writes_rejected", 3);
  safety["overlaps_fenced_off"] = 2;
  EXPECT_EQ(classify(run("safe", safety)), CellClass::safe);
}

TEST(MatrixClassify, FencedOverlapsSerializedByTheFenceStaySafe) {
  // max_concurrent_holders counts only the sections in a violating pair.
  json safety = with(quiet(), "overlaps_serialized_by_fence", 1);
  EXPECT_EQ(classify(run("safe", safety)), CellClass::safe);
}

// Issue 16 §5: safe by luck is not safe by design.
TEST(MatrixExposed, ASafeRunWithALeaseLostUnderAHolderIsExposed) {
  json document = run("safe", with(quiet(), "leases_lost_nobody_entered", 1));
  EXPECT_TRUE(exposed(document)) << "from the safety block";
  EXPECT_EQ(classify(document), CellClass::safe) << "the class stays safe; the mark is apart";
  json flagged = run("safe", quiet());
  flagged["exposed"] = true;
  EXPECT_TRUE(exposed(flagged)) << "from the document's flag";
  EXPECT_FALSE(exposed(run("safe", quiet())));
  EXPECT_FALSE(exposed(run("safe", with(quiet(), "leases_lost_inside", 1)))) << "someone entered: not luck";
  EXPECT_FALSE(exposed(run("violation", with(with(quiet(), "leases_lost_nobody_entered", 1), "overlaps", 1))));
  EXPECT_FALSE(exposed(run("error", with(quiet(), "leases_lost_nobody_entered", 1))));
}

Cell cell_of(CellClass observed, bool is_exposed, CellClass expected, bool expected_exposed,
             std::optional<CellClass> or_else = std::nullopt) {
  Cell cell;
  cell.observed = observed;
  cell.exposed = is_exposed;
  cell.expected = expected;
  cell.expected_exposed = expected_exposed;
  cell.also_expected = or_else;
  return cell;
}

TEST(MatrixExposed, TheMarkMustMatchItsExpectationEitherWayRound) {
  EXPECT_TRUE(cell_of(CellClass::safe, false, CellClass::safe, false).matches());
  EXPECT_FALSE(cell_of(CellClass::safe, true, CellClass::safe, false).matches()) << "exposed, not expected so";
  EXPECT_FALSE(cell_of(CellClass::safe, false, CellClass::safe, true).matches()) << "expected exposed, was not";
  EXPECT_TRUE(cell_of(CellClass::safe, true, CellClass::safe, true).matches());
  EXPECT_FALSE(cell_of(CellClass::liveness, true, CellClass::liveness, false).matches()) << "liveness was safe too";
  // The mark is about safe endings: a violation of a cell that may end either way still matches.
  EXPECT_TRUE(cell_of(CellClass::me_violation, false, CellClass::me_violation, true, CellClass::safe).matches());
  EXPECT_EQ(cell_of(CellClass::safe, true, CellClass::safe, true).expected_text(), "safe, exposed");
  EXPECT_EQ(cell_of(CellClass::safe, true, CellClass::safe, true).observed_text(), "safe, exposed");
  EXPECT_EQ(cell_of(CellClass::safe, false, CellClass::safe, false).observed_text(), "safe");
}

TEST(MatrixExposed, CellJsonCarriesTheMarkAndTheReportShowsIt) {
  Cell cell = cell_of(CellClass::safe, true, CellClass::safe, true);
  cell.lock = "reentrant-watchdog";
  cell.fault = "clock-jump";
  EXPECT_EQ(cell_json(cell)["exposed"], true);
  EXPECT_EQ(cell_json(cell)["expected"], "safe, exposed");
  MatrixResult result;
  result.locks = {cell.lock};
  result.faults = {cell.fault};
  result.cells = {cell};
  EXPECT_NE(matrix_table(result).find("| safe, exposed |"), std::string::npos) << matrix_table(result);
  EXPECT_NE(matrix_markdown(result).find("exposed"), std::string::npos);
  EXPECT_NE(matrix_html(result).find("cell safe exposed"), std::string::npos);
  EXPECT_NE(matrix_html(result).find("safe, exposed:"), std::string::npos) << "the legend names the mark";
}

TEST(MatrixClassify, ClassNamesRoundTrip) {
  for (CellClass c : {CellClass::safe, CellClass::me_violation, CellClass::wrong_owner, CellClass::deadlock,
                      CellClass::liveness, CellClass::not_applicable, CellClass::error})
    EXPECT_EQ(parse_class(class_name(c)), c);
  EXPECT_FALSE(parse_class("fine"));
}

// Every cell has an expectation, and a cell is N/A in the plan exactly when it
// is expected N/A: the code that decides and the table that expects agree.
TEST(MatrixExpectations, EveryCellIsWrittenDownAndAgreesWithThePlan) {
  for (const auto& generation : generations()) {
    for (const auto& column : fault_columns()) {
      const auto expectation = expected_cell(generation.name, column.name);
      ASSERT_TRUE(expectation) << generation.name << " x " << column.name << " has no expectation";
      EXPECT_FALSE(expectation->reason.empty()) << generation.name << " x " << column.name;
      const CellPlan plan = plan_cell(generation, column, true);
      EXPECT_EQ(plan.not_applicable.empty(), expectation->expected != CellClass::not_applicable)
          << generation.name << " x " << column.name << ": plan says '" << plan.not_applicable << "'";
      if (plan.not_applicable.empty()) {
        EXPECT_FALSE(plan.faults.empty()) << generation.name << " x " << column.name;
      }
    }
  }
}

// The step points the release-race and expire-gap cells park at are
// capabilities (impls/registry.cpp): each must be one its lock really passes,
// or the cell's pause or crash would never act. One acquire and release per
// generation that names one, against real servers (three for a multi-node lock).
TEST(MatrixStepPoints, EveryGenerationPassesTheStepPointsItsCellsParkAt) {
  std::vector<std::unique_ptr<RedisServer>> servers;
  for (const auto& generation : generations()) {
    const Capabilities& can = generation.capabilities;
    if (!can.uses_redis || (can.release_window.empty() && can.acquire_gap.empty())) continue;
    const std::size_t nodes = can.multi_node ? 3 : 1;
    while (servers.size() < nodes) {
      auto started = RedisServer::start();
      ASSERT_TRUE(started) << started.error().message;
      servers.push_back(std::move(started).value());
    }
    auto passed = std::make_shared<std::vector<std::string>>();
    auto guard = std::make_shared<std::mutex>();
    LockConfig config;
    config.key = "locklab:matrix-steps:" + generation.name;
    config.ttl = std::chrono::seconds(10);
    config.step = [passed, guard](std::string_view point) {
      const std::lock_guard lock(*guard);
      passed->emplace_back(point);
    };
    for (std::size_t i = 0; i < nodes; ++i) config.servers.push_back(servers[i]->connection_options());
    auto lock = make_lock(generation.name, config);
    ASSERT_TRUE(lock) << generation.name << ": " << lock.error().message;
    ASSERT_EQ((*lock)->try_acquire(std::chrono::seconds(1)), Acquire::acquired) << generation.name;
    EXPECT_EQ((*lock)->release(), Release::released) << generation.name;
    const std::lock_guard lock_passed(*guard);
    for (std::string_view point : {can.release_window, can.acquire_gap}) {
      if (point.empty()) continue;
      EXPECT_NE(std::find(passed->begin(), passed->end(), point), passed->end())
          << generation.name << " never passed step point '" << point << "'";
    }
  }
}

TEST(MatrixExpectations, DocsListEveryCellWithTheSameClass) {
  std::ifstream in(LOCKLAB_FAULTS_DOC);
  ASSERT_TRUE(in) << LOCKLAB_FAULTS_DOC;
  const std::string doc{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  for (const auto& generation : generations()) {
    if (!generation.capabilities.uses_redis) continue;
    for (const auto& column : fault_columns()) {
      const auto expectation = expected_cell(generation.name, column.name);
      ASSERT_TRUE(expectation);
      const std::string row = "| " + generation.name + " | " + column.name + " | " + expected_text(*expectation) +
                              " | " + expectation->reason + " |";
      EXPECT_NE(doc.find(row), std::string::npos) << "docs/faults.md lacks the row: " << row;
    }
  }
}

// The peer libraries' rows (issue 18): every column of every library the
// issue ships is written down, and docs/peers.md lists each cell with the
// code's class and reason, as docs/faults.md does for the generations.
TEST(MatrixExpectations, PeerDocsListEveryPeerCellWithTheSameClass) {
  const fs::path doc_path = fs::path(LOCKLAB_FAULTS_DOC).parent_path() / "peers.md";
  std::ifstream in(doc_path);
  ASSERT_TRUE(in) << doc_path;
  const std::string doc{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  for (const std::string peer : {"ext:redis-py", "ext:node-redlock", "ext:sesamecare-redlock", "ext:redis-semaphore",
                                 "ext:redis-lock", "ext:node-redis-warlock", "ext:simple-redis-mutex",
                                 "ext:redlock-universal", "ext:node-redisson"}) {
    for (const auto& column : fault_columns()) {
      const auto expectation = expected_cell(peer, column.name);
      ASSERT_TRUE(expectation) << peer << " x " << column.name << " has no expectation";
      EXPECT_FALSE(expectation->reason.empty()) << peer << " x " << column.name;
      const std::string row =
          "| " + peer + " | " + column.name + " | " + expected_text(*expectation) + " | " + expectation->reason + " |";
      EXPECT_NE(doc.find(row), std::string::npos) << "docs/peers.md lacks the row: " << row;
    }
  }
}

class MatrixRun : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "locklab-matrix-XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
  }
  void TearDown() override {
    std::error_code ignored;
    if (!HasFailure()) fs::remove_all(dir_, ignored);  // a failed matrix is kept for reading
  }
  std::string dir_;
};

// The headline: the quick matrix, every cell at its expected class.
TEST_F(MatrixRun, QuickMatrixEveryCellAsExpected) {
  MatrixOptions options;
  options.quick = true;
  options.out = dir_;
  options.progress = false;
  auto result = run_matrix(options);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_FALSE(result->cells.empty());
  for (const auto& cell : result->cells) {
    // Issue 16 §5: no safe cell hides a lease lost under a holder.
    if (cell.run.is_object() && cell.run.value("verdict", "") == "safe" &&
        cell.run["safety"].value("leases_lost_nobody_entered", 0) > 0) {
      EXPECT_TRUE(cell.exposed) << cell.lock << " x " << cell.fault << ": a lease was lost under a holder, unmarked";
    }
    // The same from the lock's own count (its watchdog saw a renewal fail),
    // which the checker's per-section finding must not miss.
    if (cell.run.is_object() && cell.run.value("verdict", "") == "safe" && cell.run.value("leases_lost", 0) > 0) {
      EXPECT_GT(cell.run["safety"].value("leases_lost_inside", 0), 0)
          << cell.lock << " x " << cell.fault << ": the lock lost a lease that no section recorded";
    }
    EXPECT_TRUE(cell.matches()) << cell.lock << " x " << cell.fault << ": " << cell.observed_text()
                                << ", expected " << cell.expected_text() << " (" << cell.expected_reason << ")"
                                << (cell.error.empty() ? "" : " error: " + cell.error) << " -- kept in " << dir_;
    EXPECT_TRUE(fs::exists(fs::path(dir_) / "cells" / (cell.lock + "__" + cell.fault + ".json")));
  }
  EXPECT_TRUE(fs::exists(fs::path(dir_) / "matrix.md"));
  EXPECT_TRUE(fs::exists(fs::path(dir_) / "matrix.html"));
  EXPECT_TRUE(fs::exists(fs::path(dir_) / "matrix.json"));
}

int locklab(const std::string& args) { return testing::run_locklab(args).exit_code; }

TEST_F(MatrixRun, BinaryExitsZeroWhenTheCellsAreAsExpectedAndTwoOnUsage) {
  EXPECT_EQ(locklab("matrix --quick --lock setnx --fault holder-crash --out '" + dir_ + "'"), 0);
  EXPECT_TRUE(fs::exists(fs::path(dir_) / "cells" / "setnx__holder-crash.json"));
  EXPECT_EQ(locklab("matrix --fault no-such-fault --out '" + dir_ + "'"), 2);
  EXPECT_EQ(locklab("matrix --lock no-such-lock --out '" + dir_ + "'"), 2);
  EXPECT_EQ(locklab("matrix --jobs 0 --out '" + dir_ + "'"), 2);
}

}  // namespace
}  // namespace locklab::harness
