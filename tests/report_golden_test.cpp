// The Markdown report, byte for byte: a fixed set of synthetic run documents
// (tests/golden/report_runs.json) rendered and compared to the committed
// tests/golden/report.md. A change in the report's layout shows up here as a
// diff to review, not as a silent drift.
//
// After an intended change, regenerate the golden file and review its diff:
//   LOCKLAB_UPDATE_GOLDEN=1 ctest --preset default -R ReportGolden
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "report/comparison_report.h"

#ifndef LOCKLAB_GOLDEN_DIR
#error "LOCKLAB_GOLDEN_DIR must name tests/golden in the source tree"
#endif

namespace locklab::harness {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(ReportGolden, MarkdownMatchesTheCommittedFile) {
  const std::string dir = LOCKLAB_GOLDEN_DIR;
  const std::string input = slurp(dir + "/report_runs.json");
  ASSERT_FALSE(input.empty()) << "missing " << dir << "/report_runs.json";
  const auto runs = nlohmann::json::parse(input).get<RunDocuments>();
  ASSERT_EQ(runs.size(), 4u);  // lua-safe-delete twice: 4 clients and 1 (the cost table)
  const std::string rendered = markdown_report(runs);
  const std::string golden_path = dir + "/report.md";

  if (const char* update = std::getenv("LOCKLAB_UPDATE_GOLDEN"); update != nullptr && std::string(update) == "1") {
    std::ofstream(golden_path, std::ios::binary | std::ios::trunc) << rendered;
    GTEST_SKIP() << "rewrote " << golden_path << ": review its diff";
  }
  const std::string golden = slurp(golden_path);
  ASSERT_FALSE(golden.empty()) << "missing " << golden_path << " (LOCKLAB_UPDATE_GOLDEN=1 writes it)";
  EXPECT_EQ(rendered, golden) << "the report changed; if intended: LOCKLAB_UPDATE_GOLDEN=1 ctest -R ReportGolden";
}

}  // namespace
}  // namespace locklab::harness
