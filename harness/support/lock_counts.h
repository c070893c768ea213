// What one lock's clients counted in a run, in one JSON shape: a mixed fleet's
// run document writes it per lock (run/run_locks.h: its `fleet` block), the
// fleets sweep reads it back (sweeps/fleets.cpp) and its report writes it per
// pair member (report/fleets_report.h). Here, in support, because run and
// report both reach it and report may use nothing else.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace locklab::harness {

struct LockCounts {
  std::int64_t attempts = 0, acquired = 0, timeouts = 0;
  std::int64_t errors = 0;   // acquires that ended error (the lock said it failed)
  std::int64_t unknown = 0;  // acquires whose outcome the lock could not tell (legal for an adapter)
  std::int64_t release_errors = 0;
  std::string last_error;  // the last one any of its clients saw; "" = none
};

// {"attempts", "acquired", "timeouts", "errors", "unknown", "release_errors",
// "last_error" (null when none)}: the caller adds what names the lock.
inline nlohmann::json lock_counts_json(const LockCounts& counts) {
  using nlohmann::json;
  return {{"attempts", counts.attempts},
          {"acquired", counts.acquired},
          {"timeouts", counts.timeouts},
          {"errors", counts.errors},
          {"unknown", counts.unknown},
          {"release_errors", counts.release_errors},
          {"last_error", counts.last_error.empty() ? json(nullptr) : json(counts.last_error)}};
}

// The counts of an object lock_counts_json() wrote; a missing or non-integer
// count reads 0, a missing or null last_error "".
inline LockCounts read_lock_counts(const nlohmann::json& object) {
  using nlohmann::json;
  const auto count = [&object](const char* field) -> std::int64_t {
    const json value = object.value(field, json(0));
    return value.is_number_integer() ? value.get<std::int64_t>() : 0;
  };
  LockCounts counts;
  counts.attempts = count("attempts");
  counts.acquired = count("acquired");
  counts.timeouts = count("timeouts");
  counts.errors = count("errors");
  counts.unknown = count("unknown");
  counts.release_errors = count("release_errors");
  if (object.value("last_error", json()).is_string()) counts.last_error = object["last_error"].get<std::string>();
  return counts;
}

}  // namespace locklab::harness
