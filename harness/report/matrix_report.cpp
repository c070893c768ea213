#include "report/matrix_report.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "report/html.h"
#include "report/matrix_likeness.h"
#include "report/page_words.h"
#include "report/run_header.h"
#include "report/timeline_svg.h"
#include "support/files.h"
#include "support/json_read.h"

namespace locklab::harness {
namespace {

using nlohmann::json;


std::string integer(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.0f", value);
  return buffer;
}

// The counts behind a measured cell, as "label value" pairs ("-" where not measured).
struct Count {
  const char* label;  // short, for the table cell
  const char* title;  // long, for headers
  const char* pointer;
};

const Count kCounts[] = {
    {"ov", "overlaps", "/safety/overlaps"},
    {"lost", "lost updates", "/safety/lost_updates"},
    {"wo", "wrong-owner releases", "/safety/wrong_owner_releases"},
    {"stalls", "stalls", "/safety/stalls"},
    {"unavail", "unavailability ms", "/safety/unavailability_ms"},
    {"fenced", "stale writes rejected", "/safety/stale_writes_rejected"},
};

std::string count_text(const json& run, const Count& count) {
  const double value = number_at(run, count.pointer, -1);
  return value < 0 ? "-" : integer(value);
}

// The non-zero counts of a cell, e.g. "ov 3 · lost 1" (empty when all are zero).
std::string nonzero_counts(const json& run) {
  std::string out;
  for (const auto& count : kCounts) {
    const double value = number_at(run, count.pointer, -1);
    if (value <= 0) continue;
    out += (out.empty() ? "" : " · ") + std::string(count.label) + " " + integer(value);
  }
  return out;
}

// The seeds' central story (误删) gets its own mark in the headline table:
// " · wo N" after the class where the checker counted N releases that deleted
// another client's lock (a class of its own only when nothing overlapped).
std::string wrong_owner_mark(const Cell& cell) {
  const double releases = number_at(cell.run, "/safety/wrong_owner_releases", 0);
  if (releases <= 0 || cell.observed == CellClass::wrong_owner) return "";
  return " · wo " + integer(releases);
}

// The heading the sweep gave the column (MatrixResult::columns), or nullptr.
const ColumnHeading* heading_of(const MatrixResult& result, const std::string& fault) {
  for (const auto& heading : result.columns)
    if (heading.name == fault) return &heading;
  return nullptr;
}

std::string title_of(const ColumnHeading* column, const std::string& name) {
  return column ? column->title + " (" + column->anchor_row + ")" : name;
}

std::string workload_line(const MatrixResult& result) {
  std::ostringstream out;
  out << result.cells.size() << " cells (" << result.locks.size() << " locks x " << result.faults.size()
      << " faults), " << (result.quick ? "quick" : "full") << " size; " << result.mismatches()
      << " differ from their expected class";
  const auto unwritten = std::count_if(result.cells.begin(), result.cells.end(), [](const Cell& c) { return c.unwritten; });
  if (unwritten > 0) out << " (" << unwritten << " of a lock of your own have none written: what they show is the finding)";
  if (result.errors() > 0) out << ", " << result.errors() << " could not be measured";
  out << ". Each cell: process clients on their own redis-server(s), ttl 500 ms (setnx-expire: 1 s, its EXPIRE takes whole seconds; failover and node-restart: four times "
         "that), a bounded number of attempts (replay one with the `locklab run` line in its cell file).";
  if (!result.command.empty()) out << " Made by: `" << result.command << "`";
  return out.str();
}

// A row's language and version (issue 27: the headline names both): a library's from its
// adapter's init_ok as a run recorded it (run.adapters[lock]), a generation's is locklab's own C++.
std::string row_identity(const MatrixResult& result, const std::string& lock) {
  if (!lock.starts_with("ext:")) return "C++, locklab";
  for (const auto& cell : result.cells) {
    if (cell.lock != lock || !cell.run.is_object()) continue;
    const auto adapters = cell.run.find("adapters");
    if (adapters == cell.run.end() || !adapters->is_object() || !adapters->contains(lock)) continue;
    const auto& adapter = (*adapters)[lock];
    if (!adapter.is_object()) continue;
    std::string language = adapter.value("language", std::string("?"));
    if (!language.empty()) language[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(language[0])));
    if (language == "Javascript") language = "JavaScript";
    return language + ", " + adapter.value("library", std::string("?")) + " " + adapter.value("version", std::string("?"));
  }
  return "-";  // no cell of the row ran an adapter (every one n/a or failed)
}

bool violating(const Cell& cell) {
  return cell.observed == CellClass::me_violation || cell.observed == CellClass::wrong_owner;
}

}  // namespace

