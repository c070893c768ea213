#include "unlock_subscriber.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "process_local.h"

namespace locklab {
namespace {

using namespace std::chrono_literals;

constexpr auto kReconnectPause = 100ms;
constexpr auto kReadRestOfMessage = 2s;  // a message half-read after poll() said readable

// Heard nothing for this long => PING; no answer by kPongDeadline => the
// connection is dead (half-open, or the server hangs): wake the waiters and
// reconnect. A dead subscription is noticed within about 2 s.
constexpr auto kPingWhenIdleFor = 1s;
constexpr auto kPongDeadline = 1s;

int poll_timeout_until(std::chrono::steady_clock::time_point when) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(when - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<std::chrono::milliseconds::rep>(left.count(), 0));
}

struct Directory {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<UnlockSubscriber>> by_endpoint;
};

}  // namespace

std::shared_ptr<UnlockSubscriber> UnlockSubscriber::for_server(const redis::ConnectionOptions& server) {
  auto& directory = ProcessLocal<Directory>::get();
  std::lock_guard guard(directory.mutex);
  auto& subscriber = directory.by_endpoint[server.endpoint.to_string()];
  if (!subscriber) subscriber = std::make_shared<UnlockSubscriber>(server);
  return subscriber;
}

UnlockSubscriber::UnlockSubscriber(redis::ConnectionOptions server)
    : server_(std::move(server)), wake_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  // Lives as long as the process (the directory never drops it).
  std::thread([this] { run(); }).detach();
}

Result<std::unique_ptr<Subscription>> UnlockSubscriber::subscribe(
    const std::string& channel, std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  Channel& wanted = channels_[channel];
  ++wanted.subscriptions;
  const auto failures_before = connect_failures_;
  ring();
  changed_.wait_until(lock, deadline, [&] {
    return wanted.state == State::subscribed || connect_failures_ != failures_before;
  });
  if (wanted.state == State::subscribed)
    return std::unique_ptr<Subscription>(new Subscription(shared_from_this(), channel, wanted.messages, resets_));

  --wanted.subscriptions;
  ring();
  if (connect_failures_ != failures_before)
    return Error{ErrorKind::io, "unlock subscriber: " + last_error_};
  return Error{ErrorKind::timeout, "SUBSCRIBE " + channel + " not confirmed before the deadline"};
}

void UnlockSubscriber::release(const std::string& channel) {
  std::lock_guard guard(mutex_);
  --channels_[channel].subscriptions;
  ring();
}

void UnlockSubscriber::ring() {
  changed_.notify_all();  // a reader with no connection sleeps on changed_, not on the eventfd
  const std::uint64_t one = 1;
  if (::write(wake_fd_, &one, sizeof one) < 0) {
    // Only EAGAIN (counter saturated: the reader is due to wake anyway) can happen here.
  }
}

Subscription::~Subscription() { owner_->release(channel_); }

bool Subscription::wait_until(std::chrono::steady_clock::time_point deadline) {
  UnlockSubscriber& owner = *owner_;
  std::unique_lock lock(owner.mutex_);
  const auto& channel = owner.channels_[channel_];
  const bool woken = owner.changed_.wait_until(lock, deadline, [&] {
    return channel.messages != seen_ || owner.resets_ != resets_seen_;
  });
  seen_ = channel.messages;
  resets_seen_ = owner.resets_;
  return woken;
}

// ---- the reader thread ----------------------------------------------------

