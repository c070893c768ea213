// A user-space TCP proxy for network faults on loopback (the kernel here has no
// netem). It listens on a free 127.0.0.1 port and forwards every connection to
// one upstream host:port; a nemesis changes what happens to the bytes while
// the connections stay open:
//
//   pass         forward at once
//   delay(ms)    forward each byte `ms` after it was read; order is kept
//   hold         stop forwarding; bytes read pile up in the proxy (counted as
//                buffered). Leaving hold delivers them (or discard_buffered()
//                throws them away first: "the replica never got it")
//   drop         read and discard (and discard what was buffered): with the
//                server->client direction this is the indeterminate case, the
//                request is applied but the reply never arrives
//   cut          reset every connection (SO_LINGER 0 close on both sides) and
//                reset every new one until heal()
//
// pass/delay/hold/drop are per direction; cut is for the whole link (a TCP
// reset ends both directions). set_open_connections_mode() gives only the
// connections open now a mode of their own (a cluster master whose one open
// connection is its replica's replication link: hold that, pass every client
// that connects later). The "client" is whoever connects to the proxy
// (for replication: the replica), the "server" the upstream (the master).
//
// Protocol step points (servers/resp_watch.h): arm_watch() parks the next
// command that completes a pattern, and holds it until release_park() or
// drop_park(); servers/request_parking.h says how.
//
// Every mode change takes effect before the call returns: after hold() no
// further byte is forwarded in that direction (bytes already handed to the
// kernel are beyond reach), after cut() every connection has been reset.
// One thread runs poll() over all sockets; the destructor stops it and closes
// every socket, so no proxy outlives its owner.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "redis/connection.h"
#include "redis/result.h"

#include "servers/resp_watch.h"
#include "support/fork_quiet.h"

namespace locklab::harness {

struct ProxyLink;  // one connection (servers/proxy_link.h, private to servers/)

enum class Direction { client_to_server, server_to_client, both };

struct ProxyMode {
  enum class Kind { pass, delay, hold, drop };
  Kind kind = Kind::pass;
  std::chrono::milliseconds delay{0};  // Kind::delay only

  static ProxyMode pass() { return {}; }
  static ProxyMode delayed(std::chrono::milliseconds by) { return {Kind::delay, by}; }
  static ProxyMode hold() { return {Kind::hold, {}}; }
  static ProxyMode drop() { return {Kind::drop, {}}; }
};

// Cumulative over every connection, for one direction (Direction::both = the sum).
struct FlowCounters {
  std::uint64_t received = 0;   // read from the sending side
  std::uint64_t forwarded = 0;  // written to the receiving side
  std::uint64_t dropped = 0;    // discarded: drop mode, discard_buffered(), a reset link
  std::uint64_t buffered = 0;   // in the proxy now (held, delayed, or waiting for the receiver)
};

class TcpProxy {
 public:
  static Result<std::unique_ptr<TcpProxy>> start(redis::Endpoint upstream);

  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;
  ~TcpProxy();

  // Where clients connect instead of the upstream.
  const redis::Endpoint& endpoint() const { return endpoint_; }
  redis::Endpoint upstream() const;

  // New connections go to `upstream` from now on (a failover redirecting
  // clients to the promoted replica). With reset_existing, every open
  // connection is reset too, so no client keeps talking to the old upstream.
  void retarget(redis::Endpoint upstream, bool reset_existing = true);

  // Every connection, open now or later (overrides set_open_connections_mode()).
  void set_mode(Direction direction, ProxyMode mode);
  // Only the connections open now; later ones take the proxy-wide mode.
  void set_open_connections_mode(Direction direction, ProxyMode mode);
  // Only the open connections whose client has sent a command named one of
  // `names` (case-insensitive; every connection's requests are read, armed or
  // not): a cluster master's replication link is the one that sent REPLCONF or
  // PSYNC, beside the pooled client connections its announced port also
  // carries. Returns how many connections took the mode.
  std::size_t set_mode_where_sent(const std::vector<std::string>& names, Direction direction, ProxyMode mode);
  void pass(Direction direction = Direction::both) { set_mode(direction, ProxyMode::pass()); }
  void delay(std::chrono::milliseconds by, Direction direction = Direction::both) {
    set_mode(direction, ProxyMode::delayed(by));
  }
  void hold(Direction direction = Direction::both) { set_mode(direction, ProxyMode::hold()); }
  void drop(Direction direction = Direction::both) { set_mode(direction, ProxyMode::drop()); }
  // Throw away the bytes buffered in that direction (held or delayed); the mode stays.
  void discard_buffered(Direction direction = Direction::both);

