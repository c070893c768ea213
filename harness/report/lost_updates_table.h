// `locklab compare`'s table on the terminal: per run, the counter it expected,
// the counter it read at the end, the updates lost and the verdict. (Not the
// counter demo's table: scenarios/counter_demo/counter_table.cpp.)
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace locklab::harness {

// Plain text, one line per run document under a header line, columns aligned.
std::string lost_updates_table(const std::vector<nlohmann::json>& runs);

}  // namespace locklab::harness
