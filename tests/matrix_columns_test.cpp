// The matrix's columns as one table (sweeps/matrix_columns.h): docs/faults.md's
// list is that table rendered, one entry is enough to add a column to the
// matrix, its page and that list, and every view names the table's columns.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/locklab_binary.h"
#include "report/columns_doc.h"
#include "sweeps/matrix.h"
#include "sweeps/matrix_columns.h"
#include "sweeps/matrix_expectations.h"
#include "sweeps/user_expectations.h"

namespace locklab::harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string read_text(const fs::path& path) { return testing::slurp(path.string()); }

std::set<std::string> table_names(std::span<const MatrixColumn> table = matrix_columns()) {
  std::set<std::string> names;
  for (const auto& column : table) names.insert(column.heading.name);
  return names;
}

// docs/faults.md's list of the columns is the table rendered, byte for byte:
// `locklab list columns --write-doc docs/faults.md` after any change to it.
TEST(MatrixColumns, DocsColumnListIsTheTables) {
  const std::string doc = read_text(LOCKLAB_FAULTS_DOC);
  ASSERT_FALSE(doc.empty()) << LOCKLAB_FAULTS_DOC;
  const std::string block = columns_block(doc);
  ASSERT_FALSE(block.empty()) << "docs/faults.md has no " << kColumnsBegin << " ... " << kColumnsEnd << " block";
  EXPECT_EQ(block, columns_markdown(columns_doc()))
      << "docs/faults.md's columns differ from the table: build/default/harness/locklab list columns --write-doc "
         "docs/faults.md";
  // Writing the block again changes nothing: what the test compares is what the command writes.
  auto rewritten = with_columns_block(doc, columns_markdown(columns_doc()));
  ASSERT_TRUE(rewritten) << rewritten.error().message;
  EXPECT_EQ(*rewritten, doc);
}

// Every Redis generation has a written cell in every column, and every column
// states its bite: the list cannot leave a cell or a bite out.
TEST(MatrixColumns, EveryColumnWritesEveryGenerationAndItsBite) {
  for (const auto& column : matrix_columns()) {
    EXPECT_FALSE(column.heading.bites.empty()) << column.heading.name << " states no bite";
    EXPECT_NE(column.plan, nullptr) << column.heading.name;
    for (const auto& generation : generations())
      EXPECT_TRUE(expected_cell(generation.name, column.heading.name)) << generation.name << " x " << column.heading.name;
  }
}

void plan_slow_holder_2x(CellPlan& plan, const LockDescription&, bool) {
  plan.faults = {"slow-holder:ms=" + std::to_string(2 * plan.options.ttl_ms)};
}

constexpr GenerationCell kSlowHolder2xCells[] = {
    {"set-nx-px-token", CellClass::me_violation, "the lease lapses while the holder still works (2 x ttl)"},
};

// The table with one more column: an entry, and nothing else.
std::vector<MatrixColumn> table_with_one_more() {
  std::vector<MatrixColumn> table(matrix_columns().begin(), matrix_columns().end());
  table.push_back({.heading = {.name = "slow-holder-2x",
                               .title = "slow CS 2 x TTL",
                               .anchor_row = "3b",
                               .how = "slow-holder: one critical section lasts 2 x ttl, process alive",
                               .bites = "the section outlived its lease's earliest end while another client tried"},
                   .plan = plan_slow_holder_2x,
                   .generations = kSlowHolder2xCells});
  return table;
}

class MatrixColumnsRun : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "locklab-columns-XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
  }
  void TearDown() override {
    std::error_code ignored;
    if (!HasFailure()) fs::remove_all(dir_, ignored);  // a failed matrix is kept for reading
  }
  // The quick matrix of set-nx-px-token's one cell in the new column, over `table`.
  Result<MatrixResult> run_new_cell(std::span<const MatrixColumn> table) const {
    MatrixOptions options;
    options.quick = true;
    options.out = dir_;
    options.progress = false;
    options.locks = {"set-nx-px-token"};
    options.faults = {"slow-holder-2x"};
    options.columns = table;
    return run_matrix(options);
  }
  std::string dir_;
};

