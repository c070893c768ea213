// The matrix's columns, one record each, in one table: a column's name,
// title, anchors row, how it injects its fault, when that fault bites, how
// its cells run (the plan), which locks it cannot apply to, and the class
// every generation is expected to show under it. Adding a column is one entry
// here (plus its fault in nemesis/, and the library rows' cells: their
// entries of harness/adapters/catalog.json); the report draws what the sweep hands it
// (MatrixResult::columns) and docs/faults.md's list is rendered from this
// table (`locklab list columns --write-doc docs/faults.md`).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "report/cell_class.h"
#include "report/columns_doc.h"
#include "report/matrix_cells.h"
#include "run/options.h"
#include "workload/lock_catalog.h"

namespace locklab::harness {

// The run of one cell, or why it makes no sense.
struct CellPlan {
  RunOptions options;
  std::vector<std::string> faults;  // fault specs (nemesis/fault_spec.h grammar), in application order
  std::string not_applicable;       // non-empty: the cell is N/A, and this is why
};

// The class written down for one generation (or generation variant) under a
// column, with its one-line reason (docs/faults.md shows the generations').
struct GenerationCell {
  std::string_view generation;
  CellClass expected = CellClass::safe;
  std::string_view reason;
  std::optional<CellClass> or_else = std::nullopt;  // a second acceptable class
  bool exposed = false;                             // a safe ending is expected exposed
  bool exposed_either = false;                      // either mark matches
};

// What a column does to the base workload (after a timed column's switch to a
// duration) so that its fault meets a contender: the cell's faults and options.
using PlanColumn = void (*)(CellPlan& plan, const LockDescription& lock, bool quick);
// Why the column makes no sense for a Redis lock ("" = it applies), from the
// lock's capabilities.
using ColumnNotApplicable = std::string (*)(const LockDescription& lock);
// A class every row of a kind is expected to show, written once for them all
// (node-minority: a single node is n/a), or nullopt for a row of another kind.
using ColumnRule = std::optional<GenerationCell> (*)(const LockDescription& lock);

struct MatrixColumn {
  ColumnHeading heading;  // its name (`--fault NAME`), title, anchors row, how and bite: what the report draws
  // A server, link or replica fault: it acts once and leaves the others erroring for a
  // while, so its cells run for a time, not a number of attempts.
  bool timed = false;
  PlanColumn plan = nullptr;
  ColumnNotApplicable not_applicable = nullptr;  // nullptr: every Redis lock
  // A lock of the user's own must declare what this column parks at (its catalog entry or
  // its init_ok); a row that declared nothing is n/a, saying so.
  bool needs_declaration = false;
  std::span<const GenerationCell> generations = {};  // every generation and generation variant
  ColumnRule rule = nullptr;
  std::string doc_note = "";  // prose docs/faults.md shows under the bite ("" for none)
};

// The one table, in the anchors' row order.
std::span<const MatrixColumn> matrix_columns();
const MatrixColumn* find_matrix_column(std::string_view name, std::span<const MatrixColumn> table = matrix_columns());
// Why a catalog row's "catch_waiters" cannot be planned ("" = it can): only failover and
// node-restart catch their waiters, and node-minority (split=) a quorum lock's; a failover on a
// Redis Cluster has no per-client links.
std::string catch_waiters_problem(const LockDescription& lock);
// Why a catalog row's "park_holder" cannot be planned ("" = it can): only failover (not on the
// cluster, whose fault acts on refused acquires) and node-restart park a holder.
std::string park_holder_problem(const LockDescription& lock);
// The first of the two above ("" = the row's catalog entry can be planned).
std::string catalog_plan_problem(const LockDescription& lock);

// Why `lock` cannot have this column's cell ("" = it can): no Redis, an
// undeclared step point, or the column's own rule.
std::string column_not_applicable(const LockDescription& lock, const MatrixColumn& column);

// The table as docs/faults.md lists it (report/columns_doc.h): each column's
// heading, bite and note, and the Redis generations' written cells.
std::vector<ColumnDoc> columns_doc(std::span<const MatrixColumn> table = matrix_columns());

}  // namespace locklab::harness
