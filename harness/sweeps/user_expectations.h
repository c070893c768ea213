// `locklab matrix --expect FILE`: the classes a user expects of their own
// rows (docs/adapters.md, "Your own lock in `matrix` and `fleets`"). A row of
// the user's own has no class written down (a shipped row's are in catalog.json); with
// this file its cells are checked as a shipped row's are: each shows matches
// or differs, and one that differs makes the matrix exit 3. A cell the file
// does not name stays unwritten (its observed class is the finding).
//
// The file: {"ext:LABEL": {"COLUMN": "CLASS" | ["CLASS", "CLASS"]}}, LABEL
// with or without "ext:", CLASS a matrix class ("safe", "me-violation",
// "wrong-owner", "deadlock", "liveness", "n/a"); two classes when the schedule
// cannot decide between them (as a shipped cell's "or").
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "redis/result.h"

#include "report/matrix_cells.h"

namespace locklab::harness {

struct UserExpectation {
  CellClass expected = CellClass::safe;
  std::optional<CellClass> or_else;
};

struct UserExpectations {
  std::string file;  // as --expect gave it ("" = none)
  std::map<std::string, std::map<std::string, UserExpectation>> rows;  // "ext:LABEL" -> column -> classes
  const UserExpectation* find(const std::string& lock, const std::string& fault) const;
};

// The file at `path`, or a usage Error of one line naming the file and what is
// wrong: unreadable, not JSON, not an object of objects, an unknown column, a
// class that is not a matrix class, more than two classes.
Result<UserExpectations> read_user_expectations(const std::string& path);

// A usage Error when the file names a row that is not one of `users_rows`
// (the matrix's rows of the user's own): a typo would otherwise check nothing.
Status check_rows(const UserExpectations& expectations, const std::vector<std::string>& users_rows);

// `cell` (of a user's row) with the file's expectation, when it names one:
// checked like a shipped cell (unwritten false). The exposed mark is not
// asked of it: the file speaks of classes.
Cell with_user_expectation(Cell cell, const UserExpectations& expectations);

// The reason a cell checked by --expect records (its file's expected_reason
// starts with this), so a matrix read back from its cells keeps the check.
inline constexpr const char* kExpectReason = "--expect ";
inline constexpr const char* kExpectReasonEnd = ": the class you expect of your lock";  // after the file name

}  // namespace locklab::harness
