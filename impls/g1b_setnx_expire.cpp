#include "g1b_setnx_expire.h"

#include "token.h"

namespace locklab {
namespace {

std::string whole_seconds_rounded_up(std::chrono::milliseconds ttl) {
  return std::to_string((ttl.count() + 999) / 1000);
}

}  // namespace

LockResult SetnxExpireLock::create(const LockConfig& config) {
  if (auto problem = invalid_config(config)) return config_error("setnx-expire", *problem);
  return std::unique_ptr<DistributedLock>(new SetnxExpireLock(config));
}

SetnxExpireLock::SetnxExpireLock(const LockConfig& config)
    : SingleServerLock(config),
      owner_(config.owner.empty() ? random_token_128() : config.owner),
      ttl_seconds_(whole_seconds_rounded_up(config.ttl)) {}

Acquire SetnxExpireLock::try_acquire(std::chrono::milliseconds wait) {
  return poll(wait, [this]() -> std::optional<Acquire> {
    auto reply = call({"SETNX", key_, owner_});
    if (!reply) return acquiring_command_failed(reply.error());
    if (reply->integer() != 1) return std::nullopt;  // busy
    held_ = true;
    step_("after-setnx-before-expire");
    (void)call({"EXPIRE", key_, ttl_seconds_});  // unchecked, as in the seed: see the header
    return Acquire::acquired;
  });
}

Release SetnxExpireLock::release() { return blind_del(held_); }

}  // namespace locklab
