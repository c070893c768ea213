#include "g1_setnx.h"

#include "token.h"

namespace locklab {

LockResult SetnxLock::create(const LockConfig& config) {
  if (auto problem = invalid_config(config)) return config_error("setnx", *problem);
  return std::unique_ptr<DistributedLock>(new SetnxLock(config));
}

SetnxLock::SetnxLock(const LockConfig& config)
    : SingleServerLock(config), owner_(config.owner.empty() ? random_token_128() : config.owner) {}

Acquire SetnxLock::try_acquire(std::chrono::milliseconds wait) {
  return poll(wait, [this]() -> std::optional<Acquire> {
    auto reply = call({"SETNX", key_, owner_});
    if (!reply) return acquiring_command_failed(reply.error());
    if (reply->integer() != 1) return std::nullopt;  // busy
    held_ = true;
    return Acquire::acquired;
  });
}

Release SetnxLock::release() { return blind_del(held_); }

}  // namespace locklab
