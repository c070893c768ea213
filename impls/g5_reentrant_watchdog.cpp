#include "g5_reentrant_watchdog.h"

#include <unistd.h>

#include "renewal_timer.h"
#include "token.h"
#include "unlock_subscriber.h"

namespace locklab {
namespace {

// KEYS[1] = lock, ARGV[1] = owner field, ARGV[2] = ttl ms.
// nil = acquired (or re-entered); an integer = the holder's PTTL (-1: no expiry).
constexpr const char* kAcquireScript = R"lua(
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[1], 1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  return nil
end
return redis.call('pttl', KEYS[1])
)lua";

// KEYS[1] = lock, KEYS[2] = channel, ARGV[1] = owner field, ARGV[2] = ttl ms,
// ARGV[3] = unlock message. Returns the holds left: > 0 still held, 0 released
// (and published), -1 nothing to release, -2 held by someone else (unchanged).
constexpr const char* kReleaseScript = R"lua(
if redis.call('exists', KEYS[1]) == 0 then return -1 end
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
std::string channel_for(const std::string& key) {
  if (key.find('{') != std::string::npos) return "locklab_lock__channel:" + key;
  return "locklab_lock__channel:{" + key + "}";
}

}  // namespace

LockResult ReentrantWatchdogLock::make(const LockConfig& config) {
  if (auto problem = invalid_config(config)) return redis::Error{redis::ErrorKind::usage, *problem};
  if (config.watchdog && config.ttl < std::chrono::milliseconds{3})
    return redis::Error{redis::ErrorKind::usage, "watchdog timeout (ttl) must be >= 3 ms: it is renewed every ttl/3"};
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
  if (creator_ != ::getpid()) return;
  for (const auto& field : renewing_) RenewalTimer::for_this_process().stop(config_.servers.front(), config_.key, field);
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
Acquire ReentrantWatchdogLock::wait_and_retry(const std::string& field, std::chrono::steady_clock::time_point deadline) {
  auto subscription = UnlockSubscriber::for_server(config_.servers.front())->subscribe(channel_, deadline);
  if (!subscription) {
    if (subscription.error().kind == redis::ErrorKind::timeout) return Acquire::timed_out;
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
  auto reply = run(acquire_script_, {config_.key}, {field, std::to_string(config_.ttl.count())});
  if (!reply) {
    // The script may have run and only its reply was lost: we may hold the lock.
    if (reply.error().outcome_unknown()) return Attempt::failed(fail(Acquire::unknown, reply.error().message));
    return Attempt::failed(fail(Acquire::error, reply.error().message));
  }
  if (reply->is_nil()) return Attempt::won();
  if (!reply->is_integer()) return Attempt::failed(fail(Acquire::error, "acquire script answered " + reply->describe()));
  step_("after-failed-attempt");
  return Attempt::held(reply->integer());
}

Acquire ReentrantWatchdogLock::acquired(const std::string& field) {
  step_("after-acquire-script");
  if (!config_.watchdog) return Acquire::acquired;  // explicit lease: it expires after ttl, whatever happens
  std::lock_guard guard(mutex_);
  renewing_.insert(field);
  RenewalTimer::for_this_process().start(
      Renewal{config_.servers.front(), config_.key, field, config_.ttl, step_, lost_});
  return Acquire::acquired;
}

Release ReentrantWatchdogLock::release() {
  clear_error();
  const std::string field = owner_field();
  step_("before-unlock-script");
  auto reply = run(release_script_, {config_.key, channel_},
                   {field, std::to_string(config_.ttl.count()), kUnlockMessage});
  if (!reply || !reply->is_integer()) {
    // Like Redisson, stop renewing anyway: at worst the key expires after ttl.
    stop_renewal(field);
    return fail(Release::error, reply ? "release script answered " + reply->describe() : reply.error().message);
  }
  const long long left = reply->integer();
  if (left > 0) return Release::still_held;
  const bool was_renewing = stop_renewal(field);
  if (left == 0) return Release::released;
  if (was_renewing) lost_->fetch_add(1);
  return left == -1 ? Release::already_expired : Release::not_owner;
}

Release ReentrantWatchdogLock::force_unlock() {
  clear_error();
  auto reply = run(force_script_, {config_.key, channel_}, {kUnlockMessage});
  {
    std::lock_guard guard(mutex_);
    for (const auto& field : renewing_) RenewalTimer::for_this_process().stop(config_.servers.front(), config_.key, field);
    renewing_.clear();
  }
  if (!reply || !reply->is_integer())
    return fail(Release::error, reply ? "force-unlock script answered " + reply->describe() : reply.error().message);
  return reply->integer() == 1 ? Release::released : Release::already_expired;
}

// A release that finds our hold gone while the watchdog was still renewing it
// is a lost lease the timer had not noticed yet: count it here (stop() says
// whether the timer still had it, so it is never counted twice).
bool ReentrantWatchdogLock::stop_renewal(const std::string& field) {
  std::lock_guard guard(mutex_);
  if (renewing_.erase(field) == 0) return false;
  return RenewalTimer::for_this_process().stop(config_.servers.front(), config_.key, field);
}

redis::Result<redis::Reply> ReentrantWatchdogLock::run(redis::Script& script, const redis::Args& keys,
                                                       const redis::Args& args) {
  std::lock_guard guard(mutex_);
  if (creator_ != ::getpid()) {
    // A fork()ed child: never write on the parent's socket, never trust the parent's renewals.
    link_ = std::make_unique<redis::Link>(config_.servers.front());
    renewing_.clear();
    creator_ = ::getpid();
  }
  auto connection = link_->get();
  if (!connection) return connection.error();
  return script.run(**connection, keys, args);
}

}  // namespace locklab
