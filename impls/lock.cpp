#include "lock.h"

namespace locklab {

const char* to_string(Acquire outcome) {
  switch (outcome) {
    case Acquire::acquired: return "acquired";
    case Acquire::timed_out: return "timed_out";
    case Acquire::unknown: return "unknown";
    case Acquire::error: return "error";
  }
  return "?";
}

const char* to_string(Release outcome) {
  switch (outcome) {
    case Release::released: return "released";
    case Release::still_held: return "still_held";
    case Release::not_owner: return "not_owner";
    case Release::already_expired: return "already_expired";
    case Release::error: return "error";
  }
  return "?";
}

std::string DistributedLock::last_error() const {
  std::lock_guard guard(errors_mutex_);
  const auto found = errors_.find(std::this_thread::get_id());
  return found == errors_.end() ? std::string() : found->second;
}

void DistributedLock::record_error(std::string why) {
  std::lock_guard guard(errors_mutex_);
  if (why.empty()) errors_.erase(std::this_thread::get_id());
  else errors_[std::this_thread::get_id()] = std::move(why);
}

std::optional<std::string> invalid_config(const LockConfig& config, std::size_t min_servers) {
  if (config.key.empty()) return "lock key must not be empty";
  if (config.ttl.count() <= 0) return "ttl must be > 0 ms (got " + std::to_string(config.ttl.count()) + ")";
  if (config.retry_interval && config.retry_interval->count() < 0) return "retry interval must be >= 0 ms";
  if (config.servers.size() < min_servers)
    return "needs at least " + std::to_string(min_servers) + " Redis server(s), got " +
           std::to_string(config.servers.size());
  if (!config.clock) return "no wall clock";
  if (config.wait_replicas < 0) return "wait_replicas must be >= 0";
  if (config.wait_replicas > 0 && config.wait_replicas_timeout.count() <= 0)
    return "wait_replicas_timeout must be > 0 ms";
  return std::nullopt;
}

}  // namespace locklab
