// Results: one JSON document per run ("schema": "locklab.run/1", documented in
// docs/harness.md), written atomically so a reader never sees half a file.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "result.h"

namespace locklab::harness {

inline constexpr const char* kRunSchema = "locklab.run/1";

// Writes `text` to `path` via a temp file in the same directory, fsync, then
// rename(2): the path holds either the old content, or all of the new.
// On failure the temp file is removed and nothing appears at `path`.
Status write_file_atomically(const std::string& path, const std::string& text);
Status write_json_atomically(const std::string& path, const nlohmann::json& document);

// Keys (JSON pointers) every run document must carry.
const std::vector<std::string>& required_run_keys();
// The required keys missing from `document` (empty = valid), plus a schema check.
std::vector<std::string> missing_run_keys(const nlohmann::json& document);

// Reads and validates one run document; an Error names the file and the problem.
Result<nlohmann::json> load_run(const std::string& path);

}  // namespace locklab::harness
