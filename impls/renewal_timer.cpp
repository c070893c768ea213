#include "renewal_timer.h"

#include <thread>

#include "process_local.h"
#include "redis/link.h"
#include "redis/script.h"

namespace locklab {
namespace {

constexpr const char* kRenewScript = R"lua(
if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 1
end
return 0
)lua";

}  // namespace

// Only the timer thread touches these.
struct RenewalTimer::Links {
  struct Server {
    redis::Link link;
    redis::Script script{kRenewScript};
  };
  std::map<std::string, std::unique_ptr<Server>> by_endpoint;

  Server& to(const redis::ConnectionOptions& options) {
    auto& server = by_endpoint[options.endpoint.to_string()];
    if (!server) server.reset(new Server{redis::Link(options)});
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
  if (entries_.count(name) != 0) return;
  const auto due = std::chrono::steady_clock::now() + renewal.lease / 3;
  entries_.emplace(name, Entry{std::move(renewal), next_id_++, due});
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
    if (next->second.due > std::chrono::steady_clock::now()) {
      changed_.wait_until(lock, next->second.due);  // woken early by start(): look again
      continue;
    }
    const std::string name = next->first;
    const Entry due = next->second;
    lock.unlock();
    const Outcome outcome = renew(due.renewal);
    lock.lock();

    auto entry = entries_.find(name);
    if (entry == entries_.end() || entry->second.id != due.id) continue;  // stopped meanwhile
    if (outcome == Outcome::lost || outcome == Outcome::abandoned) {
      if (outcome == Outcome::lost) due.renewal.lost->fetch_add(1);
      entries_.erase(entry);
    } else {
      entry->second.due = std::chrono::steady_clock::now() + due.renewal.lease / 3;
    }
  }
}

RenewalTimer::Outcome RenewalTimer::renew(const Renewal& renewal) {
  try {
    renewal.step("before-renewal");
  } catch (...) {
    return Outcome::abandoned;  // a hook "crashed" the watchdog: it renews no more
  }
  auto& server = links_->to(renewal.server);
  auto connection = server.link.get();
  if (!connection) return Outcome::failed;
  auto reply = server.script.run(**connection, {renewal.key},
                                 {renewal.field, std::to_string(renewal.lease.count())});
  if (!reply || !reply->is_integer()) return Outcome::failed;
  return reply->integer() == 1 ? Outcome::renewed : Outcome::lost;
}

}  // namespace locklab
