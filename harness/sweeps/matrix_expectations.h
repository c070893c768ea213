// The expected class of every cell of `locklab matrix`, each with a one-line
// reason, from the two places they are written. A generation's cells are in
// its column's record (sweeps/matrix_columns.cpp; docs/faults.md's list is
// rendered from them), adapted from the anchors' matrix to what our
// generations actually do. A shipped library row's (`ext:NAME`) are in its
// entry of harness/adapters/catalog.json ("expected", workload/catalog_cells.h),
// their prose and source lines in docs/peers.md ("Expected cells of the peers").
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "redis/result.h"

#include "report/cell_class.h"

namespace locklab::harness {

struct MatrixColumn;  // sweeps/matrix_columns.h: the column table

struct Expectation {
  CellClass expected = CellClass::safe;
  std::string reason;  // one line: why this cell ends this way
  // A cell whose class depends on an interleaving the fault does not fix
  // (docs/faults.md names each one and why): these classes match too.
  std::vector<CellClass> or_else;
  // A safe ending is expected exposed: a lease lapses under a holder and the
  // schedule lets nobody in (cell_class_of_run.h, exposed()). Either way round, a safe
  // cell whose mark differs does not match.
  bool exposed = false;
  // Whether a safe ending is exposed depends on an interleaving the fault does
  // not fix (docs/peers.md names the one cell and why): either mark matches.
  bool exposed_either = false;
};

// "safe", or "me-violation or safe" for a cell with two acceptable classes.
std::string expected_text(const Expectation& expectation);

// nullopt: nothing is written down for this cell (the matrix counts it as a
// mismatch, so a new generation or column cannot slip in unexamined).
// The generations' cells come from the column's record in `table`
// (sweeps/matrix_columns.h), the shipped libraries' from their catalog entries.
// The first form reads the shipped table (matrix_columns()).
std::optional<Expectation> expected_cell(std::string_view lock, std::string_view fault);
std::optional<Expectation> expected_cell(std::string_view lock, std::string_view fault,
                                        std::span<const MatrixColumn> table);

// A usage Error of one line when a shipped row's catalog entry writes a cell for a column that
// `table` does not have: a misspelled column would expect nothing (or, in a variant, its base
// row's cell) without a word. `locklab matrix` asks before it runs a cell.
Status check_catalog_columns(std::span<const MatrixColumn> table);

}  // namespace locklab::harness
