// Reading one field of a JSON document that may lack it or hold another type:
// the reports and sweeps read run documents this way, and the fallback is what
// a missing field reads as (0 for a count, "" for a name; the matrix report
// asks for -1, "not measured").
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace locklab::harness {

// The number at a JSON pointer ("/totals/acquired"), or `fallback`.
inline double number_at(const nlohmann::json& document, const char* pointer, double fallback = 0) {
  const nlohmann::json::json_pointer at(pointer);
  if (!document.is_object() || !document.contains(at) || !document[at].is_number()) return fallback;
  return document[at].get<double>();
}

// The number at a JSON pointer, or nullopt where there is none: a figure a
// document may lack, and whose absence is not 0 (an adapter's no-op round trip).
inline std::optional<double> optional_number_at(const nlohmann::json& document, const char* pointer) {
  const nlohmann::json::json_pointer at(pointer);
  if (!document.is_object() || !document.contains(at) || !document[at].is_number()) return std::nullopt;
  return document[at].get<double>();
}

// The string at a JSON pointer ("/config/lock"), or "".
inline std::string text_at(const nlohmann::json& document, const char* pointer) {
  const nlohmann::json::json_pointer at(pointer);
  if (!document.is_object() || !document.contains(at) || !document[at].is_string()) return "";
  return document[at].get<std::string>();
}

}  // namespace locklab::harness
