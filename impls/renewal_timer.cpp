#include "renewal_timer.h"

#include <algorithm>
#include <thread>

#include "redis/link.h"
#include "redis/script.h"

#include "process_local.h"

namespace locklab {

const char* const kRenewScript = R"lua(
if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 1
end
return 0
)lua";

namespace {

// The lock's own options, with connect and command timeouts cut to `bound`.
redis::ConnectionOptions bounded(redis::ConnectionOptions options, std::chrono::milliseconds bound) {
  options.connect_timeout = std::min(options.connect_timeout, bound);
  if (options.command_timeout.count() == 0 || options.command_timeout > bound) options.command_timeout = bound;
  return options;
}

}  // namespace

std::chrono::milliseconds renewal_round_trip_bound(std::chrono::milliseconds lease) {
  return std::max(std::chrono::milliseconds{1}, lease / 12);
}

// Only the timer thread touches these.
struct RenewalTimer::Links {
  struct Server {
    redis::Link link;
    redis::Script script{kRenewScript};
  };
  // One connection per server and bound: locks with different leases need
  // different timeouts (hiredis sets them per context).
  std::map<std::string, std::unique_ptr<Server>> by_endpoint_and_bound;

  Server& to(const redis::ConnectionOptions& options, std::chrono::milliseconds lease) {
    const auto bound = renewal_round_trip_bound(lease);
    auto& server = by_endpoint_and_bound[options.endpoint.to_string() + '/' + std::to_string(bound.count())];
    if (!server) server.reset(new Server{redis::Link(bounded(options, bound))});
    return *server;
  }
};

RenewalTimer& RenewalTimer::for_this_process() { return ProcessLocal<RenewalTimer>::get(); }

RenewalTimer::RenewalTimer() : links_(std::make_unique<Links>()) {
  // Lives as long as the process (ProcessLocal never destroys it).
  std::thread([this] { run(); }).detach();
}

std::string RenewalTimer::name_of(const redis::ConnectionOptions& server, const std::string& key,
                                  const std::string& field) {
  return server.endpoint.to_string() + '\n' + key + '\n' + field;
}

void RenewalTimer::start(Renewal renewal) {
  std::lock_guard guard(mutex_);
  const auto name = name_of(renewal.server, renewal.key, renewal.field);
  if (auto live = entries_.find(name); live != entries_.end()) {
    ++live->second.restarts;
    return;
  }
  const auto due = std::chrono::steady_clock::now() + renewal.lease / 3;
  entries_.emplace(name, Entry{std::move(renewal), next_id_++, 0, due});
  changed_.notify_all();
}

bool RenewalTimer::stop(const redis::ConnectionOptions& server, const std::string& key, const std::string& field) {
  std::lock_guard guard(mutex_);
  return entries_.erase(name_of(server, key, field)) != 0;
}

std::size_t RenewalTimer::scheduled() const {
  std::lock_guard guard(mutex_);
  return entries_.size();
}

void RenewalTimer::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (entries_.empty()) {
      changed_.wait(lock);
      continue;
    }
    auto next = entries_.begin();
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->second.due < next->second.due) next = it;
    if (const auto due = next->second.due; due > std::chrono::steady_clock::now()) {
      changed_.wait_until(lock, due);  // a copy: the entry may be stopped meanwhile; woken early by start()
      continue;
    }
    const std::string name = next->first;
    const Entry due = next->second;
    lock.unlock();
    const Outcome outcome = renew(due.renewal);
    lock.lock();

    auto entry = entries_.find(name);
    if (entry == entries_.end() || entry->second.id != due.id) continue;  // stopped meanwhile: ignore
    if (outcome == Outcome::lost) due.renewal.lost->fetch_add(1);
    // A start() during the renewal is a fresh hold made after the one we found
    // gone: keep renewing that one.
    const bool restarted = entry->second.restarts != due.restarts;
    if (outcome == Outcome::abandoned || (outcome == Outcome::lost && !restarted))
      entries_.erase(entry);
    else
      entry->second.due = std::chrono::steady_clock::now() + due.renewal.lease / 3;
  }
}

RenewalTimer::Outcome RenewalTimer::renew(const Renewal& renewal) {
  try {
    renewal.step("before-renewal");
  } catch (...) {
    return Outcome::abandoned;  // a hook "crashed" the watchdog: it renews no more
  }
  auto& server = links_->to(renewal.server, renewal.lease);
  auto reply = server.link.run(server.script, {renewal.key},  // routed by the key in cluster mode
                               {renewal.field, std::to_string(renewal.lease.count())});
  if (!reply || !reply->is_integer()) return Outcome::failed;
  try {
    renewal.step("after-renewal-script");
  } catch (...) {
    return Outcome::abandoned;
  }
  return reply->integer() == 1 ? Outcome::renewed : Outcome::lost;
}

}  // namespace locklab
