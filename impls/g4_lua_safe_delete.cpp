#include "g4_lua_safe_delete.h"

#include "token.h"

namespace locklab {
namespace {

// 1 = deleted (ours), 0 = someone else's, -1 = no key.
constexpr const char* kCompareAndDelete = R"lua(
local current = redis.call('get', KEYS[1])
if current == ARGV[1] then return redis.call('del', KEYS[1]) end
if current == false then return -1 end
return 0
)lua";

}  // namespace

LockResult LuaSafeDeleteLock::create(const LockConfig& config) {
  if (auto problem = invalid_config(config)) return config_error("lua-safe-delete", *problem);
  return std::unique_ptr<DistributedLock>(new LuaSafeDeleteLock(config));
}

LuaSafeDeleteLock::LuaSafeDeleteLock(const LockConfig& config)
    : SingleServerLock(config),
      token_(config.owner.empty() ? random_token_128() : config.owner),
      ttl_ms_(std::to_string(config.ttl.count())),
      compare_and_delete_(kCompareAndDelete) {}

Acquire LuaSafeDeleteLock::try_acquire(std::chrono::milliseconds wait) {
  return poll(wait, [this]() -> std::optional<Acquire> {
    auto reply = call({"SET", key_, token_, "NX", "PX", ttl_ms_});
    if (!reply) return acquiring_command_failed(reply.error());
    if (reply->is_nil()) return std::nullopt;  // busy
    return Acquire::acquired;                  // +OK
  });
}

Release LuaSafeDeleteLock::release() {
  clear_error();
  step_("before-release");
  auto reply = call(compare_and_delete_, {key_}, {token_});
  if (!reply) return release_failed(reply.error());
  switch (reply->integer()) {
    case 1: return Release::released;
    case -1: return Release::already_expired;
    default: return Release::not_owner;
  }
}

}  // namespace locklab
