// The matrix's result model, shared by the sweep that measures it
// (matrix.h) and the report that draws it (matrix_report.h): a column's
// heading, a measured cell and the whole result, and a cell's JSON form.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/cell_class.h"

namespace locklab::harness {

inline constexpr const char* kCellSchema = "locklab.matrix-cell/1";
inline constexpr const char* kMatrixSchema = "locklab.matrix/1";

// What the report shows of a column (a fault, as a row of the anchors' matrix): the
// sweep fills it from its column table (sweeps/matrix_columns.h), so the
// report never looks a column up.
struct ColumnHeading {
  std::string name;        // `--fault NAME` of `locklab matrix`
  std::string title;       // the report's column header
  std::string anchor_row;  // "1", "2", "11a", ... of anchors §(b)
  std::string how;         // one line: how the cell injects it
  std::string bites;       // when its race had its chance: the fault's bite (docs/harness.md, "Bite")
};

struct Cell {
  std::string lock;
  std::string fault;
  std::vector<std::string> specs;
  CellClass observed = CellClass::error;
  CellClass expected = CellClass::error;
  std::vector<CellClass> also_expected;  // other acceptable classes (matrix_expectations.h)
  bool exposed = false;           // exposed(run): safe by luck
  bool expected_exposed = false;  // the expectation says a safe ending is exposed
  bool expected_exposed_either = false;  // ... or that either mark is expected
  std::string expected_reason;
  // No class is written down for this cell, and none is missing: a lock of
  // the user's own (`--adapter`, `--catalog`). Its observed class is the
  // finding; it matches whatever it is, and never makes the matrix exit 3.
  bool unwritten = false;
  std::string not_applicable;  // why, for n/a cells
  std::string error;           // measure() failed: why
  // Why the observed class, where the run says more than its counts: a library call blocked
  // past the harness's bound (liveness), a client's adapter that exited (a crash).
  std::string observed_reason;
  nlohmann::json run;          // the run document (null for n/a cells and failed runs)
  // The class matches, and so does the exposed mark wherever the verdict was
  // safe (safe, liveness): an unexpected exposed cell, or a missing mark, differs.
  bool matches() const;
  std::string expected_text() const;  // "safe", "me-violation or safe", "safe, exposed"
  std::string observed_text() const;  // "safe" or "safe, exposed"

};

struct MatrixResult {
  std::string dir;
  bool quick = false;
  std::string command;
  std::string lang = "en";          // matrix.html's headings and notes: en or zh (`locklab matrix --lang`)
  std::vector<std::string> locks;   // rows, in order
  std::vector<std::string> faults;  // columns, in order
  // The columns' headings, as the sweep's table gives them: the report looks
  // each of `faults` up here (none: it shows the bare name).
  std::vector<ColumnHeading> columns;
  // Each row's generation number ("3"; "ext" for a library), where the sweep
  // knew it: the report names "generation 3 set-nx-px-token" with it.
  std::map<std::string, std::string> numbers;
  // A variant row's "variant of ext:BASE: why" (the catalog's variant_of and variant_reason),
  // shown under its label on the matrix page; rows without one are absent.
  std::map<std::string, std::string> variant_notes;
  std::vector<Cell> cells;          // row-major
  // The generations this matrix did not measure, as their written
  // expectations say they behave (observed = expected), for the likeness of
  // a library row with no generation row beside it (report/matrix_likeness.h).
  // Never drawn as rows.
  std::vector<Cell> written;
  int mismatches() const;
  int errors() const;
  const Cell* find(std::string_view lock, std::string_view fault) const;
};

// A cell as its JSON file holds it (schema locklab.matrix-cell/1).
nlohmann::json cell_json(const Cell& cell);

// A column's heading as matrix.json lists it, and back (nullopt: not an object of strings).
nlohmann::json heading_json(const ColumnHeading& heading);
std::optional<ColumnHeading> parse_heading(const nlohmann::json& heading);

}  // namespace locklab::harness
