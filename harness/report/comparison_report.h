// The report: many run documents rendered side by side. Markdown for the
// terminal and reviews; one self-contained HTML page (inline CSS and SVG, no
// scripts, no network) with a throughput chart, a violations chart and, per
// run, a timeline of who held the lock when, overlaps in red.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "redis/result.h"

namespace locklab::harness {

using RunDocuments = std::vector<nlohmann::json>;

std::string markdown_report(const RunDocuments& runs);
std::string html_report(const RunDocuments& runs);
// html_report() is html_head(title, comparison_html_css()) + comparison_html_body() + html_tail()
// (report/html.h); the index page puts the body in a section of its own.
std::string comparison_html_css();
std::string comparison_html_body(const RunDocuments& runs);
// The counter demo as plain text: expected vs final counter per generation.
std::string counter_table(const RunDocuments& runs);

// One timeline as a standalone SVG: {clients, sections: [[lane, from_ms, to_ms, fenced_off?]...],
// overlaps: [[from_ms, to_ms]...], labels?: [lane names]} -- a run's "timeline" or a scenario's.
std::string render_timeline(const nlohmann::json& timeline);
// An inline <svg> made a file of its own (namespace and XML declaration added).
std::string standalone_svg(std::string inline_svg);

// Writes report.md and report.html into `dir` (created if missing), atomically.
Status write_report(const RunDocuments& runs, const std::string& dir);

}  // namespace locklab::harness
