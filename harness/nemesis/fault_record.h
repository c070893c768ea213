// What a fault says in its record: what it did and when (AppliedEvent, the
// record's "applied" list), or why it did not act (nobody_did). Every fault of
// nemesis/ writes its record with these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace locklab::harness {

// What a fault did, when (monotonic ns), for its record.
struct AppliedEvent {
  std::int64_t ns = 0;
  std::string what;
};
nlohmann::json applied_json(const std::vector<AppliedEvent>& events, std::int64_t go_ns);

// "no client <did>" (client -1: any) or "client N never <did>": why a fault did not act.
std::string nobody_did(int client, const std::string& did);

}  // namespace locklab::harness
