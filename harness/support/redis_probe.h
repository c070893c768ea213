// Reading Redis state as an observer: a connection of its own, and conditions
// over what it reads, for wait_until (support/conditions.h). Scenarios,
// step-point faults and tests watch keys through it.
#pragma once

#include <optional>
#include <string>

#include "redis/connection.h"
#include "redis/link.h"
#include "redis/result.h"

#include "support/conditions.h"

namespace locklab::harness {

// A connection of the observer's own for reading Redis state (never a client's:
// its replies would interleave with the client's). A failed read reads as
// "unknown" (nullopt), never as a state: a condition over it stays false.
// Options with `cluster` set read each key on the master owning its slot.
class RedisProbe {
 public:
  static Result<RedisProbe> connect(const redis::ConnectionOptions& options);

  std::optional<bool> exists(const std::string& key);
  std::optional<std::string> value(const std::string& key);  // nullopt: absent or unreadable
  std::optional<long long> pttl(const std::string& key);     // -2 absent, -1 no TTL
  // Any other read (HGETALL, TTL): the reply, or nullopt if unreadable or an error.
  std::optional<redis::Reply> read(const redis::Args& args) { return ask(args); }

  // Conditions over this probe (it must outlive them).
  Condition key_absent(std::string key);
  Condition key_present(std::string key);
  Condition value_differs(std::string key, std::string from);  // present with another value

 private:
  explicit RedisProbe(redis::ConnectionOptions options) : link_(std::move(options)) {}
  std::optional<redis::Reply> ask(const redis::Args& args);

  redis::Link link_;  // reconnects after a failure; routes by slot in a cluster
};

}  // namespace locklab::harness
