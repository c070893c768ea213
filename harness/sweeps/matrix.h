// `locklab matrix`: every generation against every fault we can inject, one
// short deterministic run per cell, each cell classed from its run document
// and compared with the class written down for it (matrix_expectations.h,
// docs/faults.md "The matrix").
//
// Rows are the generations of the registry; columns are the faults of
// /work/shared/anchors/faults.md §(b) that the nemesis injects, one record
// each in sweeps/matrix_columns.h (its plan, its n/a rule, the generations'
// expected classes). This file selects, pools and records cells. Whether a cell
// makes sense is decided from the generation's capabilities wherever they
// can tell (no Redis, no expiry, single node, no step point); the step points a
// column parks at are capabilities too (impls/registry.h: release_window, acquire_gap).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "redis/result.h"

#include "registry.h"

#include "report/matrix_cells.h"
#include "run/run.h"
#include "sweeps/cell_class_of_run.h"
#include "sweeps/matrix_columns.h"
#include "sweeps/user_expectations.h"
#include "workload/lock_catalog.h"
#include "workload/user_adapters.h"

namespace locklab::harness {

// The cell's workload and faults: a small ttl, 2-3 process clients, a bounded
// number of attempts. `quick` = the CI size.
CellPlan plan_cell(const LockDescription& generation, const MatrixColumn& column, bool quick);

struct MatrixOptions {
  bool quick = false;
  std::string lang = "en";          // the matrix page's furniture: en or zh (report/page_words.h)
  std::string out;                  // empty = results/matrix/<run-id>
  std::vector<std::string> locks;   // empty = every generation, shipped adapter and `user` adapter
  // Which shipped rows a matrix without --lock measures: "main" (the catalog's rows marked main:
  // every base library, no variant; issue #27 may keep more out), "all" (every row), or "" (main
  // with --quick, the main job's matrix; all without).
  std::string libraries;
  UserAdapters user;                // the user's own adapters (--adapter LABEL='CMD', --catalog FILE)
  UserExpectations expect;          // --expect FILE: the classes the user expects of those rows (none: unwritten)
  std::vector<std::string> faults;  // empty = every column
  std::span<const MatrixColumn> columns = matrix_columns();  // the column table (a test adds one of its own)
  int jobs = 1;                     // cells measured at once (worker processes)
  bool progress = true;             // a line per cell on stderr
  std::string command;              // recorded in the summary
};

// Measures every cell, writes DIR/cells/<lock>__<fault>.json (atomically, as
// each cell ends), DIR/matrix.json, DIR/matrix.md and DIR/matrix.html. An Error
// means the matrix could not run at all (ErrorKind::usage: bad options); a cell
// that could not measure is a cell of class error, not an Error.
Result<MatrixResult> run_matrix(const MatrixOptions& options);

// The rows run_matrix() would measure: the --lock names, or the default rows (`libraries`).
Result<std::vector<std::string>> matrix_rows(const MatrixOptions& options);

// A matrix measured before, read back from DIR (matrix.json: the rows, columns,
// size and command; cells/*.json: each cell, its expectation re-derived), as
// run_matrix() returned it. A cell file that cannot be read is a cell of class
// error, as in run_matrix(); an Error: DIR/matrix.json is missing or not a
// locklab.matrix/1 document.
Result<MatrixResult> load_matrix(const std::string& dir);

}  // namespace locklab::harness
