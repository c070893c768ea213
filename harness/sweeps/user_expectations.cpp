#include "sweeps/user_expectations.h"

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "sweeps/matrix_columns.h"
#include "workload/lock_catalog.h"

namespace locklab::harness {
namespace {

using nlohmann::json;

std::string with_prefix(const std::string& label) {
  return label.starts_with(kAdapterPrefix) ? label : std::string(kAdapterPrefix) + label;
}

// One class word; n/a and error are classes too, but `error` is never a
// finding to expect (the run could not judge), so it is refused.
Result<CellClass> class_of(const json& word, const std::string& where) {
  const auto parsed = word.is_string() ? parse_class(word.get<std::string>()) : std::nullopt;
  if (!parsed || *parsed == CellClass::error)
    return Error{ErrorKind::usage, where + ": " + word.dump() +
                                       " is not a class (safe, me-violation, wrong-owner, deadlock, liveness, n/a)"};
  return *parsed;
}

// "CLASS" or ["CLASS"] or ["CLASS", "CLASS"].
Result<UserExpectation> expectation_of(const json& value, const std::string& where) {
  const json words = value.is_array() ? value : json::array({value});
  if (words.empty() || words.size() > 2)
    return Error{ErrorKind::usage, where + ": give one class, or two when the schedule cannot decide"};
  UserExpectation expectation;
  auto first = class_of(words[0], where);
  if (!first) return first.error();
  expectation.expected = *first;
  if (words.size() == 2) {
    auto second = class_of(words[1], where);
    if (!second) return second.error();
    expectation.or_else = *second;
  }
  return expectation;
}

// One row's object: column -> classes.
Result<std::map<std::string, UserExpectation>> row_of(const json& columns, const std::string& where) {
  if (!columns.is_object()) return Error{ErrorKind::usage, where + ": must be an object of COLUMN: CLASS"};
  std::map<std::string, UserExpectation> row;
  for (const auto& [column, value] : columns.items()) {
    if (find_matrix_column(column) == nullptr)
      return Error{ErrorKind::usage, where + ": '" + column + "' is not a matrix column (locklab matrix --help; docs/faults.md)"};
    auto expectation = expectation_of(value, where + " " + column);
    if (!expectation) return expectation.error();
    row[column] = *expectation;
  }
  return row;
}

}  // namespace

const UserExpectation* UserExpectations::find(const std::string& lock, const std::string& fault) const {
  const auto row = rows.find(lock);
  if (row == rows.end()) return nullptr;
  const auto cell = row->second.find(fault);
  return cell == row->second.end() ? nullptr : &cell->second;
}

Result<UserExpectations> read_user_expectations(const std::string& path) {
  const std::string where = "--expect " + path;
  std::ifstream in(path);
  if (!in) return Error{ErrorKind::usage, where + ": cannot read it"};
  const json document = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object())
    return Error{ErrorKind::usage, where + ": not a JSON object {\"ext:LABEL\": {\"COLUMN\": \"CLASS\"}}"};
  UserExpectations expectations;
  expectations.file = path;
  for (const auto& [label, columns] : document.items()) {
    const std::string lock = with_prefix(label);
    if (expectations.rows.count(lock) > 0) return Error{ErrorKind::usage, where + ": " + lock + " is given twice"};
    auto row = row_of(columns, where + ": " + lock);
    if (!row) return row.error();
    expectations.rows[lock] = std::move(row).value();
  }
  return expectations;
}

Status check_rows(const UserExpectations& expectations, const std::vector<std::string>& users_rows) {
  for (const auto& [lock, columns] : expectations.rows)
    if (std::find(users_rows.begin(), users_rows.end(), lock) == users_rows.end())
      return Error{ErrorKind::usage, "--expect " + expectations.file + ": " + lock +
                                         " is not a row of your own in this matrix (its --lock, --adapter or "
                                         "--catalog entry; a shipped row's classes are written down already)"};
  return Done{};
}

Cell with_user_expectation(Cell cell, const UserExpectations& expectations) {
  const UserExpectation* expectation = expectations.find(cell.lock, cell.fault);
  if (expectation == nullptr) return cell;
  cell.unwritten = false;
  cell.expected = expectation->expected;
  cell.also_expected.clear();
  if (expectation->or_else) cell.also_expected.push_back(*expectation->or_else);
  cell.expected_exposed_either = true;
  cell.expected_reason = std::string(kExpectReason) + expectations.file + kExpectReasonEnd;
  return cell;
}

}  // namespace locklab::harness
