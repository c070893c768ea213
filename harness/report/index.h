// The one page a full run opens with (scripts/run): DIR/index.html, the fault
// matrix and then the comparison on one self-contained page, and DIR/index.md,
// the matrix's matrix.md and the comparison's report.md one after the other.
#pragma once

#include <string>

#include "redis/result.h"

#include "report/comparison_report.h"
#include "report/matrix_cells.h"

namespace locklab::harness {

// index.html: the head, links to both anchors, <section id="matrix"> with the
// matrix page's body, <section id="comparison"> with the comparison page's body
// (each page's CSS scoped to its section). The matrix and the runs are the ones
// the pages in DIR were drawn from.
std::string index_html(const MatrixResult& matrix, const RunDocuments& comparison);

// Writes DIR/index.html and DIR/index.md (matrix.dir/matrix.md + "\n" +
// DIR/report.md, byte for byte), atomically. An Error: a .md file to join is
// missing, or a file could not be written.
Status write_index(const std::string& dir, const MatrixResult& matrix, const RunDocuments& comparison);

}  // namespace locklab::harness
