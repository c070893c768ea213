// The fault grammar: `NAME[:KEY=VALUE]...` (docs/faults.md, "The --fault grammar").
//
// One spec names one fault and its parameters, keys in any order:
//   holder-crash
//   holder-pause:until=other-acquired:client=0
//   net:mode=delay:ms=300:dir=down
//   holder-pause:at=resp:GET>DEL:ms=375     (a protocol step point: its ':' is kept)
// Parsing only checks the shape; whether the name and keys exist and the values
// make sense is the fault registry's call (nemesis/fault_registry.h), which knows each fault.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "redis/result.h"

namespace locklab::harness {

struct FaultSpec {
  std::string name;
  std::map<std::string, std::string> params;
  std::string text;  // as given, for the record

  bool has(const std::string& key) const { return params.count(key) != 0; }
};

// The spec, or a one-line usage error ("bad fault 'x:y': ...").
Result<FaultSpec> parse_fault_spec(std::string_view text);

// The longest duration a fault parameter may give (ms=, offset=): one day.
inline constexpr long long kMaxFaultMs = 86'400'000;

// Typed reads of one parameter, worded for the spec's one-line error.
// Absent key: `fallback`. Present but malformed or out of [min, max]: usage error.
Result<long long> param_int(const FaultSpec& spec, const std::string& key, long long fallback, long long min,
                            long long max);
// One of `choices` ("a|b|c"); absent: `fallback`.
Result<std::string> param_choice(const FaultSpec& spec, const std::string& key, const std::string& fallback,
                                 std::string_view choices);
// "bad fault 'TEXT': MESSAGE" as a usage error.
Error fault_error(const FaultSpec& spec, const std::string& message);

}  // namespace locklab::harness
