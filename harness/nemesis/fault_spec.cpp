#include "nemesis/fault_spec.h"

#include <cctype>
#include <charconv>

namespace locklab::harness {
namespace {

bool is_name(std::string_view word) {
  if (word.empty()) return false;
  for (char c : word)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-'))
      return false;
  return true;
}

// A value whose ':' is its own, not the next field's: at=locklab:POINT, at=resp:PATTERN.
bool rejoins(const std::string& value) {
  return value == "locklab" || value == "resp" || value.rfind("resp:", 0) == 0;
}

}  // namespace

Error fault_error(const FaultSpec& spec, const std::string& message) {
  // Built by append: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
  std::string line("bad fault '");
  line.append(spec.text).append("': ").append(message);
  return Error{ErrorKind::usage, line};
}

Result<FaultSpec> parse_fault_spec(std::string_view text) {
  FaultSpec spec;
  spec.text = std::string(text);
  std::size_t start = 0;
  bool first = true;
  std::string last_key;
  for (;;) {
    const auto end = text.find(':', start);
    const std::string_view field =
        text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (first) {
      if (!is_name(field)) return fault_error(spec, "expected NAME[:KEY=VALUE]... (see: locklab run --help)");
      spec.name = std::string(field);
      first = false;
    } else if (field.find('=') == std::string_view::npos && !last_key.empty() && rejoins(spec.params[last_key])) {
      // The workload's own step points contain a ':' (at=locklab:cs-exit), and
      // so do protocol step points (at=resp:GET>DEL): rejoin them.
      spec.params[last_key].append(":").append(field);
    } else {
      const auto eq = field.find('=');
      if (eq == std::string_view::npos || eq == 0 || eq + 1 == field.size())
        return fault_error(spec, std::string(field).append(" is not KEY=VALUE"));
      const std::string key(field.substr(0, eq));
      if (!is_name(key)) return fault_error(spec, std::string("bad key ").append(key));
      if (!spec.params.emplace(key, std::string(field.substr(eq + 1))).second)
        return fault_error(spec, std::string("key ").append(key).append(" given twice"));
      last_key = key;
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return spec;
}

Result<long long> param_int(const FaultSpec& spec, const std::string& key, long long fallback, long long min,
                            long long max) {
  const auto found = spec.params.find(key);
  if (found == spec.params.end()) return fallback;
  const std::string& text = found->second;
  long long value = 0;
  const auto [stop, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || stop != text.data() + text.size())
    return fault_error(spec, std::string(key).append(" must be a whole number, not ").append(text));
  if (value < min || value > max)
    return fault_error(spec, key + " must be between " + std::to_string(min) + " and " + std::to_string(max));
  return value;
}

Result<std::string> param_choice(const FaultSpec& spec, const std::string& key, const std::string& fallback,
                                 std::string_view choices) {
  const auto found = spec.params.find(key);
  if (found == spec.params.end()) return fallback;
  std::size_t start = 0;
  for (;;) {
    const auto end = choices.find('|', start);
    if (choices.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start) == found->second)
      return found->second;
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return fault_error(spec, std::string(key).append(" must be one of ").append(choices).append(", not ").append(found->second));
}

}  // namespace locklab::harness
