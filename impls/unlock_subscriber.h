// The pub/sub side of generation 5: one dedicated SUBSCRIBE connection per
// process and server, shared by every lock object and thread in the process
// (Redisson's LockPubSub). A waiter subscribes to its lock's channel, retries,
// and then sleeps until an unlock message or its PTTL, whichever comes first.
//
// One reader thread owns the connection (hiredis contexts are not thread-safe).
// It poll()s the socket and an eventfd; other threads change the wanted set of
// channels under the mutex and ring the eventfd. Per channel it counts the
// unlock messages received; a Subscription remembers the count it has seen, so
// a message that arrives while its waiter is busy retrying is not lost: the
// next wait returns at once. Every waiter of the channel in this process wakes
// on a message (they race for the lock through the acquire script; the losers
// get a PTTL and sleep again). Generation 5 gives each waiting thread a channel
// of its own by default, so one message wakes one waiter; only its
// Redisson-compatible mode shares one channel among all waiters.
//
// If the connection breaks, the reader wakes every waiter (they retry, then
// wait again, bounded by the PTTL), reconnects and resubscribes. A connection
// that just goes quiet (half-open, or a hung server) is found out by a PING
// after 1 s of silence that gets no answer within 1 s: treated the same. With
// nothing subscribed the reader does not reconnect; the next subscribe() does.
// (tests/reentrant_watchdog_test.cpp: Subscriber*.)
//
// Created lazily in the process that first uses it: a fork()ed child gets its
// own connection and thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "redis/connection.h"

namespace locklab {

class UnlockSubscriber;

// Subscribed while alive (the channel is unsubscribed when its last one dies).
class Subscription {
 public:
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;
  ~Subscription();

  // Sleeps until an unlock message arrives (one not yet seen by this
  // subscription), the subscriber's connection resets, or the deadline.
  // True = woken by a message or a reset, false = the deadline passed.
  bool wait_until(std::chrono::steady_clock::time_point deadline);

 private:
  friend class UnlockSubscriber;
  Subscription(std::shared_ptr<UnlockSubscriber> owner, std::string channel, std::uint64_t seen, std::uint64_t resets)
      : owner_(std::move(owner)), channel_(std::move(channel)), seen_(seen), resets_seen_(resets) {}

  std::shared_ptr<UnlockSubscriber> owner_;
  std::string channel_;
  std::uint64_t seen_;         // unlock messages counted on the channel when we last looked
  std::uint64_t resets_seen_;  // connection resets when we last looked
};

class UnlockSubscriber : public std::enable_shared_from_this<UnlockSubscriber> {
 public:
  // The subscriber for `server` in the calling process.
  static std::shared_ptr<UnlockSubscriber> for_server(const redis::ConnectionOptions& server);

  // Returns once the server confirmed SUBSCRIBE (so an unlock published after
  // this returns will wake the subscription), or an error: the deadline passed
  // (ErrorKind::timeout) or the server could not be reached (ErrorKind::io).
  Result<std::unique_ptr<Subscription>> subscribe(const std::string& channel,
                                                         std::chrono::steady_clock::time_point deadline);

  explicit UnlockSubscriber(redis::ConnectionOptions server);  // use for_server()
  UnlockSubscriber(const UnlockSubscriber&) = delete;
  UnlockSubscriber& operator=(const UnlockSubscriber&) = delete;

 private:
  friend class Subscription;
  enum class State { unsubscribed, subscribing, subscribed, unsubscribing };
  struct Channel {
    int subscriptions = 0;  // live Subscription objects
    State state = State::unsubscribed;
    std::uint64_t messages = 0;
  };

  void release(const std::string& channel);
  void ring();  // wake the reader thread
  // Reader thread only:
  void run();
  void connect_and_resubscribe(std::unique_lock<std::mutex>& lock);
  void reconcile();  // send SUBSCRIBE / UNSUBSCRIBE so the server matches `channels_`
  void handle(const redis::Reply& reply);
  void lose_connection(const std::string& why);
  bool anything_wanted() const;  // with mutex_ held
  bool check_alive();            // PING when idle; false = gave up on the connection

  redis::ConnectionOptions server_;
  int wake_fd_ = -1;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Channel> channels_;
  std::uint64_t resets_ = 0;          // connection losses so far (wakes every waiter)
  std::uint64_t connect_failures_ = 0;
  std::string last_error_;

  // Touched by the reader thread only:
  std::optional<redis::Connection> connection_;
  std::chrono::steady_clock::time_point last_heard_;  // last reply of any kind
  bool ping_sent_ = false;
  std::chrono::steady_clock::time_point pong_due_;
};

}  // namespace locklab