std::string matrix_table(const MatrixResult& result) {
  std::ostringstream out;
  out << "# locklab fault matrix\n\n" << workload_line(result) << "\n\n| lock | language, version |";
  for (const auto& fault : result.faults) out << " " << title_of(heading_of(result, fault), fault) << " |";
  out << "\n|---|---|";
  for (std::size_t i = 0; i < result.faults.size(); ++i) out << "---|";
  out << "\n";
  for (const auto& lock : result.locks) {
    out << "| " << lock << " | " << row_identity(result, lock) << " |";
    for (const auto& fault : result.faults) {
      const Cell* cell = result.find(lock, fault);
      if (!cell) {
        out << " |";
        continue;
      }
      out << " " << cell->observed_text() << wrong_owner_mark(*cell);
      if (!cell->matches()) out << " ✗ (expected " << cell->expected_text() << ")";
      out << " |";
    }
    out << "\n";
  }
  return out.str();
}

// A text for a Markdown table cell: a resp: pattern's '|' would end the cell.
static std::string table_text(const std::string& text) {
  std::string escaped;
  for (const char c : text) {
    if (c == '|') escaped += '\\';
    escaped += c;
  }
  return escaped;
}

// What each of the cell's faults was seen to do for its race (its "bite"
// records, docs/harness.md "Bite"); "-" for a cell that ran none.
static std::string bites_text(const nlohmann::json& run) {
  std::string text;
  if (run.is_object() && run.contains("faults") && run["faults"].is_array())
    for (const auto& fault : run["faults"])
      if (fault.is_object() && fault.contains("bite"))
        text += (text.empty() ? "" : "; ") + std::string(fault.value("bit", false) ? "" : "NOT: ") +
                fault.value("bite", std::string());
  return text.empty() ? "-" : text;
}

std::string matrix_markdown(const MatrixResult& result) {
  std::ostringstream out;
  out << matrix_table(result) << likeness_markdown(result);
  out << "\nClasses: safe; me-violation = two holders at once (overlapping sections, lost updates, two live "
         "holders); wrong-owner = a release deleted another client's lock, no overlap; deadlock = a stall behind a "
         "key that never expires; liveness = safe, but nobody could get the lock for half a lease or more; n/a = "
         "the fault makes no sense for this lock. \"exposed\" after safe (or liveness) marks a run whose "
         "verdict was safe although a lease was lost under a holder: nobody happened to enter, so it was safe by "
         "luck, not by design. A cell at any class but n/a had its race run: its fault bit (\"what bit\" below; a "
         "fault that did not bite makes the cell error, docs/harness.md \"Bite\"). \"wo N\" after a class: the checker counted N wrong-owner releases in that run (a "
         "release deleted another client's lock: 误删, the seeds' central story), beside whatever overlapped. ✗ marks a cell whose class differs from the one written "
         "down (docs/faults.md; a library's: docs/peers.md).\n\n## The counts behind each cell\n\n| lock | fault | observed | expected |";
  for (const auto& count : kCounts) out << " " << count.title << " |";
  out << " why (expected) | what bit |\n|---|---|---|---|";
  for (std::size_t i = 0; i < std::size(kCounts); ++i) out << "---:|";
  out << "---|---|\n";
  for (const auto& cell : result.cells) {
    // A lock of the user's own keeps its n/a cells: why a column does not apply is news about it.
    if (cell.observed == CellClass::not_applicable && cell.matches() && !cell.unwritten) continue;
    out << "| " << cell.lock << " | " << cell.fault << " | " << cell.observed_text()
        << (cell.matches() ? "" : " ✗") << " | " << cell.expected_text() << " |";
    for (const auto& count : kCounts) out << " " << count_text(cell.run, count) << " |";
    const std::string why = cell.unwritten && !cell.not_applicable.empty() ? "n/a: " + cell.not_applicable
                                                                            : cell.expected_reason;
    out << " " << table_text(why + (cell.error.empty() ? "" : " — error: " + cell.error) +
                             (cell.observed_reason.empty() ? "" : " — observed: " + cell.observed_reason)) << " | "
        << table_text(bites_text(cell.run)) << " |\n";
  }
  return out.str();
}

