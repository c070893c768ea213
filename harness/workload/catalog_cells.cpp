#include "workload/catalog_cells.h"

#include <nlohmann/json.hpp>

namespace locklab::harness {
namespace {

using nlohmann::json;

// "or": one word, or a list of one or two.
Result<std::vector<std::string>> or_words(const json& value, const std::string& where) {
  const json words = value.is_array() ? value : json::array({value});
  if (words.empty() || words.size() > 2)
    return Error{ErrorKind::usage, where + ": \"or\" names one class or two"};
  std::vector<std::string> read;
  for (const auto& word : words) {
    if (!word.is_string()) return Error{ErrorKind::usage, where + ": \"or\" must be class words"};
    read.push_back(word.get<std::string>());
  }
  return read;
}

Result<CatalogCell> cell_of(const json& value, const std::string& where) {
  if (!value.is_object() || !value.value("class", json()).is_string() || !value.value("reason", json()).is_string() ||
      value["reason"].get<std::string>().empty())
    return Error{ErrorKind::usage, where + ": must be {\"class\": WORD, \"reason\": TEXT}, with a reason"};
  for (const auto& [field, ignored] : value.items())
    if (field != "class" && field != "reason" && field != "or" && field != "exposed" && field != "exposed_either")
      return Error{ErrorKind::usage, where + ": unknown field \"" + field + "\" (class, reason, or, exposed, exposed_either)"};
  CatalogCell cell;
  cell.class_word = value["class"].get<std::string>();
  cell.reason = value["reason"].get<std::string>();
  if (value.contains("or")) {
    auto words = or_words(value["or"], where);
    if (!words) return words.error();
    cell.or_words = std::move(words).value();
  }
  const json exposed = value.value("exposed", json(false)), either = value.value("exposed_either", json(false));
  if (!exposed.is_boolean() || !either.is_boolean())
    return Error{ErrorKind::usage, where + ": exposed and exposed_either must be true or false"};
  cell.exposed = exposed.get<bool>();
  cell.exposed_either = either.get<bool>();
  return cell;
}

}  // namespace

Result<CatalogCells> read_catalog_cells(const json& entry, const std::string& where) {
  const json expected = entry.value("expected", json::object());
  if (!expected.is_object()) return Error{ErrorKind::usage, where + ": \"expected\" must be an object of COLUMN: cell"};
  CatalogCells cells;
  for (const auto& [column, value] : expected.items()) {
    auto cell = cell_of(value, where + ": expected " + column);
    if (!cell) return cell.error();
    cells[column] = std::move(cell).value();
  }
  return cells;
}

CatalogCells with_base_cells(CatalogCells own, const CatalogCells& base) {
  for (const auto& [column, cell] : base) own.try_emplace(column, cell);
  return own;
}

}  // namespace locklab::harness
