#include "g5_reentrant_watchdog.h"

#include <unistd.h>

#include "redis/cluster_routing.h"

#include "renewal_timer.h"
#include "replica_wait.h"
#include "token.h"
#include "unlock_subscriber.h"

namespace locklab {
namespace {

// Shared by the acquire, release and force-unlock scripts. How a release wakes
// waiters (KEYS[2] = the waiters' ZSET, KEYS[3] = the channel, or in the
// queued mode the prefix of every waiter's own channel; ARGV[3] = the unlock
// message, ARGV[4] = '1' broadcast, '0' wake one):
//   broadcast (Redisson, LockConfig::redisson_compatible): PUBLISH the one
//     channel every waiter subscribes to; each of them wakes and retries.
//   wake one (the default): the oldest registered waiter is PUBLISHed to on its
//     own channel. PUBLISH answers how many subscribers got the message: 0 = that
//     waiter is gone (crashed, or its wait ended) => drop it and try the next.
//     The woken waiter stays queued (it may lose the race to a newcomer) until
//     its acquire script succeeds or it leaves.
constexpr const char* kWakePrelude = R"lua(
local function wake_waiters()
  if ARGV[4] == '1' then
    redis.call('publish', KEYS[3], ARGV[3])
    return
  end
  while true do
    local head = redis.call('zrange', KEYS[2], 0, 0)[1]
    if not head then return end
    if redis.call('publish', KEYS[3] .. head, ARGV[3]) > 0 then return end
    redis.call('zrem', KEYS[2], head)
  end
end
)lua";

// KEYS[1] = lock, KEYS[2] = waiters ZSET; ARGV[1] = owner field, ARGV[2] = ttl
// ms, ARGV[3] = "1" for a re-entry (we already hold it), "0" for a fresh
// acquire, ARGV[4] = "1" to queue up as a waiter when busy.
// nil = acquired (or re-entered); an integer = the holder's PTTL (-1: no expiry).
//
// One departure from Redisson: a *fresh* acquire sets our count to 1 instead of
// incrementing it. An earlier acquire whose reply was lost (Acquire::unknown)
// may have left our field at 1; incrementing on top of it would make one
// release leave the lock held until ttl. (tests: LostAcquireReplyIsUnknown)
//
// A waiter queues with the server's time as its score, once (ZADD NX: a retry
// keeps its place). A live waiter retries at least every PTTL <= ttl, and each
// retry keeps the ZSET alive for 2 ttl: it vanishes once nobody waits.
constexpr const char* kAcquireScript = R"lua(
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  if ARGV[3] == '1' then
    redis.call('hincrby', KEYS[1], ARGV[1], 1)
  else
    redis.call('hset', KEYS[1], ARGV[1], 1)
  end
  redis.call('pexpire', KEYS[1], ARGV[2])
  redis.call('zrem', KEYS[2], ARGV[1])
  return nil
end
if ARGV[4] == '1' then
  local t = redis.call('time')
  redis.call('zadd', KEYS[2], 'NX', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), ARGV[1])
  local keep = 2 * tonumber(ARGV[2])
  if redis.call('pttl', KEYS[2]) < keep then redis.call('pexpire', KEYS[2], keep) end
end
return redis.call('pttl', KEYS[1])
)lua";

// KEYS as kWakePrelude; ARGV[1] = owner field, ARGV[2] = ttl ms, ARGV[3] =
// unlock message, ARGV[4] = broadcast. Returns the holds left: > 0 still held,
// 0 released (and waiters woken), -1 nothing to release (woken too), -2 held by
// someone else (unchanged).
//
// Seed 000 (Redisson): with no key, unlock publishes and returns 1. We wake
// as Redisson does (the key is gone, so any waiter may go: waking it beats
// letting it sleep out a stale PTTL), but answer -1, not 1: the caller learns
// already_expired (its lease ran out) rather than released, which the harness
// and the conformance contract need to tell apart (docs/generations.md).
constexpr const char* kReleaseBody = R"lua(
if redis.call('exists', KEYS[1]) == 0 then
  wake_waiters()
  return -1
