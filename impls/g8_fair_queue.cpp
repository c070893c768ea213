#include "g8_fair_queue.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "token.h"

namespace locklab {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Shared by the three scripts. KEYS[1] lock, KEYS[2] queue, KEYS[3] timeouts;
// ARGV[1] our id, ARGV[2] ttl ms, ARGV[3] channel prefix ("{<key>}:w:").
// A waiter's channel is the prefix + its id without the ":<attempt>" suffix.
constexpr const char* kPrelude = R"lua(
local lock, queue, timeouts = KEYS[1], KEYS[2], KEYS[3]
local me, ttl, channel_prefix = ARGV[1], ARGV[2], ARGV[3]

local function now_ms()
  local t = redis.call('time')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Waiters whose deadline passed stopped heart-beating (crashed, or gone): drop them.
local function prune_crashed_waiters()
  local now = now_ms()
  local stale = redis.call('zrangebyscore', timeouts, '-inf', now)
  for _, id in ipairs(stale) do
    redis.call('lrem', queue, 0, id)
  end
  if #stale > 0 then redis.call('zremrangebyscore', timeouts, '-inf', now) end
  return now
end

-- A free lock goes to the head of the queue, and only the head is woken.
local function hand_over_to_head()
  if redis.call('exists', lock) == 1 then return end
  local head = redis.call('lpop', queue)
  if not head then return end
  redis.call('zrem', timeouts, head)
  redis.call('set', lock, head, 'px', ttl)
  redis.call('publish', channel_prefix .. string.match(head, '^(.*):%d+$'), head)
end
)lua";

// ARGV[4] waiter timeout ms, ARGV[5] '1' = queue up when busy, '0' = one attempt.
// nil = acquired; an integer = the holder's PTTL (we are queued if ARGV[5] = '1').
constexpr const char* kAcquire = R"lua(
local holder = redis.call('get', lock)
if holder == me then return nil end  -- handed over to us while we waited
if not holder and redis.call('llen', queue) == 0 then  -- free and nobody waiting: no queue work
  redis.call('set', lock, me, 'px', ttl)
  return nil
end
local now = prune_crashed_waiters()
local head = redis.call('lindex', queue, 0)
if redis.call('exists', lock) == 0 and (not head or head == me) then
  if head == me then
    redis.call('lpop', queue)
    redis.call('zrem', timeouts, me)
  end
  redis.call('set', lock, me, 'px', ttl)
  return nil
end
hand_over_to_head()  -- a lease that lapsed: the head goes first, not us
if ARGV[5] == '1' then
  local timeout = tonumber(ARGV[4])
  if redis.call('zadd', timeouts, now + timeout, me) == 1 then redis.call('rpush', queue, me) end
  for _, key in ipairs({queue, timeouts}) do  -- gone one timeout after the last live waiter
    if redis.call('pttl', key) < timeout then redis.call('pexpire', key, timeout) end
  end
end
return redis.call('pttl', lock)
)lua";

// 1 released, 0 someone else's (unchanged), -1 no lock (our lease lapsed).
constexpr const char* kRelease = R"lua(
local current = redis.call('get', lock)
if current and current ~= me then return 0 end
if current then redis.call('del', lock) end
if redis.call('llen', queue) > 0 then  -- someone waits: drop the crashed, wake the next
  prune_crashed_waiters()
  hand_over_to_head()
end
if current then return 1 end
return -1
)lua";

// The wait ran out. 1 = the lock was handed to us meanwhile (we hold it), 0 = left.
constexpr const char* kLeave = R"lua(
if redis.call('get', lock) == me then return 1 end
redis.call('lrem', queue, 0, me)
redis.call('zrem', timeouts, me)
prune_crashed_waiters()
hand_over_to_head()  -- we may have been the head of a lapsed lock
return 0
)lua";

constexpr auto kReadRestOfMessage = 2s;  // a message half-read after poll() said readable

std::string with_prelude(const char* body) { return std::string(kPrelude) + body; }

// The prefix that puts an auxiliary key into the lock key's cluster slot: the
// key's own {hash tag} if it has one, else the whole key as the tag.
std::string slot_prefix(const std::string& key) {
  const auto open = key.find('{');
  if (open != std::string::npos) {
    const auto close = key.find('}', open + 1);
    if (close != std::string::npos && close > open + 1) return key;
  }
  return "{" + key + "}";
}

}  // namespace

