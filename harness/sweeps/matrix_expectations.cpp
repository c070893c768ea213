#include "sweeps/matrix_expectations.h"

#include <span>

#include "registry.h"

#include "sweeps/matrix_columns.h"
#include "workload/lock_catalog.h"

namespace locklab::harness {
namespace {

using C = CellClass;

// A word a cell may expect: a class, but never `error` (a cell that could not be judged matches nothing).
std::optional<CellClass> expectable(const std::string& word) {
  const auto parsed = parse_class(word);
  return parsed && *parsed != C::error ? parsed : std::nullopt;
}

// A shipped row's cell as its catalog entry writes it (workload/catalog_cells.h). A word, in
// "class" or in "or", that is no class the cell may expect makes the whole cell expect `error`, so
// it differs whatever the run reads, with the reason naming the word (tests check the shipped catalog).
Expectation expectation_of(const CatalogCell& cell, std::string_view lock, std::string_view column) {
  std::vector<std::string> words = {cell.class_word};
  words.insert(words.end(), cell.or_words.begin(), cell.or_words.end());
  for (const auto& word : words)
    if (!expectable(word))
      return Expectation{C::error, "catalog.json: " + std::string(lock) + " x " + std::string(column) +
                                       " names a class that is none (" + word + "): " + cell.reason, {}};
  Expectation expectation{*expectable(cell.class_word), cell.reason, {}, cell.exposed, cell.exposed_either};
  for (const auto& also : cell.or_words) expectation.or_else.push_back(*expectable(also));
  return expectation;
}

// A column's written cell as an expectation.
Expectation expectation_of(const GenerationCell& cell) {
  std::vector<CellClass> also;
  if (cell.or_else) also.push_back(*cell.or_else);
  return Expectation{cell.expected, std::string(cell.reason), also, cell.exposed, cell.exposed_either};
}

}  // namespace

std::optional<Expectation> expected_cell(std::string_view lock, std::string_view fault) {
  return expected_cell(lock, fault, matrix_columns());
}

std::optional<Expectation> expected_cell(std::string_view lock, std::string_view fault,
                                        std::span<const MatrixColumn> table) {
  const MatrixColumn* column = find_matrix_column(fault, table);
  const auto described = find_lock(lock);
  // Capabilities decide the cells that make no sense, for every generation alike.
  if (described) {
    if (!described->capabilities.uses_redis)
      return Expectation{C::not_applicable, "no Redis lock to fault; it violates with no fault at all (see the comparison)", {}};
    if (column != nullptr && column->rule != nullptr)
      if (auto ruled = column->rule(*described)) return expectation_of(*ruled);
  }
  if (column != nullptr)
    for (const auto& cell : column->generations)
      if (cell.generation == lock) return expectation_of(cell);
  // A shipped row's cells are in its catalog entry, a variant's with its base row's.
  if (described && described->shipped)
    if (const auto cell = described->expected.find(std::string(fault)); cell != described->expected.end())
      return expectation_of(cell->second, lock, fault);
  return std::nullopt;
}

Status check_catalog_columns(std::span<const MatrixColumn> table) {
  for (const auto& peer : catalog_peers()) {
    for (const auto& [column, cell] : peer.expected)
      if (find_matrix_column(column, table) == nullptr)
        return Error{ErrorKind::usage, peers_dir() + "/catalog.json: " + peer.name + " expects a cell of '" + column +
                                           "', which is no matrix column (locklab list columns)"};
    if (const std::string problem = catalog_plan_problem(peer); !problem.empty())
      return Error{ErrorKind::usage, peers_dir() + "/catalog.json: " + peer.name + " " + problem};
  }
  return Done{};
}

std::string expected_text(const Expectation& expectation) {
  std::string text = class_name(expectation.expected);
  for (CellClass also : expectation.or_else) text += std::string(" or ") + class_name(also);
  if (expectation.exposed_either) text += ", exposed or not";
  else if (expectation.exposed) text += ", exposed";
  return text;
}

}  // namespace locklab::harness
