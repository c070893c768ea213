// Creates a lock generation by its CLI name ("setnx", "lua-safe-delete", ...).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lock.h"

namespace locklab {

struct Generation {
  std::string name;      // CLI name
  std::string number;    // "0a", "1", "1b", ... as in docs/generations.md
  std::string summary;   // one line: how it locks
  std::string race;      // one line: what breaks it
  bool uses_redis = true;
  bool multi_node = false;  // needs N independent masters (Redlock)
  std::function<LockResult(const LockConfig&)> make;
  bool honours_wait_replicas = false;  // LockConfig::wait_replicas (the failover guard) is implemented
};

// All generations, in teaching order.
const std::vector<Generation>& generations();

const Generation* find_generation(std::string_view name);

// A lock of generation `name`, or an Error (unknown name, bad config, unreachable server).
LockResult make_lock(std::string_view name, const LockConfig& config);

}  // namespace locklab