const std::vector<ScriptShape>& fair_queue_scripts() {
  static const std::vector<ScriptShape> all = {script_shape(ScriptRole::fair_acquire, with_prelude(kAcquire), 3, 5),
                                              script_shape(ScriptRole::fair_release, with_prelude(kRelease), 3, 3),
                                              script_shape(ScriptRole::fair_leave, with_prelude(kLeave), 3, 3)};
  return all;
}

LockResult FairQueueLock::create(const LockConfig& config) {
  if (auto problem = invalid_config(config)) return config_error("fair-queue", *problem);
  if (config.ttl < 3ms) return config_error("fair-queue", "ttl must be >= 3 ms: waiters heart-beat every ttl/3");
  return std::unique_ptr<DistributedLock>(new FairQueueLock(config));
}

FairQueueLock::FairQueueLock(const LockConfig& config)
    : SingleServerLock(config),
      config_(config),
      owner_(config.owner.empty() ? random_token_128() : config.owner),
      queue_key_(slot_prefix(config.key) + ":queue"),
      timeouts_key_(slot_prefix(config.key) + ":timeouts"),
      channel_prefix_(slot_prefix(config.key) + ":w:"),
      channel_(channel_prefix_ + owner_),
      ttl_ms_(std::to_string(config.ttl.count())),
      acquire_script_(with_prelude(kAcquire)),
      release_script_(with_prelude(kRelease)),
      leave_script_(with_prelude(kLeave)) {}

// Waiting: the acquire script queues us (and is our heartbeat); then we sleep
// on our own channel until our id arrives, the heartbeat is due, the holder's
// lease runs out (then the head takes the lock itself), or the deadline.
Acquire FairQueueLock::try_acquire(std::chrono::milliseconds wait) {
  clear_error();
  const auto deadline = Clock::now() + std::max(wait, 0ms);
  const bool queue_up = wait > 0ms;
  const std::string id = owner_ + ":" + std::to_string(++attempts_);
  const auto heartbeat = std::chrono::duration_cast<Clock::duration>(config_.ttl) / 3;
  bool queued = false;
  for (;;) {
    // Subscribed before we can be queued, so the message that hands us the lock is never missed.
    if (queue_up) {
      if (auto subscribed = subscribe(); !subscribed) {
        // Already queued (a broken doorbell mid-wait): leave, so we block nobody.
        if (queued) return abandon(id, subscribed.error());
        return fail(Acquire::error, subscribed.error().message);
      }
    }
    auto reply = run_acquire(id, queue_up);
    if (!reply) {
      // The script may have run (queued us, or even handed us the lock) and only
      // its reply was lost, or we were queued by an earlier round: leave, so a
      // dead attempt never blocks the queue behind it until its deadline.
      if (queued || reply.error().outcome_unknown()) return abandon(id, reply.error());
      return acquiring_command_failed(reply.error());
    }
    if (reply->is_nil()) return acquired(id);
    if (!reply->is_integer()) return fail(Acquire::error, "acquire script answered " + reply->describe());
    if (!queue_up) return Acquire::timed_out;
    queued = true;
    step_("after-queued");

    const auto now = Clock::now();
    if (now >= deadline) return leave(id);
    auto until = std::min(deadline, now + heartbeat);
    if (const long long pttl = reply->integer(); pttl >= 0) until = std::min(until, now + std::chrono::milliseconds{pttl + 1});
    step_("before-wait");
    auto handed = wait_for_handover(id, until);
    step_("after-wait");
    if (handed && *handed) return acquired(id);
    if (!handed) doorbell_.reset();  // reconnect and resubscribe; the acquire script re-checks
    if (Clock::now() >= deadline) return leave(id);
  }
}

Result<redis::Reply> FairQueueLock::run_acquire(const std::string& id, bool queue_up) {
  return call(acquire_script_, {key_, queue_key_, timeouts_key_},
              {id, ttl_ms_, channel_prefix_, ttl_ms_, queue_up ? "1" : "0"});
}

Acquire FairQueueLock::acquired(const std::string& id) {
  hold_id_ = id;
  return Acquire::acquired;
}