std::string matrix_html_css() {
  return body_css(1500) +
         "table{border-collapse:collapse;font-size:12px}th,td{border:1px solid #bbb;padding:3px 5px}"
         "th{background:#f3f3f3;font-weight:600}td.lock{font-weight:600;white-space:nowrap}"
         "td.cell{text-align:center;min-width:70px}.n{display:block;font-size:10px;color:#333}"
         ".variant{font-weight:400;white-space:normal;max-width:260px}"
         ".safe{background:#c7e9c0}.me-violation{background:#f4a3a3}.wrong-owner{background:#d9b8f2}"
         ".deadlock{background:#f7c27f}.liveness{background:#fff1a0}.na{background:#eeeeee;color:#888}"
         ".error{background:#888;color:#fff}.miss{outline:3px solid #000;outline-offset:-3px}"
         ".exposed{background-image:repeating-linear-gradient(45deg,transparent 0 6px,#f4a3a3 6px 9px)}"
         ".legend span{display:inline-block;padding:2px 8px;margin-right:6px;border:1px solid #bbb}" +
         timeline_css() + ".note{color:#555;font-size:13px}";
}

// Under the table: what the counts in a cell are (the key of its Chinese in page_words.cpp).
constexpr const char* kCountsNote =
    "Counts in a cell: ov = overlapping critical-section pairs, lost = lost counter updates, wo = wrong-owner "
    "releases, stalls = stretches with nobody inside while clients waited, unavail = ms from a crash to the next "
    "acquisition, fenced = stale-token accesses the resource refused. Hover a cell for the expected class and why, "
    "and what its fault was seen to do for its race (what bit); a column's header, for when its fault bites. "
    "docs/faults.md has the same reasons (a library's: docs/peers.md).";

