// Result documents: required keys, atomic writes (never a partial file), the report.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "report/comparison_report.h"
#include "report/html.h"
#include "report/index.h"
#include "report/lost_updates_table.h"
#include "report/matrix_report.h"
#include "report/run_header.h"
#include "report/scale_report.h"
#include "report/timeline_svg.h"
#include "run/run_document.h"

namespace locklab::harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "locklab-results-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  fs::path operator/(const std::string& name) const { return fs::path(path_) / name; }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(path_)) names.push_back(entry.path().filename().string());
    return names;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A document with every required key, filled with plausible values.
json complete_document(const std::string& lock = "lua-safe-delete") {
  json document = json::object();
  for (const auto& key : required_run_keys()) document[json::json_pointer(key)] = 0;
  document["schema"] = kRunSchema;
  document["lock"] = lock;
  document["config"] = {{"clients", 2}, {"mode", "process"}, {"duration_s", 1.0}};
  document["redis"]["endpoints"] = json::array({"127.0.0.1:7000"});
  document["redis"]["version"] = "7.0.15";
  document["fairness"]["per_client_acquired"] = {3, 4};
  document["verdict"] = "violation";
  document["verdict_reasons"] = {"1 overlapping critical-section pairs (up to 2 holders at once)"};
  document["safety"]["overlaps"] = 1;
  document["timeline"] = {{"clients", 2},
                          {"sections", {{0, 0.0, 1.0}, {1, 0.5, 1.5}, {0, 2.0, 2.5}}},
                          {"overlaps", {{0.5, 1.0}}}};
  return document;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(Results, CompleteDocumentRoundTrips) {
  TempDir dir;
  const json document = complete_document();
  EXPECT_TRUE(missing_run_keys(document).empty());
  const auto path = (dir / "run.json").string();
  ASSERT_TRUE(write_json_atomically(path, document));
  auto loaded = load_run(path);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(*loaded, document);
}

TEST(Results, EveryRequiredKeyIsChecked) {
  for (const auto& key : required_run_keys()) {
    json document = complete_document();
    const json::json_pointer pointer(key);
    document[pointer.parent_pointer()].erase(pointer.back());
    const auto missing = missing_run_keys(document);
    ASSERT_EQ(missing.size(), 1u) << key;
    EXPECT_EQ(missing.front(), key);
  }
  json wrong_schema = complete_document();
  wrong_schema["schema"] = "locklab.run/0";
  EXPECT_FALSE(missing_run_keys(wrong_schema).empty());
}

// locklab.run/2 added the faults' bite; a /1 document (results made before it) is still read.
TEST(Results, ReadsTheEarlierSchemaVersionToo) {
  json v1 = complete_document();
  v1["schema"] = kRunSchemaV1;
  EXPECT_TRUE(missing_run_keys(v1).empty());
  EXPECT_STREQ(kRunSchema, "locklab.run/2");
}

TEST(Results, LoadRejectsGarbageWithItsFileName) {
  TempDir dir;
  const auto path = (dir / "garbage.json").string();
  std::ofstream(path) << "{ not json";
  auto loaded = load_run(path);
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().message.find("garbage.json"), std::string::npos);
  std::ofstream(path, std::ios::trunc) << R"({"schema": "locklab.run/1"})";
  EXPECT_FALSE(load_run(path));
}

TEST(Results, AtomicWriteReplacesWholeAndLeavesNoTempFile) {
  TempDir dir;
  const auto path = (dir / "out.json").string();
  ASSERT_TRUE(write_file_atomically(path, std::string(100'000, 'a')));
  ASSERT_TRUE(write_file_atomically(path, "short"));
  EXPECT_EQ(slurp(path), "short");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.json"}) << "no temp file left behind";
}

TEST(Results, FailedAtomicWriteLeavesNothingAtThePath) {
  TempDir dir;
  // Into a missing directory: nothing created anywhere.
  EXPECT_FALSE(write_file_atomically((dir / "missing/out.json").string(), "x"));
  EXPECT_TRUE(dir.entries().empty());
  // Onto a directory: rename fails, the directory stays, the temp file is removed.
  fs::create_directory(dir / "taken");
  auto failed = write_file_atomically((dir / "taken").string(), "x");
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find("taken"), std::string::npos);
  EXPECT_TRUE(fs::is_directory(dir / "taken"));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"taken"});
}

