#include "g5_reentrant_watchdog.h"

#include <unistd.h>

#include "redis/cluster.h"
#include "renewal_timer.h"
#include "replica_wait.h"
#include "token.h"
#include "unlock_subscriber.h"

namespace locklab {
namespace {

// KEYS[1] = lock, ARGV[1] = owner field, ARGV[2] = ttl ms, ARGV[3] = "1" for a
// re-entry (we already hold it), "0" for a fresh acquire.
// nil = acquired (or re-entered); an integer = the holder's PTTL (-1: no expiry).
//
// One departure from Redisson: a *fresh* acquire sets our count to 1 instead of
// incrementing it. An earlier acquire whose reply was lost (Acquire::unknown)
// may have left our field at 1; incrementing on top of it would make one
// release leave the lock held until ttl. (tests: LostAcquireReplyIsUnknown)
constexpr const char* kAcquireScript = R"lua(
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  if ARGV[3] == '1' then
    redis.call('hincrby', KEYS[1], ARGV[1], 1)
  else
    redis.call('hset', KEYS[1], ARGV[1], 1)
  end
  redis.call('pexpire', KEYS[1], ARGV[2])
  return nil
end
return redis.call('pttl', KEYS[1])
)lua";

// KEYS[1] = lock, KEYS[2] = channel, ARGV[1] = owner field, ARGV[2] = ttl ms,
// ARGV[3] = unlock message. Returns the holds left: > 0 still held, 0 released
// (and published), -1 nothing to release (published too), -2 held by someone
// else (unchanged).
//
// Seed 000 (Redisson): with no key, unlock publishes and returns 1. We publish
// as Redisson does (the key is gone, so any waiter may go: waking it beats
// letting it sleep out a stale PTTL), but answer -1, not 1: the caller learns
// already_expired (its lease ran out) rather than released, which the harness
// and the conformance contract need to tell apart (docs/generations.md).
constexpr const char* kReleaseScript = R"lua(
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('publish', KEYS[2], ARGV[3])
  return -1
end
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then return -2 end
local left = redis.call('hincrby', KEYS[1], ARGV[1], -1)
if left > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return left
end
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[3])
return 0
)lua";

// KEYS[1] = lock, KEYS[2] = channel, ARGV[1] = unlock message. No owner check.
constexpr const char* kForceUnlockScript = R"lua(
if redis.call('del', KEYS[1]) == 1 then
  redis.call('publish', KEYS[2], ARGV[1])
  return 1
end
return 0
)lua";

constexpr const char* kUnlockMessage = "0";

// Redisson's prefixName(): the channel shares the key's hash slot in a cluster.
std::string channel_for(const std::string& key) { return "locklab_lock__channel:" + redis::same_slot_key(key, ""); }

}  // namespace

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
      client_id_(config.owner.empty() ? random_token_128() : config.owner),
      channel_(channel_for(config.key)),
      creator_(::getpid()),
      link_(std::make_unique<redis::Link>(config.servers.front())),
      acquire_script_(kAcquireScript),
      release_script_(kReleaseScript),
      force_script_(kForceUnlockScript) {}

ReentrantWatchdogLock::~ReentrantWatchdogLock() {
  // The client "dies": its watchdog stops, its lock (if any) expires after ttl.
  std::lock_guard guard(mutex_);
  if (creator_ == ::getpid()) stop_all_renewals();
}

void ReentrantWatchdogLock::stop_all_renewals() {
  if (renewing_.empty()) return;  // never start a timer thread just to stop nothing
  auto& timer = RenewalTimer::for_this_process();
  for (const auto& field : renewing_) timer.stop(config_.servers.front(), config_.key, field);
  renewing_.clear();
}

std::string ReentrantWatchdogLock::owner_field() const { return client_id_ + ":" + std::to_string(::gettid()); }

Acquire ReentrantWatchdogLock::try_acquire(std::chrono::milliseconds wait) {
  clear_error();
  const auto deadline = std::chrono::steady_clock::now() + std::max(wait, std::chrono::milliseconds{0});
  const std::string field = owner_field();
  const Attempt first = attempt(field);
  if (first.acquired) return acquired(field);
  if (first.failure) return *first.failure;
  if (std::chrono::steady_clock::now() >= deadline) return Acquire::timed_out;
  return wait_and_retry(field, deadline);
}

// Subscribe first, then retry: an unlock published before the SUBSCRIBE took
// effect is seen by the retry, one published after it wakes the subscription
// (even while we are busy retrying). Never a lost wake-up, never a poll loop.
Acquire ReentrantWatchdogLock::wait_and_retry(const std::string& field,
                                              std::chrono::steady_clock::time_point deadline) {
  auto subscription = UnlockSubscriber::for_server(config_.servers.front())->subscribe(channel_, deadline);
  if (!subscription) {
    if (subscription.error().kind == ErrorKind::timeout) return Acquire::timed_out;
    return fail(Acquire::error, subscription.error().message);
  }
  for (;;) {
    const Attempt next = attempt(field);
    if (next.acquired) return acquired(field);
    if (next.failure) return *next.failure;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return Acquire::timed_out;
    auto until = deadline;
    if (*next.pttl >= 0) until = std::min(deadline, now + std::chrono::milliseconds{*next.pttl});
    step_("before-wait");
    (*subscription)->wait_until(until);
  }
}

ReentrantWatchdogLock::Attempt ReentrantWatchdogLock::attempt(const std::string& field) {
  const char* reentry = holds(field) > 0 ? "1" : "0";
  auto reply = run(acquire_script_, {config_.key}, {field, std::to_string(config_.ttl.count()), reentry});
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
  auto undo = run(release_script_, {config_.key, channel_}, {field, std::to_string(config_.ttl.count()), kUnlockMessage});
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
  auto reply = run(release_script_, {config_.key, channel_},
                   {field, std::to_string(config_.ttl.count()), kUnlockMessage});
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
  auto reply = run(force_script_, {config_.key, channel_}, {kUnlockMessage});
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
    creator_ = ::getpid();
  }
  return *link_;
}

}  // namespace locklab