end
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then return -2 end
local left = redis.call('hincrby', KEYS[1], ARGV[1], -1)
if left > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return left
end
redis.call('del', KEYS[1])
wake_waiters()
return 0
)lua";

// KEYS as kWakePrelude; ARGV[3] = unlock message, ARGV[4] = broadcast. No owner check.
constexpr const char* kForceUnlockBody = R"lua(
if redis.call('del', KEYS[1]) == 1 then
  wake_waiters()
  return 1
end
return 0
)lua";

// A wait ran out (queued mode only): leave the queue. If the lock is free we
// may have been woken for it and not taken it: pass the wake-up on.
// KEYS as kWakePrelude; ARGV[1] = owner field, ARGV[3], ARGV[4] as above.
constexpr const char* kLeaveBody = R"lua(
redis.call('zrem', KEYS[2], ARGV[1])
if redis.call('exists', KEYS[1]) == 0 then wake_waiters() end
return 0
)lua";

constexpr const char* kUnlockMessage = "0";  // Redisson's LockPubSub.UNLOCK_MESSAGE

std::string with_wake(const char* body) { return std::string(kWakePrelude) + body; }

// Redisson's prefixName(prefix, name): "prefix:{name}" unless the name already
// has a hash tag, so the channel and the ZSET share the key's cluster slot.
std::string prefixed(const std::string& prefix, const std::string& key) {
  return prefix + ":" + redis::same_slot_key(key, "");
}

// Redisson's client id is a java.util.UUID: 8-4-4-4-12 hex digits.
std::string uuid_text(const std::string& hex32) {
  return hex32.substr(0, 8) + "-" + hex32.substr(8, 4) + "-" + hex32.substr(12, 4) + "-" + hex32.substr(16, 4) + "-" +
         hex32.substr(20);
}

std::string default_client_id(const LockConfig& config) {
  if (!config.owner.empty()) return config.owner;
  return config.redisson_compatible ? uuid_text(random_token_128()) : random_token_128();
}

}  // namespace

const std::vector<ScriptShape>& reentrant_watchdog_scripts() {
  static const std::vector<ScriptShape> all = {
      script_shape(ScriptRole::reentrant_acquire, kAcquireScript, 2, 4),
      script_shape(ScriptRole::reentrant_release, with_wake(kReleaseBody), 3, 4),
      script_shape(ScriptRole::force_unlock, with_wake(kForceUnlockBody), 3, 4),
      script_shape(ScriptRole::leave_queue, with_wake(kLeaveBody), 3, 4),
      script_shape(ScriptRole::renew, kRenewScript, 1, 2)};
  return all;
}

LockResult ReentrantWatchdogLock::create(const LockConfig& config) {
  if (auto problem = invalid_config(config)) return Error{ErrorKind::usage, *problem};
  if (config.watchdog && config.ttl < std::chrono::milliseconds{3})
    return Error{ErrorKind::usage, "watchdog timeout (ttl) must be >= 3 ms: it is renewed every ttl/3"};
  auto lock = std::make_unique<ReentrantWatchdogLock>(config);
  if (auto connection = lock->link_->get(); !connection) return connection.error();
  return std::unique_ptr<DistributedLock>(std::move(lock));
}

ReentrantWatchdogLock::ReentrantWatchdogLock(const LockConfig& config)
    : config_(config),
      step_(config.step),
      client_id_(default_client_id(config)),
      channel_(config.redisson_compatible ? prefixed("redisson_lock__channel", config.key)
                                          : prefixed("locklab_lock__channel", config.key) + ":w:"),
      waiters_key_(prefixed("locklab_lock__waiters", config.key)),
      broadcast_(config.redisson_compatible ? "1" : "0"),
      creator_(::getpid()),
      link_(std::make_unique<redis::Link>(config.servers.front())),
      acquire_script_(kAcquireScript),
      release_script_(with_wake(kReleaseBody)),
      force_script_(with_wake(kForceUnlockBody)),
      leave_script_(with_wake(kLeaveBody)) {}