TEST(Report, MarkdownHtmlAndLostUpdatesTable) {
  TempDir dir;
  const RunDocuments runs = {complete_document("no-lock"), complete_document("lua-safe-delete")};
  const std::string markdown = markdown_report(runs);
  EXPECT_NE(markdown.find("| no-lock | violation |"), std::string::npos) << markdown;
  const std::string html = html_report(runs);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("fill=\"#d62728\""), std::string::npos) << "overlapping sections drawn in red";
  EXPECT_EQ(html.find("http"), std::string::npos) << "self-contained: no links to fetch";
  const std::string table = lost_updates_table(runs);
  EXPECT_EQ(table.rfind("lock ", 0), 0u) << table;
  EXPECT_NE(table.find("\nlua-safe-delete "), std::string::npos) << table;
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 3) << "a header line and one per run: " << table;
  ASSERT_TRUE(write_report(runs, (dir / "report").string()));
  EXPECT_TRUE(fs::exists(dir / "report/report.md"));
  EXPECT_TRUE(fs::exists(dir / "report/report.html"));
}

// `locklab compare` prints the reasons' heading only above reasons (issue 19 §1):
// a comparison where no run had any prints no empty "Verdict reasons:".
TEST(Report, TheReasonsHeadingOnlyAboveReasons) {
  json quiet = complete_document("lua-safe-delete");
  quiet["verdict_reasons"] = json::array();
  EXPECT_EQ(markdown_report({quiet, quiet}).find("Verdict reasons"), std::string::npos) << markdown_report({quiet});
  const std::string with = markdown_report({quiet, complete_document("no-lock")});
  const auto heading = with.find("Verdict reasons:");
  ASSERT_NE(heading, std::string::npos) << with;
  EXPECT_NE(with.find("- **no-lock**: 1 overlapping", heading), std::string::npos) << with;
}

