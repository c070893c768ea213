#include "report/columns_doc.h"

#include <sstream>

namespace locklab::harness {
namespace {

void write_column(std::ostringstream& out, const ColumnDoc& column) {
  const ColumnHeading& h = column.heading;
  out << "#### `" << h.name << "` — " << h.title << " (anchors row " << h.anchor_row << ")\n\n"
      << h.how << ".\n\nBites when: " << h.bites << " ([harness.md](harness.md#bite)).\n\n";
  if (!column.note.empty()) out << column.note << "\n\n";
  out << "| generation | fault | expected | why |\n|---|---|---|---|\n";
  for (const auto& row : column.rows)
    out << "| " << row.generation << " | " << h.name << " | " << row.expected << " | " << row.reason << " |\n";
}

// Where the block starts (just past the begin marker's line) and ends (at the end marker's line).
struct BlockSpan {
  std::size_t from = std::string::npos;
  std::size_t to = std::string::npos;
};

BlockSpan block_span(const std::string& doc) {
  const auto begin = doc.find(kColumnsBegin);
  if (begin == std::string::npos) return {};
  const auto from = doc.find('\n', begin);
  const auto to = doc.find(kColumnsEnd, begin);
  if (from == std::string::npos || to == std::string::npos || to < from) return {};
  return {from + 1, to};
}

}  // namespace

std::string columns_markdown(const std::vector<ColumnDoc>& columns) {
  std::ostringstream out;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) out << "\n";
    write_column(out, columns[i]);
  }
  return out.str();
}

// The block is set off by a blank line on each side, so the markers stay out of the markdown around them.
Result<std::string> with_columns_block(const std::string& doc, const std::string& markdown) {
  const BlockSpan span = block_span(doc);
  if (span.from == std::string::npos)
    return Error{ErrorKind::usage, "no '" + std::string(kColumnsBegin) + "' line followed by '" +
                                       std::string(kColumnsEnd) + "' in the document"};
  return doc.substr(0, span.from) + "\n" + markdown + "\n" + doc.substr(span.to);
}

std::string columns_block(const std::string& doc) {
  const BlockSpan span = block_span(doc);
  if (span.from == std::string::npos) return "";
  std::string block = doc.substr(span.from, span.to - span.from);
  // Undo the blank lines with_columns_block() sets around the markdown.
  if (block.starts_with("\n")) block.erase(0, 1);
  if (block.ends_with("\n\n")) block.pop_back();
  return block;
}

}  // namespace locklab::harness