ReentrantWatchdogLock::~ReentrantWatchdogLock() {
  // The client "dies": its watchdog stops, its lock (if any) expires after ttl.
  std::lock_guard guard(mutex_);
  if (creator_ == ::getpid()) stop_all_renewals();
  else forget_inherited_doorbells();
}

void ReentrantWatchdogLock::stop_all_renewals() {
  if (renewing_.empty()) return;  // never start a timer thread just to stop nothing
  auto& timer = RenewalTimer::for_this_process();
  for (const auto& field : renewing_) timer.stop(config_.servers.front(), config_.key, field);
  renewing_.clear();
}

// A fork()ed child must not unsubscribe through its parent's subscriber (a copy
// of the parent's state, whose reader thread does not exist here): leak them.
void ReentrantWatchdogLock::forget_inherited_doorbells() {
  for (auto& [field, subscription] : doorbells_) static_cast<void>(subscription.release());
  doorbells_.clear();
}

std::string ReentrantWatchdogLock::owner_field() const { return client_id_ + ":" + std::to_string(::gettid()); }

std::string ReentrantWatchdogLock::waiter_channel(const std::string& field) const {
  return queued() ? channel_ + field : channel_;
}

Acquire ReentrantWatchdogLock::try_acquire(std::chrono::milliseconds wait) {
  clear_error();
  const auto deadline = std::chrono::steady_clock::now() + std::max(wait, std::chrono::milliseconds{0});
  const std::string field = owner_field();
  // Queued mode, already subscribed (an earlier wait of this thread): the first
  // attempt queues us too, and we go straight to sleep if it fails.
  const bool queue_now = wait > std::chrono::milliseconds{0} && has_doorbell(field);
  const Attempt first = attempt(field, queue_now);
  if (first.acquired) return acquired(field);
  if (first.failure) return queue_now ? stop_waiting(field, *first.failure) : *first.failure;
  if (std::chrono::steady_clock::now() >= deadline) return queue_now ? stop_waiting(field, Acquire::timed_out)
                                                                      : Acquire::timed_out;
  return wait_and_retry(field, deadline, queue_now ? first.pttl : std::nullopt);
}

// Subscribe first, then retry (queued: the retry queues us): an unlock before
// the SUBSCRIBE took effect is seen by the retry, one after it wakes the
// subscription (even while we are busy retrying). Never a lost wake-up, never
// a poll loop. `queued_pttl`: the attempt that queued us already ran.
Acquire ReentrantWatchdogLock::wait_and_retry(const std::string& field,
                                              std::chrono::steady_clock::time_point deadline,
                                              std::optional<long long> queued_pttl) {
  std::unique_ptr<Subscription> per_wait;
  auto subscription = subscription_for_wait(field, deadline, per_wait);
  if (!subscription) {
    const Acquire outcome = subscription.error().kind == ErrorKind::timeout
                                ? Acquire::timed_out
                                : fail(Acquire::error, subscription.error().message);
    return queued_pttl ? stop_waiting(field, outcome) : outcome;
  }
  bool attempt_first = !queued_pttl;
  long long pttl = queued_pttl.value_or(-1);
  for (;;) {
    if (attempt_first) {
      const Attempt next = attempt(field, queued());
      if (next.acquired) return acquired(field);
      if (next.failure) return stop_waiting(field, *next.failure);
      pttl = next.pttl.value_or(-1);
    }
    attempt_first = true;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return stop_waiting(field, Acquire::timed_out);
    auto until = deadline;
    if (pttl >= 0) until = std::min(deadline, now + std::chrono::milliseconds{pttl});
    step_("before-wait");
    (*subscription)->wait_until(until);
  }
}

