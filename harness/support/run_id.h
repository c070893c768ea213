// The name of a new result directory: a UTC timestamp not yet taken.
#pragma once

#include <string>

namespace locklab::harness {

// "20261129T221500Z" (UTC), unique in `parent` (a suffix is added when taken).
std::string new_run_id(const std::string& parent);

}  // namespace locklab::harness
