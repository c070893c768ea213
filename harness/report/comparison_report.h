// The comparison (`locklab report`, `locklab compare`): many run documents
// rendered side by side. Markdown for the terminal and reviews; one
// self-contained HTML page (inline CSS and SVG, no scripts, no network) with a
// throughput chart, a violations chart and, per run, its header and its
// timeline of who held the lock when, overlaps in red (timeline_svg.h).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "redis/result.h"

namespace locklab::harness {

using RunDocuments = std::vector<nlohmann::json>;

std::string markdown_report(const RunDocuments& runs);
std::string html_report(const RunDocuments& runs);
// html_report() is html_head(title, comparison_html_css()) + comparison_html_body() + html_tail()
// (report/html.h); the index page puts the body in a section of its own.
std::string comparison_html_css();
std::string comparison_html_body(const RunDocuments& runs);

// Writes report.md and report.html into `dir` (created if missing), atomically.
Status write_report(const RunDocuments& runs, const std::string& dir);

}  // namespace locklab::harness
