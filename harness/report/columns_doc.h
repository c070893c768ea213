// docs/faults.md's list of the matrix's columns, rendered from data: each
// column's heading, how it injects, when it bites, a note, and the cells
// written down for the generations. The sweep fills the data from its column
// table (sweeps/matrix_columns.h); this file only writes markdown, and puts it
// between the doc's markers, so the list can never drift from the table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "redis/result.h"

#include "report/matrix_cells.h"

namespace locklab::harness {

inline constexpr std::string_view kColumnsBegin = "<!-- columns:begin -->";
inline constexpr std::string_view kColumnsEnd = "<!-- columns:end -->";

// One generation's written cell, as the table shows it.
struct ColumnDocRow {
  std::string generation;
  std::string expected;  // "safe", "me-violation or safe", "safe, exposed"
  std::string reason;
};

struct ColumnDoc {
  ColumnHeading heading;
  std::string note;  // prose under the bite ("" for none)
  std::vector<ColumnDocRow> rows;
};

// The markdown of every column: "#### `name` — title (anchors row N)", how,
// "Bites when: ...", the note, then "| generation | fault | expected | why |".
std::string columns_markdown(const std::vector<ColumnDoc>& columns);

// `doc` with the text between its kColumnsBegin and kColumnsEnd lines
// replaced by `markdown`; an Error when the markers are missing or out of order.
Result<std::string> with_columns_block(const std::string& doc, const std::string& markdown);

// The text between the markers ("" when they are missing), as with_columns_block() writes it.
std::string columns_block(const std::string& doc);

}  // namespace locklab::harness
