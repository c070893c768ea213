// Generation 7: fenced lease lock.
//
//   acquire  EVALSHA <kAcquire> 2 <key> <fence-key> <token> <ttl_ms>   -> fencing token, or 0 if busy
//   release  EVALSHA <kCompareAndDeleteLua> 1 <key> <token>               -> 1 released, -1 gone, 0 not ours
//   fence key "{<key>}:fence": a plain counter, no TTL, never deleted by the lock.
//
// Race it still has: the lease is generation 4's and lapses the same way. A
// holder paused past its TTL resumes believing it holds the lock while another
// client does (Kleppmann's K1, fault-matrix row 2). The difference is at the
// resource: every read and write carries the token, the resource remembers
// the highest token it has seen and refuses older ones, so the stale holder's
// write is refused instead of silently losing an update. tests/fenced_test.cpp:
// StaleHolderWriteAfterNewHolder* (stale write last) and
// StaleHolderWriteBetweenNewHoldersReadAndWrite* (stale write in the middle),
// each with lua-safe-delete (an update is lost) and with fenced (refused,
// counter exact).
//
// Equal tokens are accepted. The resource refuses only `token < highest`: a
// holder's own write follows its own read with the same token, so refusing
// `token == highest` would refuse every holder's write. The price: two holders
// with one token are not told apart, and the checker never calls such a pair
// "serialized by the fence" (harness/history/checker.h, classify_overlap) -- their
// order at the resource was luck.
//
// What fencing does not fix: the counter lives on one node. A failover that
// loses the last INCR (or a restart without persistence) hands out a token
// again: the next holder draws the same number as the one before, the
// resource accepts both (equal is not older), and two holders can interleave
// their read-modify-writes -- a loss of safety, not only of liveness
// (docs/faults.md, fenced x failover and x node-restart). Only when the
// restarted counter is behind the highest token the resource has seen does
// it fail closed: every new holder is refused until the tokens catch up.
#include "g7_fenced.h"

#include "redis/cluster_routing.h"

#include "g4_lua_safe_delete.h"  // the release script: fenced = generation 4 + a token
#include "token.h"

namespace locklab {
namespace {

// KEYS[1] lock, KEYS[2] fence counter; ARGV[1] token, ARGV[2] ttl in ms.
// INCR before SET: if the counter is unusable (not an integer) the script
// fails before anything is locked. A script runs atomically, so
// EXISTS-then-SET is SET NX; the NX stays as documentation.
constexpr const char* kAcquire = R"lua(
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local fence = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])
return fence
)lua";

}  // namespace

const std::vector<ScriptShape>& fenced_scripts() {
  static const std::vector<ScriptShape> all = {script_shape(ScriptRole::fenced_acquire, kAcquire, 2, 2),
                                              script_shape(ScriptRole::compare_and_delete, kCompareAndDeleteLua, 1, 1)};
  return all;
}

// Same slot as the key (a cluster runs the acquire script on one master).
std::string FencedLock::fence_key_for(const std::string& key) { return redis::same_slot_key(key, ":fence"); }

LockResult FencedLock::create(const LockConfig& config) {
  if (auto problem = invalid_config(config)) return config_error("fenced", *problem);
  return std::unique_ptr<DistributedLock>(new FencedLock(config));
}

FencedLock::FencedLock(const LockConfig& config)
    : SingleServerLock(config),
      owner_(config.owner),
      token_(acquisition_token(owner_)),
      ttl_ms_(std::to_string(config.ttl.count())),
      ttl_(config.ttl),
      fence_key_(fence_key_for(config.key)),
      acquire_(kAcquire),
      compare_and_delete_(kCompareAndDeleteLua) {}

// A lost reply (or a lost SCRIPT LOAD before the first EVALSHA: conservative)
// is `unknown`: the script may have run.
Acquire FencedLock::try_acquire(std::chrono::milliseconds wait) {
  // One token per acquisition. It becomes the hold's token only if this attempt may
  // have taken the lock: a refused attempt must not forget the hold we may have.
  const std::string candidate = acquisition_token(owner_);
  std::optional<std::uint64_t> fence;
  Clock::time_point sent_at;
  const Acquire outcome = poll(wait, [&]() -> std::optional<Acquire> {
    sent_at = Clock::now();
    auto reply = call(acquire_, {key_, fence_key_}, {candidate, ttl_ms_});
    if (!reply) return acquiring_command_failed(reply.error());
    if (!reply->is_integer() || reply->integer() < 0)
      return fail(Acquire::error, "fenced: unexpected acquire reply " + reply->describe());
    if (reply->integer() == 0) return std::nullopt;  // busy
    fence = static_cast<std::uint64_t>(reply->integer());
    return Acquire::acquired;
  });
  if (outcome == Acquire::acquired || outcome == Acquire::unknown) {
    token_ = candidate;
    fence_ = fence;  // unknown: no token we could show the resource
    valid_until_ = fence ? std::optional(sent_at + ttl_) : std::nullopt;
  }
  return outcome;
}

Release FencedLock::release() {
  clear_error();
  const std::string token = token_;  // the hold this release is for, whatever comes later
  step_("before-release");
  auto reply = call(compare_and_delete_, {key_}, {token});
  if (!reply) return release_failed(reply.error());
  if (!reply->is_integer()) return fail(Release::error, "fenced: unexpected release reply " + reply->describe());
  fence_.reset();
  valid_until_.reset();
  return compare_and_delete_outcome(reply->integer());
}

}  // namespace locklab
