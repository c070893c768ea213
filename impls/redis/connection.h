// A move-only RAII connection over hiredis 0.14's blocking context.
//
// hiredis rule (README, "Using replies"): after any error the context is dead.
// Connection therefore marks itself broken and every later call fails fast with
// the original error; callers replace a broken Connection instead of reusing it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "redis/reply.h"
#include "redis/result.h"

struct redisContext;

namespace locklab::redis {

struct Endpoint {
  std::string host = "127.0.0.1";
  int port = 6379;

  std::string to_string() const;
  // "host:port" or ":port" or "port"; nullopt when malformed.
  static std::optional<Endpoint> parse(std::string_view text);
};

struct ConnectionOptions {
  Endpoint endpoint;
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds command_timeout{2000};  // 0 = wait forever
  std::string user;      // empty = AUTH <password> (legacy form)
  std::string password;  // empty = no AUTH
  // `endpoint` is one node of a Redis Cluster: redis::Link then routes every
  // command and script by its first key (redis/cluster_routing.h). Connection itself
  // ignores it (it talks to `endpoint`, as always).
  bool cluster = false;
  // false: this connection is the harness's, not the lock's (the oracle Redis):
  // its requests and replies stay out of traffic() and the TrafficObserver, so
  // a lock's cost figures are the same with and without an oracle.
  bool counted = true;
};

// Process-wide traffic counters: the harness divides them by acquisitions to get
// "round trips per acquisition" and "commands per acquisition" client-side.
//
// A round trip is one wait for replies: a pipeline is one, and so is a fan-out
// to N servers (FanOut waits once for all of them: it costs one round trip of
// latency, while `commands` counts its N requests). `exchanges` counts
// request batches per server (a fan-out to N is N): what the servers see.
struct Traffic {
  std::uint64_t commands = 0;     // requests written to any server
  std::uint64_t round_trips = 0;  // waits for replies (a pipeline is one, a fan-out to N is one)
  std::uint64_t exchanges = 0;    // request batches answered, per server (a fan-out to N is N)
};
Traffic traffic();

// While one is alive on this thread, every reply wait counts together as ONE
// round trip (the first wait counts, the rest only as exchanges): FanOut::run
// holds one for its round. Scopes do not nest meaningfully; the outer one wins.
class OneRoundTrip {
 public:
  OneRoundTrip();
  ~OneRoundTrip();
  OneRoundTrip(const OneRoundTrip&) = delete;
  OneRoundTrip& operator=(const OneRoundTrip&) = delete;
};

using Args = std::vector<std::string>;

// Sees every request written and every reply read, process-wide: the scenario
// narrator prints "who sent which command, and what Redis answered" from it.
// Called on the thread that talks to the server. Unset, it costs one atomic
// load per request; set it before the traffic it should see.
class TrafficObserver {
 public:
  virtual ~TrafficObserver() = default;
  virtual void sent(const Endpoint& to, const Args& request) = 0;
  // Exactly one of reply / error is set (error: the read failed, e.g. timed out).
  virtual void received(const Endpoint& from, const Reply* reply, const Error* error) = 0;
};
void set_traffic_observer(TrafficObserver* observer);  // nullptr: none

class Connection {
 public:
  // Errors from connecting never have outcome_unknown(): nothing was sent but AUTH.
  static Result<Connection> connect(const ConnectionOptions& options);

  Connection(Connection&&) noexcept;
  Connection& operator=(Connection&&) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // Failures carry Error::request_sent: true once (part of) the request was
  // written, so outcome_unknown() answers "maybe applied" for a timeout, a
  // close AND a reset (ECONNRESET) after the send; a failure to connect or to
  // write the first byte is a plain error (not applied).
  //
  // One command, one round trip.
  Result<Reply> command(const Args& args);

  // Pipelining: queue many, then flush and read them in order (one round trip).
  void append(const Args& args);
  Result<std::vector<Reply>> read_pending();

  // For fan-out across several connections and for pub/sub: send() queues and
  // flushes without reading; read_until() reads one reply (or, with nothing
  // pending, one pushed pub/sub message) by a deadline. It poll()s the fd rather
  // than relying on the socket timeout. Past the deadline it returns
  // ErrorKind::timeout and the connection is broken (a late reply would desync it);
  // a reply that is already in the socket at the deadline is still read.
  Status send(const Args& args);
  Result<Reply> read_until(std::chrono::steady_clock::time_point deadline);

  // True when hiredis already holds unread reply bytes that poll() on fd() will
  // not report again (pub/sub readers: drain these before polling).
  bool buffered() const;

  bool broken() const { return broken_.has_value(); }
  const ConnectionOptions& options() const { return options_; }
  int fd() const;

 private:
  struct ContextDeleter {
    void operator()(redisContext* context) const;
  };
  using ContextPtr = std::unique_ptr<redisContext, ContextDeleter>;

  Connection(ContextPtr context, ConnectionOptions options);
  static Result<Connection> open(const ConnectionOptions& options);
  Error fail_from_context(bool request_sent);
  Error fail_fast() const;
  Result<Reply> read_one();
  Result<Reply> read_by(std::chrono::steady_clock::time_point deadline);
  Status flush();

  ContextPtr context_;
  ConnectionOptions options_;
  std::optional<Error> broken_;
  std::size_t pending_ = 0;
};

}  // namespace locklab::redis