// A round failed while we were queued (or our script may have run): leave.
// If leaving fails too we are still in the queue, and a release hands the
// lock to the head inside Redis, needing no word from us: we may hold it, so
// the answer is unknown, never error (the harness then lets it expire).
Acquire FairQueueLock::abandon(const std::string& id, const Error& why) {
  const Acquire left = leave(id);
  if (left == Acquire::acquired) return left;
  if (left == Acquire::unknown) return fail(Acquire::unknown, why.message + "; then " + last_error());
  // Left cleanly: the script may still have run before we left, when its reply was lost.
  const Acquire outcome = acquiring_command_failed(why);
  if (outcome == Acquire::unknown) hold_id_ = id;  // we may hold it: release() must name this attempt
  return outcome;
}

// Without it a timed-out waiter would stay queued until its deadline (one ttl)
// and be handed the lock meanwhile, blocking everyone behind it.
Acquire FairQueueLock::leave(const std::string& id) {
  step_("before-leave");
  auto reply = call(leave_script_, {key_, queue_key_, timeouts_key_}, {id, ttl_ms_, channel_prefix_});
  if (!reply || !reply->is_integer()) {
    // It may have been handed to us before we could leave: we may hold it,
    // and release() must name this attempt.
    hold_id_ = id;
    return fail(Acquire::unknown, "leaving the queue failed (the lock may have been handed to us): " +
                                      (reply ? reply->describe() : reply.error().message));
  }
  if (reply->integer() == 1) return acquired(id);  // handed over just before the deadline
  return Acquire::timed_out;
}

Release FairQueueLock::release() {
  clear_error();
  step_("before-release");
  // An id that never holds (no attempt number) when we have no hold: the server decides.
  const std::string id = hold_id_.empty() ? owner_ : hold_id_;
  auto reply = call(release_script_, {key_, queue_key_, timeouts_key_}, {id, ttl_ms_, channel_prefix_});
  if (!reply) return release_failed(reply.error());
  if (!reply->is_integer()) return fail(Release::error, "release script answered " + reply->describe());
  hold_id_.clear();
  switch (reply->integer()) {
    case 1: return Release::released;
    case -1: return Release::already_expired;
    default: return Release::not_owner;
  }
}

namespace {
Result<redis::Reply> subscribe_by(redis::Connection& connection, const std::string& channel, Clock::time_point by) {
  if (auto sent = connection.send({"SUBSCRIBE", channel}); !sent) return sent.error();
  return connection.read_until(by);
}
}  // namespace

// Our own connection in subscribe mode, kept while the lock object lives (one
// SUBSCRIBE round trip per object, not per wait). A fork()ed child opens its own.
Status FairQueueLock::subscribe() {
  if (doorbell_creator_ != ::getpid()) doorbell_.reset();  // the parent's socket: closed here, untouched
  if (doorbell_ && !doorbell_->broken()) return Done{};
  doorbell_.reset();
  auto connection = redis::Connection::connect(config_.servers.front());
  if (!connection) return connection.error();
  // command_timeout 0 means "wait forever" (ConnectionOptions): then a plain
  // blocking round trip (the socket has no timeout), never a deadline of 1 ms.
  const auto timeout = config_.servers.front().command_timeout;
  auto confirmed = timeout > 0ms ? subscribe_by(*connection, channel_, Clock::now() + timeout)
                                 : connection->command({"SUBSCRIBE", channel_});
  if (!confirmed) return confirmed.error();
  if (!confirmed->is_array() || confirmed->size() < 1 || confirmed->element(0).text() != "subscribe")
    return Error{ErrorKind::protocol, "SUBSCRIBE " + channel_ + " answered " + confirmed->describe()};
  doorbell_.emplace(std::move(connection).value());
  doorbell_creator_ = ::getpid();
  return Done{};
}

// poll() the socket with the time left, then read: a socket timeout would
// leave the hiredis context dead (DESIGN.md, pitfalls).
Result<bool> FairQueueLock::wait_for_handover(const std::string& id, Clock::time_point until) {
  for (;;) {
    if (!doorbell_->buffered()) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now());
      if (left <= 0ms) return false;
      pollfd pfd{doorbell_->fd(), POLLIN, 0};
      const int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
      if (ready < 0 && errno != EINTR) return Error{ErrorKind::io, std::string("poll: ") + std::strerror(errno)};
      if (ready <= 0) continue;
    }
    auto message = doorbell_->read_until(Clock::now() + kReadRestOfMessage);
    if (!message) return message.error();
    // ["message", channel, id]; an id from an earlier attempt of ours is stale: keep waiting.
    if (message->is_array() && message->size() == 3 && message->element(0).text() == "message" &&
        message->element(2).text() == id)
      return true;
  }
}

}  // namespace locklab
