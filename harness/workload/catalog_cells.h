// The matrix cells a shipped catalog row expects (harness/adapters/catalog.json, an entry's
// "expected"): each derived from the library's source, with the reason docs/peers.md gives beside
// the file and line (and, where a run found the library otherwise, what it found). The catalog
// writes class words; they stay words here (a run's workload cannot see report/'s CellClass), and
// sweeps/matrix_expectations parses them. A variant row (ext:BASE+VARIANT) may write only the
// cells its departure changes: the others are its base row's (with_base_cells).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "redis/result.h"

namespace locklab::harness {

struct CatalogCell {
  std::string class_word;              // "safe", "me-violation", ... (report/cell_class.h)
  std::string reason;                  // one line: why this cell ends this way
  std::vector<std::string> or_words;   // classes that match too: an interleaving the column does not fix
  bool exposed = false;                // a safe ending is expected exposed (a lease lapsed, nobody entered)
  bool exposed_either = false;         // whether it is exposed is such an interleaving: either matches
};

using CatalogCells = std::map<std::string, CatalogCell>;  // matrix column -> cell

// An entry's "expected" object ({} when absent): {"COLUMN": {"class": WORD, "reason": TEXT,
// "or": WORD | [WORD, WORD], "exposed": BOOL, "exposed_either": BOOL}}; a usage Error of one
// line, starting with `where`, for any other shape. The words are parsed, and the columns checked
// against the matrix's, in sweeps/matrix_expectations (check_catalog_columns).
Result<CatalogCells> read_catalog_cells(const nlohmann::json& entry, const std::string& where);

// A variant's cells: its own, and its base row's for every column it does not write.
CatalogCells with_base_cells(CatalogCells own, const CatalogCells& base);

}  // namespace locklab::harness
