// The matrix report: DIR/matrix.md (terminal, reviews), DIR/matrix.html (one
// self-contained page: a table with one colour per class, the counts behind
// each cell, expected vs observed, and the timeline of every violating cell),
// DIR/matrix.json (every cell's class, without the run documents).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "redis/result.h"

#include "report/matrix_cells.h"

namespace locklab::harness {

// The heading and the generation x fault table alone (what `locklab matrix` prints).
std::string matrix_table(const MatrixResult& result);
std::string matrix_markdown(const MatrixResult& result);
std::string matrix_html(const MatrixResult& result);
// matrix_html() is html_head(title, matrix_html_css()) + matrix_html_body() + html_tail()
// (report/html.h); the index page puts the body in a section of its own.
std::string matrix_html_css();
std::string matrix_html_body(const MatrixResult& result);
nlohmann::json matrix_summary_json(const MatrixResult& result);

// Writes the three files into result.dir, atomically.
Status write_matrix_report(const MatrixResult& result);

}  // namespace locklab::harness
