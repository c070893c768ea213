// A sweep's result directory: the one given (--out), or a new one under
// results/<kind>/ named by a UTC timestamp not yet taken; created either way.
#pragma once

#include <string>

#include "redis/result.h"

namespace locklab::harness {

// "20261129T221500Z" (UTC), unique in `parent` (a suffix is added when taken).
std::string new_run_id(const std::string& parent);

// `out` when given, else `parent`/<new_run_id(parent)> ("results/runs/2026..."),
// with its missing parents created. An Error (io): "cannot create DIR: why".
Result<std::string> result_dir(const std::string& out, const std::string& parent);

}  // namespace locklab::harness