void UnlockSubscriber::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (!connection_) {
      // Nothing subscribed: nothing to reconnect for. Sleep until someone subscribes.
      if (!anything_wanted()) {
        changed_.wait(lock);
        continue;
      }
      connect_and_resubscribe(lock);
      continue;
    }
    reconcile();
    if (!connection_) continue;
    if (!check_alive()) continue;
    const auto wake_at = ping_sent_ ? pong_due_ : last_heard_ + kPingWhenIdleFor;
    bool readable = connection_->buffered();  // already read from the socket: poll() would not say so
    lock.unlock();
    if (!readable) {
      pollfd fds[2] = {{connection_->fd(), POLLIN, 0}, {wake_fd_, POLLIN, 0}};
      const int ready = ::poll(fds, 2, poll_timeout_until(wake_at));
      if (ready > 0 && (fds[1].revents & POLLIN) != 0) {
        std::uint64_t count = 0;
        if (::read(wake_fd_, &count, sizeof count) < 0) {
          // EAGAIN: another read already drained it.
        }
      }
      readable = ready > 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
    }
    std::optional<Result<redis::Reply>> reply;
    if (readable) reply.emplace(connection_->read_until(std::chrono::steady_clock::now() + kReadRestOfMessage));
    lock.lock();
    if (!reply) continue;
    if (!*reply) {
      lose_connection(reply->error().message);
      continue;
    }
    last_heard_ = std::chrono::steady_clock::now();  // any reply proves the connection alive
    ping_sent_ = false;
    handle(**reply);
  }
}

bool UnlockSubscriber::anything_wanted() const {
  for (const auto& [name, channel] : channels_)
    if (channel.subscriptions > 0) return true;
  return false;
}

// poll(-1) on a half-open connection would wait forever: when idle, PING it
// (allowed on a subscribed connection), and give up on it past the deadline.
bool UnlockSubscriber::check_alive() {
  const auto now = std::chrono::steady_clock::now();
  if (ping_sent_ && now >= pong_due_) {
    lose_connection(server_.endpoint.to_string() + ": no answer to PING within " +
                    std::to_string(std::chrono::milliseconds(kPongDeadline).count()) + " ms");
    return false;
  }
  if (!ping_sent_ && now >= last_heard_ + kPingWhenIdleFor) {
    if (auto sent = connection_->send({"PING"}); !sent) {
      lose_connection(sent.error().message);
      return false;
    }
    ping_sent_ = true;
    pong_due_ = now + kPongDeadline;
  }
  return true;
}

void UnlockSubscriber::connect_and_resubscribe(std::unique_lock<std::mutex>& lock) {
  lock.unlock();
  auto fresh = redis::Connection::connect(server_);
  lock.lock();
  if (!fresh) {
    ++connect_failures_;
    last_error_ = fresh.error().message;
    changed_.notify_all();
    changed_.wait_for(lock, kReconnectPause);
    return;
  }
  connection_.emplace(std::move(fresh).value());
  last_heard_ = std::chrono::steady_clock::now();
  ping_sent_ = false;
  for (auto& [name, channel] : channels_) channel.state = State::unsubscribed;  // reconcile() subscribes again
}

void UnlockSubscriber::reconcile() {
  for (auto it = channels_.begin(); it != channels_.end();) {
    Channel& channel = it->second;
    const bool wanted = channel.subscriptions > 0;
    if (!wanted && channel.state == State::unsubscribed) {
      it = channels_.erase(it);
      continue;
    }
    std::optional<Status> sent;
    if (wanted && channel.state == State::unsubscribed) {
      sent = connection_->send({"SUBSCRIBE", it->first});
      channel.state = State::subscribing;
    } else if (!wanted && channel.state == State::subscribed) {
      sent = connection_->send({"UNSUBSCRIBE", it->first});
      channel.state = State::unsubscribing;
    }
    if (sent && !*sent) {
      lose_connection(sent->error().message);
      return;
    }
    ++it;
  }
}

// Pushed replies are arrays: [subscribe|unsubscribe|message, channel, count|payload].
void UnlockSubscriber::handle(const redis::Reply& reply) {
  if (!reply.is_array() || reply.size() < 3) return;
  const std::string kind(reply.element(0).text());
  const auto found = channels_.find(std::string(reply.element(1).text()));
  if (found == channels_.end()) return;
  Channel& channel = found->second;
  if (kind == "message")
    ++channel.messages;
  else if (kind == "subscribe")
    channel.state = State::subscribed;
  else if (kind == "unsubscribe")
    channel.state = State::unsubscribed;
  changed_.notify_all();
}

void UnlockSubscriber::lose_connection(const std::string& why) {
  connection_.reset();
  ++resets_;
  last_error_ = why;
  for (auto& [name, channel] : channels_) channel.state = State::unsubscribed;
  changed_.notify_all();
}

}  // namespace locklab
