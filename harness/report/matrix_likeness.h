// "Which generation is your library?" (issue 18 §4): for every library row of
// a matrix (`ext:NAME`), the generation whose observed row is closest to it,
// cell by cell, and the cells where the two differ. The report draws it under
// the table (matrix.md, matrix.html) and puts it in matrix.json.
//
// Closest = the most columns alike among those measured in both rows: the
// same observed class (n/a included: a column that makes no sense for both is
// a likeness too), or two classes each cell accepts (a cell written down with
// two classes, e.g. generation 5's unavailable-release "liveness or safe", is
// not unlike a row that drew the other one in this run). An `error` cell was
// not measured: its column is neither compared nor a difference, only listed
// as not measured. Between generations as close, the one n/a in the same
// columns wins (the same shape: one node or several, a release window or
// none), then the one listed first (teaching order); the others as close are
// named. A library with no column measured in both its row and a generation's
// gets no nearest generation, and the report says so. Rows not named
// `ext:...` are the generations; no-lock and local-mutex (n/a everywhere) take
// part like any.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/matrix_cells.h"

namespace locklab::harness {

// A column where the library's class is not the generation's.
struct Difference {
  std::string fault;
  CellClass library = CellClass::error;
  CellClass generation = CellClass::error;
};

struct Likeness {
  std::string library;             // the row: "ext:redis-lock"
  std::string generation;          // the nearest generation's row: "set-nx-px-token"; "" = none (nothing measured)
  std::vector<std::string> also;   // generations exactly as close, in row order
  int equal = 0;                   // columns with the same class
  int compared = 0;                // columns both rows have a measured cell in (neither `error`)
  int same_shape = 0;              // columns n/a in both rows, or in neither (an error cell is not n/a)
  std::vector<Difference> differing;
  std::vector<std::string> not_measured;  // columns where either row's cell is `error` (without a generation: the library's)
};

// One Likeness per library row, in row order; generation "" where no column
// was measured in both the library's row and a generation's.
std::vector<Likeness> nearest_generations(const MatrixResult& result);

// The section under the table: a table (library, nearest generation, equal
// cells, where it differs) and one sentence per library. Empty without libraries.
std::string likeness_markdown(const MatrixResult& result);
std::string likeness_html(const MatrixResult& result);
nlohmann::json likeness_json(const MatrixResult& result);

}  // namespace locklab::harness