// Queued mode: this thread's own channel, kept between acquisitions (no
// SUBSCRIBE per wait). Broadcast mode: the shared channel for this wait only,
// like Redisson: kept, it would count every unlock while we are not waiting
// and send us retrying for nothing.
Result<Subscription*> ReentrantWatchdogLock::subscription_for_wait(const std::string& field,
                                                                   std::chrono::steady_clock::time_point deadline,
                                                                   std::unique_ptr<Subscription>& per_wait) {
  if (queued()) {
    std::lock_guard guard(mutex_);
    if (auto found = doorbells_.find(field); found != doorbells_.end()) return found->second.get();
  }
  auto fresh = UnlockSubscriber::for_server(config_.servers.front())->subscribe(waiter_channel(field), deadline);
  if (!fresh) return fresh.error();
  if (!queued()) {
    per_wait = std::move(*fresh);
    return per_wait.get();
  }
  std::lock_guard guard(mutex_);
  auto& kept = doorbells_[field];
  kept = std::move(*fresh);
  return kept.get();
}

bool ReentrantWatchdogLock::has_doorbell(const std::string& field) {
  if (!queued()) return false;
  std::lock_guard guard(mutex_);
  return doorbells_.count(field) > 0;
}

// Leaving a wait without the lock (queued mode): out of the queue, and if we
// were woken for a free lock we did not take, the next waiter is woken. If
// that fails we may still be queued: unsubscribe, so a release that reaches us
// finds nobody listening, drops us and wakes the next (no stuck head).
Acquire ReentrantWatchdogLock::stop_waiting(const std::string& field, Acquire outcome) {
  if (!queued()) return outcome;
  auto left = run(leave_script_, {config_.key, waiters_key_, channel_}, {field, "0", kUnlockMessage, broadcast_});
  if (!left || !left->is_integer()) {
    std::lock_guard guard(mutex_);
    doorbells_.erase(field);
  }
  return outcome;
}

ReentrantWatchdogLock::Attempt ReentrantWatchdogLock::attempt(const std::string& field, bool queue_up) {
  const char* reentry = holds(field) > 0 ? "1" : "0";
  auto reply = run(acquire_script_, {config_.key, waiters_key_},
                   {field, std::to_string(config_.ttl.count()), reentry, queue_up ? "1" : "0"});
  if (!reply) {
    // The script may have run and only its reply was lost: we may hold the lock.
    if (reply.error().outcome_unknown()) return Attempt::failed(fail(Acquire::unknown, reply.error().message));
    return Attempt::failed(fail(Acquire::error, reply.error().message));
  }
  if (reply->is_nil()) return Attempt::won();
  if (!reply->is_integer())
    return Attempt::failed(fail(Acquire::error, "acquire script answered " + reply->describe()));
  step_("after-failed-attempt");
  return Attempt::held(reply->integer());
}

Acquire ReentrantWatchdogLock::acquired(const std::string& field) {
  step_("after-acquire-script");
  if (auto shortfall = replication_shortfall(field)) return fail(shortfall->undone ? Acquire::error : Acquire::unknown,
                                                                 shortfall->why);
  set_holds(field, holds(field) + 1);
  start_renewal(field);
  return Acquire::acquired;
}

int ReentrantWatchdogLock::holds(const std::string& field) {
  std::lock_guard guard(mutex_);
  const auto found = holds_.find(field);
  return found == holds_.end() ? 0 : found->second;
}

void ReentrantWatchdogLock::set_holds(const std::string& field, int count) {
  std::lock_guard guard(mutex_);
  if (count > 0) holds_[field] = count;
  else holds_.erase(field);
}

// Redisson's syncedEval: with wait_replicas > 0, WAIT on the connection that
// ran the acquire script; too few acknowledgements => undo this hold (one
// level: a re-entry keeps the outer holds) and do not claim the lock. If the
// undo itself fails, the hold may still be there: the outcome is unknown.
std::optional<ReentrantWatchdogLock::Shortfall> ReentrantWatchdogLock::replication_shortfall(const std::string& field) {
  if (config_.wait_replicas <= 0) return std::nullopt;
  auto why = locklab::replication_shortfall(command(wait_replicas_command(config_)), config_);
  if (!why) return std::nullopt;
  step_("before-undo");
  auto undo = run(release_script_, {config_.key, waiters_key_, channel_},
                  {field, std::to_string(config_.ttl.count()), kUnlockMessage, broadcast_});
  const bool undone = undo && undo->is_integer();
  return Shortfall{*why + (undone ? "" : "; undoing it failed too, the hold may remain"), undone};
}

