// Protocol step points in the fault proxy (servers/resp_watch.h): reading each
// connection's requests and parking the next command that completes a pattern.
// servers/tcp_proxy.h forwards the bytes; this decides how far a client's
// requests may go.
//
// TcpProxy::arm_watch() reads the requests of every connection and parks the
// next command that completes a pattern: the bytes before it go on, the command
// and everything after it on that connection stay in the proxy. release_park()
// lets them go on, in order; drop_park() discards them and resets the
// connection, so the command never reaches the server. While armed, a request
// is forwarded only once it is whole and did not match (a command split across
// reads waits for its last byte). Several proxies armed with one ParkGroup (one
// client's links) park together: from the first match on, every one of them
// holds what it has.
//
// A park is a fence: a stream offset in the client's requests that no byte at
// or after it passes. The proxy asks send_limit() before each write. Every
// call here is made with the proxy's mutex held (the poll thread, or apply()).
#pragma once

#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "servers/resp_watch.h"

namespace locklab::harness {

struct FlowCounters;
struct ProxyLink;  // servers/proxy_link.h

// What the watch keeps of one connection's requests.
struct LinkRequests {
  RespReader reader;                    // from the connection's first byte, armed or not
  std::optional<RespMatcher> matcher;   // while armed
  std::optional<std::uint64_t> fence;   // parked: no request byte from this stream offset on is forwarded
  std::vector<std::string> names_sent;  // the distinct command names its client sent, upper case

  // Whether its client sent a command named one of `upper_names` (see upper_case()).
  bool sent_any(const std::vector<std::string>& upper_names) const;
  // {"replconf", "psync"} -> {"REPLCONF", "PSYNC"}: how names_sent spells them.
  static std::vector<std::string> upper_case(const std::vector<std::string>& names);
};

class RequestParking {
 public:
  using Clock = std::chrono::steady_clock;

  // arm_watch(): every link, open now or accepted later, matches `pattern`.
  void arm(std::shared_ptr<const RespPattern> pattern, std::shared_ptr<ParkGroup> group, std::size_t member,
           std::list<ProxyLink>& links);
  // release_park(): disarm; the fenced bytes go on, in order.
  void release(std::list<ProxyLink>& links);
  // drop_park(): disarm; the fenced bytes are discarded (counted in `up`) and
  // each fenced link is marked to be reset once what came before is delivered.
  void drop(std::list<ProxyLink>& links, FlowCounters& up);

  // A link just accepted: it matches too while armed.
  void accept(ProxyLink& link) const;
  // A read of the client's requests: remember its names, and park the first
  // command that completes the pattern (a dropped read reaches no server).
  void watch(ProxyLink& link, std::string_view bytes, bool dropped, Clock::time_point now);
  // Once any link of the group parked, fence every link of this proxy.
  void hold_for_group(std::list<ProxyLink>& links) const;
  // How far flow `flow` of `link` may be forwarded (kNoLimit: no bound).
  std::uint64_t send_limit(const ProxyLink& link, std::size_t flow) const;

 private:
  struct Watch {
    std::shared_ptr<const RespPattern> pattern;
    std::shared_ptr<ParkGroup> group;
    std::size_t member = 0;
  };
  void park(ProxyLink& link, const RespCommand& command, Clock::time_point now) const;

  std::optional<Watch> watch_;         // arm() .. release() / drop()
  std::vector<RespCommand> completed_;  // scratch: the requests one read completed
};

}  // namespace locklab::harness
