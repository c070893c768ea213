// The counter it expected against the counter it read, per run (lost_updates_table.h).
#include "report/lost_updates_table.h"

#include <cstdio>
#include <sstream>

#include "support/json_read.h"

namespace locklab::harness {

std::string lost_updates_table(const std::vector<nlohmann::json>& runs) {
  std::ostringstream out;
  char line[200];
  std::snprintf(line, sizeof line, "%-22s %10s %10s %10s  %s\n", "lock", "expected", "final", "lost", "verdict");
  out << line;
  for (const auto& run : runs) {
    std::snprintf(line, sizeof line, "%-22s %10lld %10lld %10lld  %s\n", text_at(run, "/lock").c_str(),
                  static_cast<long long>(number_at(run, "/counter/expected")),
                  static_cast<long long>(number_at(run, "/counter/actual")),
                  static_cast<long long>(number_at(run, "/safety/lost_updates")), text_at(run, "/verdict").c_str());
    out << line;
  }
  return out.str();
}

}  // namespace locklab::harness
