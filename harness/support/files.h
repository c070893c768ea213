// Result files written whole or not at all, and the check that one can be written.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "redis/result.h"

namespace locklab::harness {

// Writes `text` to `path` via a temp file in the same directory, fsync, then
// rename(2): the path holds either the old content, or all of the new.
// On failure the temp file is removed and nothing appears at `path`.
Status write_file_atomically(const std::string& path, const std::string& text);
Status write_json_atomically(const std::string& path, const nlohmann::json& document);

// Why a result document could not be written at `path` ("--json: ...": no such
// directory, a directory, not writable), checked before a run; nullopt when it can.
std::optional<std::string> json_target_problem(const std::string& path);
// The same for any output file named by `flag` ("--html: ...").
std::optional<std::string> output_target_problem(const std::string& flag, const std::string& path);

}  // namespace locklab::harness
