// Generation 7: fenced lease lock.
//
//   acquire  EVALSHA <kAcquire> 2 <key> <fence-key> <token> <ttl>   -> fencing token, or 0 if held
//   release  EVALSHA <kRelease> 1 <key> <token>                     -> 1 deleted, -1 gone, 0 not ours
//   fence key "{<key>}:fence": a plain counter, no TTL, never deleted by the lock.
//
// The lease itself is generation 4's and fails the same way: a holder paused
// past its TTL resumes believing it holds the lock while another client does
// (Kleppmann's K1, matrix row 2). The difference is at the resource: every read
// and write carries the token, the resource remembers the highest token it has
// seen and refuses older ones, so the stale holder's write is refused instead
// of silently losing an update. Shown in tests/fenced_test.cpp:
// StaleHolderWriteAfterNewHolder* (stale write last) and
// StaleHolderWriteBetweenNewHoldersReadAndWrite* (stale write in the middle),
// each once unfenced (an update is lost) and once fenced (refused, counter exact).
//
// What fencing does not fix: the counter lives on one node. A restart without
// persistence (or a failover that loses the INCR) starts the tokens again at 1.
// The resource then refuses every new holder until the tokens pass the highest
// it has seen: that is a loss of liveness, never of safety (fail-closed).
#include "g7_fenced.h"

#include <thread>

#include "token.h"

namespace locklab {
namespace {

using std::chrono::milliseconds;

// KEYS[1] lock, KEYS[2] fence counter; ARGV[1] token, ARGV[2] ttl in ms.
// INCR before SET: if the counter is unusable (not an integer) the script
// fails before anything is locked. Scripts are atomic, so EXISTS-then-SET is
// the same as SET NX; the NX stays as documentation.
constexpr const char* kAcquire = R"lua(
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local fence = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])
return fence
)lua";

// KEYS[1] lock, ARGV[1] our token.
constexpr const char* kRelease = R"lua(
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then return redis.call('DEL', KEYS[1]) end
if held == false then return -1 end
return 0
)lua";

constexpr milliseconds kDefaultRetryInterval{100};

}  // namespace

std::string FencedLock::fence_key_for(const std::string& key) {
  if (key.find('{') != std::string::npos) return key + ":fence";
  return "{" + key + "}:fence";
}

FencedLock::FencedLock(const LockConfig& config)
    : config_(config),
      step_(config.step),
      token_(config.owner.empty() ? random_token_128() : config.owner),
      fence_key_(fence_key_for(config.key)),
      link_(config.servers.front()),
      acquire_(kAcquire),
      release_(kRelease) {}

LockResult FencedLock::make(const LockConfig& config) {
  if (auto problem = invalid_config(config, 1))
    return redis::Error{redis::ErrorKind::usage, "fenced: " + *problem};
  std::unique_ptr<FencedLock> lock(new FencedLock(config));
  auto connection = lock->link_.get();
  if (!connection) return connection.error();
  // Loaded up front: a timeout on SCRIPT LOAD later would look like a lost acquire.
  if (auto loaded = lock->acquire_.load(**connection); !loaded) return loaded.error();
  if (auto loaded = lock->release_.load(**connection); !loaded) return loaded.error();
  return LockResult(std::unique_ptr<DistributedLock>(std::move(lock)));
}

FencedLock::Try FencedLock::attempt() {
  auto connection = link_.get();
  if (!connection) {
    fail(Acquire::error, connection.error().message);
    return Try::error;
  }
  const auto sent_at = Clock::now();
  auto reply = acquire_.run(**connection, {config_.key, fence_key_}, {token_, std::to_string(config_.ttl.count())});
  if (!reply) {
    fail(Acquire::error, "fenced: " + reply.error().message);
    return reply.error().outcome_unknown() ? Try::unknown : Try::error;
  }
  if (!reply->is_integer() || reply->integer() < 0) {
    fail(Acquire::error, "fenced: unexpected acquire reply " + reply->describe());
    return Try::error;
  }
  if (reply->integer() == 0) return Try::held_by_other;
  fence_ = static_cast<std::uint64_t>(reply->integer());
  valid_until_ = sent_at + config_.ttl;
  return Try::acquired;
}

Acquire FencedLock::try_acquire(milliseconds wait) {
  clear_error();
  fence_.reset();
  valid_until_.reset();
  const auto deadline = Clock::now() + wait;
  const auto interval = config_.retry_interval.value_or(kDefaultRetryInterval);
  for (;;) {
    switch (attempt()) {
      case Try::acquired: return Acquire::acquired;
      case Try::unknown: return Acquire::unknown;
      case Try::error: return Acquire::error;
      case Try::held_by_other: break;
    }
    const auto now = Clock::now();
    if (now >= deadline) return Acquire::timed_out;
    std::this_thread::sleep_for(std::min<Clock::duration>(interval, deadline - now));
  }
}

Release FencedLock::release() {
  clear_error();
  step_("before-release");
  auto connection = link_.get();
  if (!connection) return fail(Release::error, "fenced: " + connection.error().message);
  auto reply = release_.run(**connection, {config_.key}, {token_});
  if (!reply) return fail(Release::error, "fenced: " + reply.error().message);
  if (!reply->is_integer()) return fail(Release::error, "fenced: unexpected release reply " + reply->describe());
  fence_.reset();
  valid_until_.reset();
  switch (reply->integer()) {
    case 1: return Release::released;
    case -1: return Release::already_expired;
    case 0: return Release::not_owner;
    default: return fail(Release::error, "fenced: unexpected release reply " + reply->describe());
  }
}

}  // namespace locklab
