#include "sweeps/matrix_expectations.h"

#include <algorithm>
#include <span>

#include "registry.h"

#include "sweeps/matrix_columns.h"
#include "workload/lock_catalog.h"

namespace locklab::harness {
namespace {

using C = CellClass;

// A shipped row's cell as catalog.json writes it (workload/catalog_cells.h). A word that is no
// class reads `error`, so the cell differs with the reason saying why (tests check the catalog).
Expectation expectation_of(const CatalogCell& cell, std::string_view lock, std::string_view column) {
  const auto word = [&](const std::string& text) -> CellClass {
    const auto parsed = parse_class(text);
    return parsed ? *parsed : C::error;
  };
  Expectation expectation{word(cell.class_word), cell.reason, {}, cell.exposed, cell.exposed_either};
  for (const auto& also : cell.or_words) expectation.or_else.push_back(word(also));
  if (expectation.expected == C::error || std::count(expectation.or_else.begin(), expectation.or_else.end(), C::error) > 0)
    expectation.reason = "catalog.json: " + std::string(lock) + " x " + std::string(column) + " names a class that is none (" +
                         cell.class_word + "): " + cell.reason;
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

std::string expected_text(const Expectation& expectation) {
  std::string text = class_name(expectation.expected);
  for (CellClass also : expectation.or_else) text += std::string(" or ") + class_name(also);
  if (expectation.exposed_either) text += ", exposed or not";
  else if (expectation.exposed) text += ", exposed";
  return text;
}

}  // namespace locklab::harness
