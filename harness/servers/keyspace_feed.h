// One lock server watched by the run's witness: its keyspace notifications for
// the lock keys, in the order the server emitted them, each stamped when read,
// and reads of a key (PTTL, TYPE, its value) that leave a marker in that same
// order, so the join can tell which events came after a read on the server
// (run/witness_join.h; docs/harness.md, "The server as witness").
//
// It talks to the server directly (never through a fault proxy: a cut link or
// a held proxy must not blind it), on two connections of its own that are not
// counted in the clients' traffic. One thread per feed polls the subscription
// fd (poll() with a bound, then read: a timed-out blocking read would leave the
// hiredis context dead) and serves read requests between polls.
//
// Stamps are steady_clock ns, the history's clock (history.h, monotonic_ns()):
// an event is stamped after it was read from the socket, so it happened on the
// server before its stamp.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "redis/connection.h"
#include "redis/result.h"

#include "support/fork_quiet.h"

namespace locklab::harness {

// One item of a node's stream, in server order: a keyspace event on a watched
// key, or the marker of one of our reads (read >= 0).
struct FeedItem {
  std::int64_t stamp_ns = 0;  // read from the socket (the event happened before)
  std::string key;            // the lock key the event is about ("" for a marker)
  std::string event;          // "set", "expire", "expired", "del", "hset", ...; "" for a marker
  int read = -1;              // index into FeedLog::reads for a marker
};

// What one read saw: the key's PTTL, type and value, between sent and replied.
struct KeyRead {
  int client = -1;            // the holder the read was asked for
  std::string key;
  std::int64_t sent_ns = 0;
  std::int64_t replied_ns = 0;  // 0: no answer (error or timeout)
  std::int64_t pttl = -2;       // -2 absent, -1 no expiry
  std::string type;             // "none", "string", "hash", "list", "zset"
  std::vector<std::string> value;  // the string, or the hash's fields / the list's or zset's members
};

// Everything a feed saw, handed over once it stopped.
struct FeedLog {
  std::string node;                 // host:port, direct
  std::vector<FeedItem> items;      // server order
  std::vector<KeyRead> reads;
  std::int64_t commands_sent = 0;   // commands of its reads, as INFO commandstats counts them
  std::int64_t blind_from_ns = 0;   // the subscription broke then (0: it held to the end)
  bool ended_cleanly = false;       // its end marker came back: nothing emitted before stop() is missing
  std::string error;                // why it went blind, if it did
};

class KeyspaceFeed {
 public:
  // Enables the notifications the witness needs on `node` (adding to what is
  // set there), subscribes to every key's channel and its own marker channel,
  // and starts its thread.
  static Result<std::unique_ptr<KeyspaceFeed>> start(const redis::ConnectionOptions& node,
                                                     const std::vector<std::string>& keys);
  ~KeyspaceFeed();
  KeyspaceFeed(const KeyspaceFeed&) = delete;
  KeyspaceFeed& operator=(const KeyspaceFeed&) = delete;

  // Asks for one read of `key` for `client` (served by the thread as soon as
  // it wakes; a request still waiting is replaced: only the newest holder matters).
  void request_read(int client, const std::string& key);
  // No more reads from now on; returns once a read in flight is done (before
  // the run's last server count, so every read it takes out was counted).
  void close_reads();
  // Stops the thread after its end marker came back (or a bound passed) and
  // hands over what it saw. Call once.
  FeedLog stop();

  // Commands one read costs on the server's INFO commandstats: EVAL and the
  // four calls its script makes (PTTL, TYPE, one value read, PUBLISH).
  static constexpr int kCommandsPerRead = 5;

 private:
  KeyspaceFeed(redis::Connection subscriber, redis::Connection reader, std::string channel, std::string node);
  void run();
  void serve_request();
  void read_messages();
  void take(const redis::Reply& message);
  bool wait_for_input(std::chrono::milliseconds bound);
  void go_blind(const std::string& why);

  redis::Connection subscriber_;
  redis::Connection reader_;
  std::string channel_;  // our marker channel
  int wake_fd_ = -1;     // eventfd: a read request or stop() wakes the thread from poll()
  std::mutex requests_mutex_;
  std::optional<std::pair<int, std::string>> request_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> reads_closed_{false};
  bool end_sent_ = false;
  std::chrono::steady_clock::time_point end_deadline_{};
  FeedLog log_;
  // Held by the thread whenever it is not inside poll(): a fork() of the
  // coordinator (a node restart) waits until the thread is outside its work.
  std::mutex work_mutex_;
  std::unique_ptr<QuietAtFork> quiet_;
  std::thread thread_;
};

}  // namespace locklab::harness
