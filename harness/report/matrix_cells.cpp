#include "report/matrix_cells.h"

#include <algorithm>

namespace locklab::harness {

using nlohmann::json;

namespace {
// The classes whose verdict was "safe": the only ones the exposed mark applies to.
bool verdict_was_safe(CellClass cell_class) { return cell_class == CellClass::safe || cell_class == CellClass::liveness; }
}  // namespace

bool Cell::matches() const {
  if (unwritten) return true;
  const bool class_matches = observed == expected || std::ranges::find(also_expected, observed) != also_expected.end();
  return class_matches && (!verdict_was_safe(observed) || expected_exposed_either || exposed == expected_exposed);
}

std::string Cell::expected_text() const {
  if (unwritten) return "none written (a lock of your own)";
  std::string text = class_name(expected);
  for (CellClass also : also_expected) text += std::string(" or ") + class_name(also);
  if (expected_exposed_either) text += ", exposed or not";
  else if (expected_exposed) text += ", exposed";
  return text;
}

std::string Cell::observed_text() const {
  return std::string(class_name(observed)) + (exposed ? ", exposed" : "");
}

int MatrixResult::mismatches() const {
  return static_cast<int>(std::count_if(cells.begin(), cells.end(), [](const Cell& c) { return !c.matches(); }));
}

int MatrixResult::errors() const {
  return static_cast<int>(
      std::count_if(cells.begin(), cells.end(), [](const Cell& c) { return c.observed == CellClass::error; }));
}

const Cell* MatrixResult::find(std::string_view lock, std::string_view fault) const {
  for (const auto& cell : cells)
    if (cell.lock == lock && cell.fault == fault) return &cell;
  return nullptr;
}

json cell_json(const Cell& cell) {
  return {{"schema", kCellSchema},
          {"lock", cell.lock},
          {"fault", cell.fault},
          {"faults", cell.specs},
          {"observed", class_name(cell.observed)},
          {"exposed", cell.exposed},
          {"expected", cell.expected_text()},
          {"expected_reason", cell.expected_reason},
          {"matches", cell.matches()},
          {"not_applicable", cell.not_applicable.empty() ? json(nullptr) : json(cell.not_applicable)},
          {"error", cell.error.empty() ? json(nullptr) : json(cell.error)},
          {"observed_reason", cell.observed_reason.empty() ? json(nullptr) : json(cell.observed_reason)},
          {"run", cell.run}};
}

json heading_json(const ColumnHeading& heading) {
  return {{"name", heading.name},
          {"title", heading.title},
          {"anchor_row", heading.anchor_row},
          {"how", heading.how},
          {"bites", heading.bites}};
}

std::optional<ColumnHeading> parse_heading(const json& heading) {
  if (!heading.is_object()) return std::nullopt;
  ColumnHeading parsed;
  for (auto [key, field] : {std::pair{"name", &parsed.name}, {"title", &parsed.title}, {"anchor_row", &parsed.anchor_row},
                            {"how", &parsed.how}, {"bites", &parsed.bites}}) {
    const auto value = heading.find(key);
    if (value == heading.end() || !value->is_string()) return std::nullopt;
    *field = value->get<std::string>();
  }
  return parsed;
}

}  // namespace locklab::harness
