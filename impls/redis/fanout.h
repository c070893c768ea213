// One request to several servers at once, one deadline for every reply
// (Redlock's round: write to all N, poll all N fds, collect).
//
// Why not node after node: a sequential client pays one socket timeout per slow
// server. And why not read_until() on each connection in turn after sending to
// all: it would still wait for a slow server first while the replies of the
// others sit unread. FanOut polls every fd together until one shared deadline.
//
// Each slot of a round says what is known about its request:
//   a Reply                  answered (never an error reply: see below)
//   ErrorKind::reply         the server refused it with an error reply: not applied
//   !outcome_unknown()       failed before the request left (cannot connect, send failed)
//   outcome_unknown()        sent, and no reply came (deadline passed, connection closed):
//                            it may have been applied
//
// A reused connection that the server closed while it was idle (the server
// died or restarted between rounds) is replaced before the send: the server
// then fails before the send, a known outcome, instead of after it.
//
// Cost, in redis::traffic(): one command (and one exchange) per server the
// request was sent to, and ONE round trip for the whole round, however many
// servers: the client waits once (docs/harness.md).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "redis/connection.h"

namespace locklab::redis {

// Not thread-safe: one FanOut per lock object, like a Connection.
class FanOut {
 public:
  explicit FanOut(std::vector<ConnectionOptions> servers);

  using Replies = std::vector<Result<Reply>>;

  // `command` to every server, then every reply collected within `timeout` of
  // the send. One slot per server, in server order. A server whose connection
  // broke or was closed is reconnected first (within its connect_timeout).
  Replies run(const Args& command, std::chrono::milliseconds timeout);

  // Connects every server that has no live connection.
  struct Reachable {
    std::size_t connected = 0;
    std::string first_error;  // empty when every server is connected
  };
  Reachable connect_all();

  std::size_t size() const { return servers_.size(); }
  std::string name(std::size_t server) const { return servers_.at(server).endpoint.to_string(); }

 private:
  Result<Connection*> live(std::size_t server);

  std::vector<ConnectionOptions> servers_;
  std::vector<std::optional<Connection>> connections_;
};

// Every server limited to `timeout` per request, connecting included: a dead
// server must cost a round at most that (a connect would otherwise wait its own
// connect_timeout first). A zero `timeout` still allows 1 ms to connect.
std::vector<ConnectionOptions> within(std::vector<ConnectionOptions> servers, std::chrono::milliseconds timeout);

// A round's integer replies counted by value (scripts that answer 1 / 0 / -1);
// any other slot (no reply, an error, another type) counts as unanswered.
struct IntegerCounts {
  std::map<long long, std::size_t> by_value;
  std::size_t unanswered = 0;
  std::string first_unanswered;  // what the first of those was, for an error line

  std::size_t of(long long value) const;
};
IntegerCounts count_integers(const FanOut::Replies& replies);

}  // namespace locklab::redis
