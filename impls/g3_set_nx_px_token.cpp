#include "g3_set_nx_px_token.h"

#include "token.h"

namespace locklab {

LockResult SetNxPxTokenLock::create(const LockConfig& config) {
  if (auto problem = invalid_config(config)) return config_error("set-nx-px-token", *problem);
  return std::unique_ptr<DistributedLock>(new SetNxPxTokenLock(config));
}

SetNxPxTokenLock::SetNxPxTokenLock(const LockConfig& config)
    : SingleServerLock(config),
      owner_(config.owner),
      token_(acquisition_token(owner_)),
      ttl_ms_(std::to_string(config.ttl.count())) {}

Acquire SetNxPxTokenLock::try_acquire(std::chrono::milliseconds wait) {
  // One token per acquisition. It becomes the hold's token only if this attempt may
  // have taken the lock: a refused attempt must not forget the hold we may have.
  const std::string candidate = acquisition_token(owner_);
  const Acquire outcome = poll(wait, [this, &candidate]() -> std::optional<Acquire> {
    auto reply = call({"SET", key_, candidate, "NX", "PX", ttl_ms_});
    if (!reply) return acquiring_command_failed(reply.error());
    if (reply->is_nil()) return std::nullopt;  // busy
    return Acquire::acquired;                  // +OK
  });
  if (outcome == Acquire::acquired || outcome == Acquire::unknown) token_ = candidate;
  return outcome;
}

Release SetNxPxTokenLock::release() {
  clear_error();
  const std::string token = token_;  // the hold this release is for, whatever comes later
  step_("before-release");
  auto current = call({"GET", key_});
  if (!current) return release_failed(current.error());
  if (current->is_nil()) return Release::already_expired;
  if (current->text() != token) return Release::not_owner;

  step_("after-get-before-del");  // the key may expire and be re-taken right here
  auto deleted = call({"DEL", key_});
  if (!deleted) return release_failed(deleted.error());
  return deleted->integer() == 1 ? Release::released : Release::already_expired;
}

}  // namespace locklab