std::string matrix_html_body(const MatrixResult& result) {
  std::ostringstream out;
  const std::string& lang = result.lang;
  out << "<h1>" << page_word(lang, "locklab fault matrix") << "</h1>\n<p class=\"note\">"
      << html_escape(workload_line(result)) << "</p>\n<p class=\"legend\">";
  for (CellClass c : {CellClass::safe, CellClass::me_violation, CellClass::wrong_owner, CellClass::deadlock,
                      CellClass::liveness, CellClass::not_applicable, CellClass::error}) {
    const std::string name = class_name(c);
    out << "<span class=\"" << (c == CellClass::not_applicable ? "na" : name) << "\">" << html_escape(name) << "</span>";
  }
  out << "<span class=\"safe exposed\">"
      << html_escape(page_word(lang, "safe, exposed: a lease lost under a holder, nobody entered (safe by luck)"))
      << "</span><span class=\"miss\">" << html_escape(page_word(lang, "differs from expected"))
      << "</span></p>\n<table><tr><th>" << page_word(lang, "lock") << "</th>";
  for (const auto& fault : result.faults) {
    const ColumnHeading* column = heading_of(result, fault);
    const std::string tip = column ? column->how + ". Bites when: " + column->bites : "";
    out << "<th title=\"" << html_escape(tip) << "\">" << html_escape(title_of(column, fault)) << "</th>";
  }
  out << "</tr>\n";
  for (const auto& lock : result.locks) {
    out << "<tr><td class=\"lock\">" << html_escape(lock);
    if (const auto note = result.variant_notes.find(lock); note != result.variant_notes.end())
      out << "<span class=\"n variant\">" << html_escape(note->second) << "</span>";
    out << "</td>";
    for (const auto& fault : result.faults) {
      const Cell* cell = result.find(lock, fault);
      if (!cell) {
        out << "<td></td>";
        continue;
      }
      const std::string name = class_name(cell->observed);
      std::string tip = "expected " + cell->expected_text() + ": " + cell->expected_reason;
      if (!cell->not_applicable.empty()) tip += " (" + cell->not_applicable + ")";
      if (!cell->error.empty()) tip += " -- error: " + cell->error;
      if (!cell->observed_reason.empty()) tip += " -- observed: " + cell->observed_reason;
      if (const std::string bit = bites_text(cell->run); bit != "-") tip += " -- what bit: " + bit;
      out << "<td class=\"cell " << (cell->observed == CellClass::not_applicable ? "na" : name)
          << (cell->exposed ? " exposed" : "") << (cell->matches() ? "" : " miss") << "\" title=\"" << html_escape(tip)
          << "\">" << html_escape(cell->observed_text());
      if (!cell->matches()) out << " ✗<span class=\"n\">expected " << html_escape(cell->expected_text()) << "</span>";
      if (const std::string counts = nonzero_counts(cell->run); !counts.empty())
        out << "<span class=\"n\">" << html_escape(counts) << "</span>";
      out << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</table>\n<p class=\"note\">"
      << html_escape(page_word(lang, kCountsNote)) << "</p>\n"
      << likeness_html(result);
  out << "<h2>" << html_escape(page_word(lang, "Violating cells: who held the lock when")) << "</h2>\n<p class=\"note\">"
      << html_escape(page_word(lang, "One lane per client, a bar per critical section, red bands where two or more were "
                                     "inside at once; grey bars were refused by the fenced resource; purple rows are the "
                                     "faults (a tick per act), amber bands the stalls."))
      << "</p>\n";
  for (const auto& cell : result.cells) {
    if (!violating(cell)) continue;
    out << "<h3>" << html_escape(cell.lock) << " × " << html_escape(cell.fault) << " — " << html_escape(class_name(cell.observed))
        << (cell.matches() ? "" : " (" + page_word(lang, "expected {0}", {cell.expected_text()}) + ")") << "</h3>\n";
    const auto reasons = cell.run.is_object() ? cell.run.value("verdict_reasons", json::array()) : json::array();
    out << "<p class=\"note\">" << html_escape(cell.expected_reason);
    for (const auto& reason : reasons) out << "; " << html_escape(reason.get<std::string>());
    out << "</p>\n" << render_timeline(cell.run.is_object() ? timeline_of(cell.run) : json::object())
        << "\n";
  }
  return out.str();
}

std::string matrix_html(const MatrixResult& result) {
  return html_head(page_word(result.lang, "locklab fault matrix"), matrix_html_css(), html_lang(result.lang)) +
         matrix_html_body(result) + html_tail();
}

json matrix_summary_json(const MatrixResult& result) {
  json cells = json::array();
  for (const auto& cell : result.cells) {
    json summary = cell_json(cell);
    summary.erase("run");
    summary.erase("schema");
    if (cell.run.is_object()) {
      summary["verdict"] = cell.run.value("verdict", "");
      summary["safety"] = cell.run.value("safety", json::object());
    }
    cells.push_back(std::move(summary));
  }
  json columns = json::array();
  for (const auto& heading : result.columns) columns.push_back(heading_json(heading));
  return {{"schema", kMatrixSchema}, {"quick", result.quick},         {"command", result.command},
          {"locks", result.locks},   {"faults", result.faults},       {"columns", columns}, {"mismatches", result.mismatches()},
          {"errors", result.errors()}, {"nearest_generations", likeness_json(result)}, {"cells", cells}};
}

Status write_matrix_report(const MatrixResult& result) {
  const std::filesystem::path base(result.dir);
  if (auto written = write_json_atomically((base / "matrix.json").string(), matrix_summary_json(result)); !written)
    return written;
  if (auto written = write_file_atomically((base / "matrix.md").string(), matrix_markdown(result)); !written)
    return written;
  return write_file_atomically((base / "matrix.html").string(), matrix_html(result));
}

}  // namespace locklab::harness
