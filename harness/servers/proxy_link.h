// Private to servers/: one proxied connection as tcp_proxy.cpp forwards it and
// request_parking.cpp fences it. Both include this file; nothing else does.
// Every field is read and written with the proxy's mutex held.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "servers/request_parking.h"
#include "servers/tcp_proxy.h"

namespace locklab::harness {

using ProxyClock = std::chrono::steady_clock;

enum FlowIndex : std::size_t { kClientToServer = 0, kServerToClient = 1 };

// A send limit that does not limit (the reply direction, an unarmed proxy).
constexpr std::uint64_t kNoLimit = ~std::uint64_t{0};

struct Chunk {
  std::string bytes;
  std::size_t offset = 0;  // how much of it was written
  ProxyClock::time_point due;
  std::uint64_t at = 0;    // the stream offset of bytes[0] (what the sender sent before it)
};

// One direction of one connection: bytes read from `from`, queued, written to `to`.
struct Flow {
  int from = -1;
  int to = -1;
  std::deque<Chunk> queue;
  std::size_t queued = 0;
  std::uint64_t read = 0;  // bytes read from `from` so far: the stream offset of the next one
  bool eof = false;        // `from` sent FIN
  bool shut = false;       // FIN passed on to `to`
  bool want_write = false;  // `to` said EAGAIN: poll it for POLLOUT
  bool closing = false;     // drop_park(): read no more; the link is reset once the queue is out
};

struct ProxyLink {
  int client = -1;
  int server = -1;
  std::array<Flow, 2> flows;
  std::array<std::optional<ProxyMode>, 2> own_modes;  // set_open_connections_mode(); else the proxy-wide mode
  bool broken = false;
  LinkRequests requests;  // the protocol watch of the client's requests (request_parking.h)
};

// The stream offset of the first byte still waiting in the proxy (or of the next one to come).
inline std::uint64_t front_offset(const Flow& flow) {
  if (flow.queue.empty()) return flow.read;
  return flow.queue.front().at + flow.queue.front().offset;
}

}  // namespace locklab::harness