void ReentrantWatchdogLock::start_renewal(const std::string& field) {
  if (!config_.watchdog) return;  // explicit lease: it expires after ttl, whatever happens
  std::lock_guard guard(mutex_);
  renewing_.insert(field);
  RenewalTimer::for_this_process().start(
      Renewal{config_.servers.front(), config_.key, field, config_.ttl, step_, lost_});
}

Release ReentrantWatchdogLock::release() {
  clear_error();
  const std::string field = owner_field();
  // Stop renewing BEFORE the script, so a renewal racing it (and finding the
  // key just deleted) is ignored instead of counted as a lost lease. On an
  // error it stays stopped, like Redisson: at worst the key expires after ttl.
  const bool was_renewing = stop_renewal(field);
  step_("before-unlock-script");
  auto reply = run(release_script_, {config_.key, waiters_key_, channel_},
                   {field, std::to_string(config_.ttl.count()), kUnlockMessage, broadcast_});
  if (!reply || !reply->is_integer()) {
    // The twin of the fresh-acquire rule above: after a failed release we no
    // longer know our count (the script may or may not have run). Forget it,
    // so the next acquire is a fresh one (HSET 1), never a re-entry stacked on
    // a count the server may still have: that would make every later release
    // answer still_held while the watchdog renews the lock forever.
    set_holds(field, 0);
    return fail(Release::error, reply ? "release script answered " + reply->describe() : reply.error().message);
  }
  const long long left = reply->integer();
  set_holds(field, left > 0 ? static_cast<int>(left) : 0);
  if (left > 0) {
    start_renewal(field);
    return Release::still_held;
  }
  if (left == 0) return Release::released;
  // Our hold was gone while the watchdog still renewed it: a lost lease the
  // timer had not noticed yet (stop() said it still had it: counted once).
  if (was_renewing) lost_->fetch_add(1);
  return left == -1 ? Release::already_expired : Release::not_owner;
}

Release ReentrantWatchdogLock::force_unlock() {
  clear_error();
  {
    // Redisson's cancelExpirationRenewal(null), BEFORE the script (seed 000):
    // a renewal running after the DEL would find the key gone and count a
    // lease as lost that we ended on purpose.
    std::lock_guard guard(mutex_);
    stop_all_renewals();
    holds_.clear();
  }
  step_("before-force-unlock-script");
  auto reply = run(force_script_, {config_.key, waiters_key_, channel_}, {"", "0", kUnlockMessage, broadcast_});
  if (!reply || !reply->is_integer())
    return fail(Release::error, reply ? "force-unlock script answered " + reply->describe() : reply.error().message);
  return reply->integer() == 1 ? Release::released : Release::already_expired;
}

bool ReentrantWatchdogLock::stop_renewal(const std::string& field) {
  std::lock_guard guard(mutex_);
  if (renewing_.erase(field) == 0) return false;
  return RenewalTimer::for_this_process().stop(config_.servers.front(), config_.key, field);
}

Result<redis::Reply> ReentrantWatchdogLock::run(redis::Script& script, const redis::Args& keys,
                                                       const redis::Args& args) {
  std::lock_guard guard(mutex_);
  return link_for_this_process().run(script, keys, args);
}

Result<redis::Reply> ReentrantWatchdogLock::command(const redis::Args& args) {
  std::lock_guard guard(mutex_);
  return link_for_this_process().command(args);
}

redis::Link& ReentrantWatchdogLock::link_for_this_process() {
  if (creator_ != ::getpid()) {
    // A fork()ed child: never write on the parent's socket, never trust the parent's renewals.
    link_ = std::make_unique<redis::Link>(config_.servers.front());
    renewing_.clear();
    holds_.clear();
    forget_inherited_doorbells();
    creator_ = ::getpid();
  }
  return *link_;
}

}  // namespace locklab