// One entry adds a column: the matrix measures its cell against real Redis and
// records it (the result, cells/*.json, matrix.json's columns), the page and
// the table draw its title, and docs/faults.md's list would have its section.
TEST_F(MatrixColumnsRun, OneEntryAddsAColumn) {
  const std::vector<MatrixColumn> table = table_with_one_more();
  auto result = run_new_cell(table);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_EQ(result->cells.size(), 1u);
  const Cell& cell = result->cells.front();
  EXPECT_EQ(cell.fault, "slow-holder-2x");
  EXPECT_EQ(cell.expected, CellClass::me_violation);
  EXPECT_EQ(cell.expected_reason, kSlowHolder2xCells[0].reason);
  EXPECT_TRUE(cell.matches()) << cell.observed_text() << ": " << cell.error;
  EXPECT_EQ(cell.specs, std::vector<std::string>{"slow-holder:ms=1000"});

  const json file = json::parse(read_text(fs::path(dir_) / "cells" / "set-nx-px-token__slow-holder-2x.json"));
  EXPECT_EQ(file.value("fault", ""), "slow-holder-2x");
  EXPECT_EQ(file.value("expected", ""), "me-violation");
  const json summary = json::parse(read_text(fs::path(dir_) / "matrix.json"));
  ASSERT_EQ(summary["columns"].size(), 1u);
  EXPECT_EQ(summary["columns"][0].value("title", ""), "slow CS 2 x TTL");
  // No library row: no nearest generation to name, whatever the new column shows.
  EXPECT_TRUE(summary["nearest_generations"].empty()) << summary["nearest_generations"].dump();
  EXPECT_NE(read_text(fs::path(dir_) / "matrix.md").find("slow CS 2 x TTL (3b)"), std::string::npos);
  const std::string page = read_text(fs::path(dir_) / "matrix.html");
  EXPECT_NE(page.find(">slow CS 2 x TTL (3b)</th>"), std::string::npos);

  // Read back, the matrix keeps the headings it recorded, though the shipped table has no such column.
  auto loaded = load_matrix(dir_);
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_EQ(loaded->columns.size(), 1u);
  EXPECT_EQ(loaded->columns[0].title, "slow CS 2 x TTL");

  const std::string markdown = columns_markdown(columns_doc(table));
  EXPECT_NE(markdown.find("#### `slow-holder-2x` — slow CS 2 x TTL (anchors row 3b)\n"), std::string::npos);
  EXPECT_NE(markdown.find("| set-nx-px-token | slow-holder-2x | me-violation | " +
                          std::string(kSlowHolder2xCells[0].reason) + " |"),
            std::string::npos);
  EXPECT_EQ(find_matrix_column("slow-holder-2x"), nullptr) << "the shipped table is untouched";
}

// An entry without a plan injects nothing: a run with no fault reads `safe`
// on its own, so the matrix must say `error` for such a cell (and not crash).
TEST_F(MatrixColumnsRun, AColumnWithoutAPlanReadsError) {
  std::vector<MatrixColumn> table = table_with_one_more();
  table.back().plan = nullptr;
  auto result = run_new_cell(table);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_EQ(result->cells.size(), 1u);
  EXPECT_EQ(result->cells.front().observed, CellClass::error) << result->cells.front().observed_text();
  EXPECT_FALSE(result->cells.front().matches());
  EXPECT_NE(result->cells.front().error.find("injected no fault"), std::string::npos) << result->cells.front().error;
}

// Each view names the table's columns, and only them: `locklab list columns`
// (and its markdown), a matrix's recorded columns, and a user's --expect file.
TEST(MatrixColumns, EveryViewNamesTheTablesColumns) {
  const testing::Outcome listed = testing::run_locklab("list columns");
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  std::set<std::string> names;
  std::istringstream lines(listed.out);
  for (std::string line; std::getline(lines, line);) names.insert(line.substr(0, line.find(' ')));
  EXPECT_EQ(names, table_names());
  const testing::Outcome markdown = testing::run_locklab("list columns --markdown");
  ASSERT_EQ(markdown.exit_code, 0) << markdown.err;
  EXPECT_EQ(markdown.out, columns_markdown(columns_doc()));

  // --fault names the table's columns, and refuses any other (naming them all).
  MatrixOptions options;
  options.faults = {"holder-crash", "no-such-column"};
  options.locks = {"setnx"};
  options.out = (fs::temp_directory_path() / "locklab-columns-unused").string();
  auto refused = run_matrix(options);
  ASSERT_FALSE(refused);
  for (const auto& name : table_names())
    EXPECT_NE(refused.error().message.find(name), std::string::npos) << "--fault's error lists " << name;

  // A user's --expect file may name the table's columns, and no other.
  const testing::ScratchDir scratch("locklab-columns-expect");
  std::ofstream(scratch.path("expect.json")) << R"({"ext:mine": {"no-such-column": "safe"}})";
  auto parsed = read_user_expectations(scratch.path("expect.json"));
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().message.find("'no-such-column' is not a matrix column"), std::string::npos)
      << parsed.error().message;
}

}  // namespace
}  // namespace locklab::harness