  void cut();   // reset every connection, and every new one until heal()
  // A server that refuses requests: until heal(), reset each connection as a
  // request of its client reaches the proxy (before any of it is forwarded),
  // and every new one. An idle connection stays open, so each reset is a
  // request refused, not a pooled connection caught idle.
  void refuse();
  void heal();  // accept and forward again (the per-direction modes are kept)
  bool is_cut() const;

  // Park the next command that completes `pattern` on any connection, open now
  // or later; once per arming. `group` (null: a group of this proxy alone) ties
  // the links of one client together, `member` is this proxy's number in it.
  // Returns the group: its arrival() says who parked what, and when.
  std::shared_ptr<ParkGroup> arm_watch(RespPattern pattern, std::shared_ptr<ParkGroup> group = nullptr,
                                       std::size_t member = 0);
  // The held bytes go on, in order, and the watch is disarmed (also without a park).
  void release_park();
  // The held bytes are discarded and each connection that held some is reset
  // once the bytes before them are delivered; the watch is disarmed. When the
  // group parked, every connection of this proxy holds from then on (as
  // hold_for_group() would have fenced it), even one whose poll thread has not
  // looked since: it is reset too, and nothing it had not forwarded goes on.
  void drop_park();

  FlowCounters counters(Direction direction) const;
  std::size_t open_connections() const;
  // Connections a cut or refuse() refused a request: every new one reset
  // meanwhile (a client that reconnects to send its request), those open when
  // cut() reset them that had request bytes on their way (queued here, or
  // unread in the client's socket as the cut landed), and those refuse()
  // reset as a request arrived. The `unavailable` fault counts them: a refusal
  // the client may never report.
  std::uint64_t refused_connections() const;
  // Those of them refused at `until` or before (steady_clock): a fault that
  // watches one request counts no refusal of the client's next one.
  std::uint64_t refused_connections_until(std::chrono::steady_clock::time_point until) const;
  // Connections open and idle when a cut reset them (nothing on its way to
  // the server): a pooled connection's reset says nothing of a request.
  std::uint64_t idle_connections_reset() const;

 private:
  using Link = ProxyLink;
  struct State;

  TcpProxy(int listen_fd, int wake_fd, redis::Endpoint endpoint, redis::Endpoint upstream);
  // Change the state under the lock, wake the poll thread, and wait until it
  // has acted on the change (so the caller's next step sees it in effect).
  template <class Change>
  void apply(Change&& change);
  void wake() const;

  // The poll thread: run() loops over these, each called with mutex_ held.
  struct PollSet;
  void run();
  void act_on_changes(std::chrono::steady_clock::time_point now);
  void build_poll_set(PollSet& set, std::chrono::steady_clock::time_point now);
  void pump(Link& link, std::size_t flow, short revents, std::chrono::steady_clock::time_point now);
  void accept_links();
  const ProxyMode& mode_of(const Link& link, std::size_t flow) const;
  void drop_link(Link& link, bool reset);
  void refuse_requests();

  int listen_fd_;
  int wake_fd_;  // eventfd: a mode change or the destructor interrupts poll()
  redis::Endpoint endpoint_;
  redis::Endpoint upstream_;
  std::unique_ptr<State> state_;
  mutable std::mutex mutex_;
  // The poll thread holds mutex_ except around poll(): a client forked from
  // this process must not copy it mid-allocation (support/fork_quiet.h).
  QuietAtFork quiet_at_fork_{mutex_};
  std::condition_variable applied_;
  std::thread thread_;
};

}  // namespace locklab::harness
