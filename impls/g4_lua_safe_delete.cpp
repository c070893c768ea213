#include "g4_lua_safe_delete.h"

#include "replica_wait.h"
#include "token.h"

namespace locklab {

// 1 = deleted (ours), 0 = someone else's, -1 = no key.
const char* const kCompareAndDeleteLua = R"lua(
local current = redis.call('get', KEYS[1])
if current == ARGV[1] then return redis.call('del', KEYS[1]) end
if current == false then return -1 end
return 0
)lua";

const std::vector<ScriptShape>& lua_safe_delete_scripts() {
  static const std::vector<ScriptShape> all = {
      script_shape(ScriptRole::compare_and_delete, kCompareAndDeleteLua, 1, 1)};
  return all;
}

Release compare_and_delete_outcome(long long code) {
  switch (code) {
    case 1: return Release::released;
    case -1: return Release::already_expired;
    default: return Release::not_owner;
  }
}

LockResult LuaSafeDeleteLock::create(const LockConfig& config) {
  if (auto problem = invalid_config(config)) return config_error("lua-safe-delete", *problem);
  return std::unique_ptr<DistributedLock>(new LuaSafeDeleteLock(config));
}

LuaSafeDeleteLock::LuaSafeDeleteLock(const LockConfig& config)
    : SingleServerLock(config),
      config_(config),
      token_(acquisition_token(config.owner)),
      ttl_ms_(std::to_string(config.ttl.count())),
      compare_and_delete_(kCompareAndDeleteLua) {}

Acquire LuaSafeDeleteLock::try_acquire(std::chrono::milliseconds wait) {
  // One token per acquisition. It becomes the hold's token only if this attempt may
  // have taken the lock: a refused attempt must not forget the hold we may have.
  const std::string candidate = acquisition_token(config_.owner);
  const Acquire outcome = poll(wait, [this, &candidate]() -> std::optional<Acquire> {
    auto reply = call({"SET", key_, candidate, "NX", "PX", ttl_ms_});
    if (!reply) return acquiring_command_failed(reply.error());
    if (reply->is_nil()) return std::nullopt;  // busy
    return confirm_replicated(candidate);      // +OK
  });
  if (outcome == Acquire::acquired || outcome == Acquire::unknown) token_ = candidate;
  return outcome;
}

Acquire LuaSafeDeleteLock::confirm_replicated(const std::string& token) {
  if (config_.wait_replicas <= 0) return Acquire::acquired;
  const auto shortfall = replication_shortfall(call(wait_replicas_command(config_)), config_);
  if (!shortfall) return Acquire::acquired;
  // A lock the replicas may lack is not one we claim: undo it. Only an undo
  // that answered lets us say "not held"; otherwise the key may still be ours.
  step_("before-undo");
  auto undo = call(compare_and_delete_, {key_}, {token});
  if (!undo || !undo->is_integer())
    return fail(Acquire::unknown, *shortfall + "; undoing it failed too, the hold may remain: " +
                                      (undo ? "script answered " + undo->describe() : undo.error().message));
  return fail(Acquire::error, *shortfall);
}

Release LuaSafeDeleteLock::release() {
  clear_error();
  const std::string token = token_;  // the hold this release is for, whatever comes later
  step_("before-release");
  auto reply = call(compare_and_delete_, {key_}, {token});
  if (!reply) return release_failed(reply.error());
  return compare_and_delete_outcome(reply->integer());
}

}  // namespace locklab