// An adapter's lock commands go from the adapter's process, which the client's
// counters do not see (review #6): its row's client round trips would be the
// counter's GET/SET alone, so RT/acq says "—"; srv cmds/acq (the servers' own
// count) stays, and the legends say so.
TEST(Report, AnAdaptersRowHasNoClientRoundTrips) {
  json generation = complete_document("lua-safe-delete");
  generation["cost"]["round_trips_per_acquisition"] = 5.7;
  generation["cost"]["server_commands_per_acquisition"] = 5.7;
  json adapter = complete_document("ext:redis-py");
  adapter["cost"]["round_trips_per_acquisition"] = 2.0;
  adapter["cost"]["server_commands_per_acquisition"] = 4.9;
  adapter["adapters"]["ext:redis-py"] = {{"noop_us", {{"p50", 20}, {"p99", 90}}}};
  const std::string markdown = markdown_report({generation, adapter});
  const auto row = markdown.find("| ext:redis-py | violation |");
  ASSERT_NE(row, std::string::npos) << markdown;
  const std::string line = markdown.substr(row, markdown.find('\n', row) - row);
  EXPECT_EQ(line.find(" 2.0 |"), std::string::npos) << "the harness's own GET/SET shown as the lock's round trips: "
                                                     << line;
  EXPECT_NE(line.find(" — | 4.9 |"), std::string::npos) << line;
  EXPECT_NE(markdown.find("| lua-safe-delete | violation |"), std::string::npos);
  EXPECT_NE(markdown.find(" 5.7 | 5.7 |"), std::string::npos) << "a generation's row keeps its round trips";
  EXPECT_EQ(markdown.find("included in every figure"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("RT/acq is — for a lock behind an adapter"), std::string::npos) << markdown;
  const std::string html = html_report({generation, adapter});
  EXPECT_NE(html.find("RT/acq is — for a lock behind an adapter"), std::string::npos);
}

TEST(Report, EscapesNamesInHtml) {
  const std::string html = html_report({complete_document("<script>")});
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
}

// The full pages are the shared frame around their bodies, so the index page
// can hold the same bodies.
TEST(Report, PagesAreHeadBodyTail) {
  const RunDocuments runs = {complete_document("no-lock")};
  EXPECT_EQ(html_report(runs), html_head("locklab comparison", comparison_html_css()) + comparison_html_body(runs) +
                                   html_tail());
  MatrixResult matrix;
  EXPECT_EQ(matrix_html(matrix), html_head("locklab fault matrix", matrix_html_css()) + matrix_html_body(matrix) +
                                     html_tail());
}

// The pages' CSS rules are said once (issue 29): each page's CSS starts with the
// shared body rule (the comparison and the scale page with the shared table
// rules too), and the pages that draw timelines carry the timeline's rules.
TEST(Report, PagesShareTheirCssRules) {
  EXPECT_EQ(body_css(1500), "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1500px}");
  EXPECT_EQ(body_css(0, "1.5em"), "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}") << "no width";
  EXPECT_EQ(page_css(1200).rfind(body_css(1200), 0), 0u);
  EXPECT_EQ(comparison_html_css().rfind(page_css(1200), 0), 0u) << comparison_html_css();
  EXPECT_NE(comparison_html_css().find(timeline_css()), std::string::npos);
  EXPECT_EQ(matrix_html_css().rfind(body_css(1500), 0), 0u) << matrix_html_css();
  EXPECT_EQ(matrix_html_css().find(page_css(1500)), std::string::npos) << "the matrix styles its own table";
  EXPECT_NE(matrix_html_css().find(timeline_css()), std::string::npos);
  EXPECT_NE(scale_html(ScaleSweep{}).find("<style>" + page_css(1200)), std::string::npos);
  EXPECT_NE(index_html(MatrixResult{}, {complete_document("no-lock")}).find("<style>" + body_css(0, "1.5em")),
            std::string::npos);
  const std::string timeline = render_timeline(timeline_of(complete_document()));
  EXPECT_NE(timeline.find("class=\"lane\""), std::string::npos) << "the class timeline_css() styles: " << timeline;
}

// How much a run's clients did, said by one function for a run's header and
// for the comparison's line over many runs: a count of attempts, or seconds.
TEST(Report, WorkloadTextSaysAttemptsOrSeconds) {
  EXPECT_EQ(workload_text(json{{"ops", 400}, {"duration_s", nullptr}}), "400 attempts");
  EXPECT_EQ(workload_text(json{{"ops", 1000000}}, true), "1000000 attempts") << "a count, never 1e+06";
  EXPECT_EQ(workload_text(json{{"ops", nullptr}, {"duration_s", 2.5}}), "2.5 s");
  EXPECT_EQ(workload_text(json{{"duration_s", 3.0}}, true), "3 s each");
  EXPECT_EQ(workload_text(json{{"duration_s", "3"}}), "") << "not a number: not recorded";
  EXPECT_EQ(workload_text(json::object()), "");
  const json run = complete_document();  // 2 process clients, duration 1 s
  EXPECT_NE(run_header(run).find("2 process clients, 1 s, hold"), std::string::npos) << run_header(run);
  const std::string markdown = markdown_report({run, run});
  EXPECT_NE(markdown.find("2 process clients, 1 s each, hold"), std::string::npos) << markdown;
}

TEST(Index, BothBodiesInTheirSectionsEachWithItsOwnCss) {
  const RunDocuments runs = {complete_document("no-lock")};
  MatrixResult matrix;
  const std::string html = index_html(matrix, runs);
  const auto matrix_at = html.find("<section id=\"matrix\">\n" + matrix_html_body(matrix));
  const auto comparison_at = html.find("<section id=\"comparison\">\n" + comparison_html_body(runs));
  ASSERT_NE(matrix_at, std::string::npos);
  ASSERT_NE(comparison_at, std::string::npos);
  EXPECT_LT(matrix_at, comparison_at) << "the matrix first";
  EXPECT_LT(html.find("href=\"#comparison\""), matrix_at) << "links to both anchors at the top";
  EXPECT_NE(html.find("#matrix th,#matrix td{border:1px solid #bbb"), std::string::npos) << html.substr(0, 2000);
  EXPECT_NE(html.find("#comparison td:first-child,#comparison td:nth-child(2){text-align:left}"), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos) << "self-contained: no links to fetch";
}

TEST(Index, IndexMdJoinsTheTwoFilesAndAMissingOneIsAnError) {
  TempDir dir;
  MatrixResult matrix;
  matrix.dir = (dir / "matrix").string();
  fs::create_directories(matrix.dir);
  ASSERT_FALSE(write_index((dir / "").string(), matrix, {complete_document("no-lock")})) << "no matrix.md yet";
  std::ofstream(dir / "matrix/matrix.md") << "# matrix\n";
  std::ofstream(dir / "report.md") << "# report\n";
  ASSERT_TRUE(write_index((dir / "").string(), matrix, {complete_document("no-lock")}));
  std::ifstream in(dir / "index.md");
  const std::string md((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(md, "# matrix\n\n# report\n");
  EXPECT_TRUE(fs::exists(dir / "index.html"));
}

}  // namespace
}  // namespace locklab::harness
