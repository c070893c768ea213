// What a matrix cell shows, as one word: the classes of faults-design.md,
// "Matrix cell classes". Its own header so that whatever names a class (the
// expectations, a user's --expect file, the column table) need not see the
// matrix's result model (matrix_cells.h) or the sweep that measures it.
#pragma once

#include <optional>
#include <string_view>

namespace locklab::harness {

enum class CellClass { safe, me_violation, wrong_owner, deadlock, liveness, not_applicable, error };

// "safe", "me-violation", "wrong-owner", "deadlock", "liveness", "n/a", "error".
constexpr const char* class_name(CellClass cell_class) {
  switch (cell_class) {
    case CellClass::safe: return "safe";
    case CellClass::me_violation: return "me-violation";
    case CellClass::wrong_owner: return "wrong-owner";
    case CellClass::deadlock: return "deadlock";
    case CellClass::liveness: return "liveness";
    case CellClass::not_applicable: return "n/a";
    case CellClass::error: return "error";
  }
  return "error";
}

// The class a word names (class_name's inverse), or nullopt.
constexpr std::optional<CellClass> parse_class(std::string_view name) {
  for (CellClass c : {CellClass::safe, CellClass::me_violation, CellClass::wrong_owner, CellClass::deadlock,
                      CellClass::liveness, CellClass::not_applicable, CellClass::error})
    if (name == class_name(c)) return c;
  return std::nullopt;
}

}  // namespace locklab::harness
