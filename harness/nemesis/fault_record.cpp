#include "nemesis/fault_record.h"

namespace locklab::harness {

nlohmann::json applied_json(const std::vector<AppliedEvent>& events, std::int64_t go_ns) {
  nlohmann::json applied = nlohmann::json::array();
  for (const auto& event : events)
    applied.push_back({{"t_ms", go_ns > 0 ? static_cast<double>((event.ns - go_ns) / 10'000) / 100.0 : 0.0},
                       {"what", event.what}});
  return applied;
}

std::string nobody_did(int client, const std::string& did) {
  return client < 0 ? "no client " + did : "client " + std::to_string(client) + " never " + did;
}

}  // namespace locklab::harness
