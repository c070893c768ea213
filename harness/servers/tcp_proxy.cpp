#include "servers/tcp_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <list>
#include <string>
#include <vector>

#include "servers/proxy_link.h"

namespace locklab::harness {
namespace {

using Clock = ProxyClock;

// A flow that stops being drained (hold, a slow receiver) stops being read past
// this: the sender's kernel buffers then fill, as with a real stalled link.
constexpr std::size_t kMaxBufferedPerFlow = 64u << 20;
constexpr std::size_t kReadSize = 64u << 10;

std::array<bool, 2> selected(Direction direction) {
  return {direction != Direction::server_to_client, direction != Direction::client_to_server};
}

// Closing with SO_LINGER {on, 0} sends a TCP reset instead of a FIN.
void reset_and_close(int fd) {
  if (fd < 0) return;
  linger hard{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  ::close(fd);
}

void prepare(int fd) {
  int on = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);  // a delay is ours to add, not Nagle's
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

int connect_upstream(const redis::Endpoint& upstream) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(upstream.port));
  // Loopback only: a blocking connect there is answered at once (accepted or refused).
  if (::inet_pton(AF_INET, upstream.host.c_str(), &address.sin_addr) != 1 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  prepare(fd);
  return fd;
}

}  // namespace

struct TcpProxy::State {
  std::array<ProxyMode, 2> modes{};
  std::array<FlowCounters, 2> counters{};
  std::list<Link> links;
  bool cut = false;
  bool refusing = false;  // refuse(): reset a connection as a request arrives
  std::vector<Clock::time_point> refused_at;  // when each connection was refused a request (refused_connections())
  std::uint64_t idle_reset = 0;  // idle connections a cut reset (idle_connections_reset())
  bool reset_links = false;  // retarget(): reset the open connections once
  RequestParking parking;  // arm_watch() .. release_park() / drop_park()
  bool stopping = false;
  std::uint64_t requested = 0;  // changes asked for
  std::uint64_t seen = 0;       // changes the poll thread has acted on
};

Result<std::unique_ptr<TcpProxy>> TcpProxy::start(redis::Endpoint upstream) {
  const int listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd < 0) return Error{ErrorKind::io, std::string("proxy socket: ") + std::strerror(errno)};
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(listen_fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listen_fd, 64) != 0 ||
      ::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const std::string why = std::strerror(errno);
    ::close(listen_fd);
    return Error{ErrorKind::io, "proxy listen: " + why};
  }
  const int wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd < 0) {
    ::close(listen_fd);
    return Error{ErrorKind::io, std::string("proxy eventfd: ") + std::strerror(errno)};
  }
  redis::Endpoint endpoint{"127.0.0.1", ntohs(address.sin_port)};
  return std::unique_ptr<TcpProxy>(new TcpProxy(listen_fd, wake_fd, std::move(endpoint), std::move(upstream)));
}

TcpProxy::TcpProxy(int listen_fd, int wake_fd, redis::Endpoint endpoint, redis::Endpoint upstream)
    : listen_fd_(listen_fd),
      wake_fd_(wake_fd),
      endpoint_(std::move(endpoint)),
      upstream_(std::move(upstream)),
      state_(std::make_unique<State>()) {
  thread_ = std::thread([this] { run(); });
  quiet_at_fork_.wait_until_held();
}

TcpProxy::~TcpProxy() {
  {
    std::lock_guard lock(mutex_);
    state_->stopping = true;
  }
  wake();
  thread_.join();
  for (auto& link : state_->links) {
    reset_and_close(link.client);
    reset_and_close(link.server);
  }
  ::close(listen_fd_);
  ::close(wake_fd_);
}

void TcpProxy::wake() const {
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

template <class Change>
void TcpProxy::apply(Change&& change) {
  std::unique_lock lock(mutex_);
  change(*state_);
  const std::uint64_t ticket = ++state_->requested;
  wake();
  applied_.wait(lock, [&] { return state_->seen >= ticket; });
}

namespace {

void discard_queued(Flow& flow, FlowCounters& counters) {
  counters.dropped += flow.queued;
  counters.buffered -= flow.queued;
  flow.queue.clear();
  flow.queued = 0;
}

}  // namespace

void TcpProxy::set_mode(Direction direction, ProxyMode mode) {
  apply([&](State& state) {
    const auto chosen = selected(direction);
    for (std::size_t i = 0; i < 2; ++i) {
      if (!chosen[i]) continue;
      state.modes[i] = mode;
      for (auto& link : state.links) {
        link.own_modes[i].reset();
        // A blackhole: what was waiting in the proxy is lost too.
        if (mode.kind == ProxyMode::Kind::drop) discard_queued(link.flows[i], state.counters[i]);
      }
    }
  });
}

void TcpProxy::set_open_connections_mode(Direction direction, ProxyMode mode) {
  apply([&](State& state) {
    const auto chosen = selected(direction);
    for (std::size_t i = 0; i < 2; ++i) {
      if (!chosen[i]) continue;
      for (auto& link : state.links) {
        link.own_modes[i] = mode;
        if (mode.kind == ProxyMode::Kind::drop) discard_queued(link.flows[i], state.counters[i]);
      }
    }
  });
}

std::size_t TcpProxy::set_mode_where_sent(const std::vector<std::string>& names, Direction direction, ProxyMode mode) {
  const std::vector<std::string> wanted = LinkRequests::upper_case(names);
  std::size_t matched = 0;
  apply([&](State& state) {
    const auto chosen = selected(direction);
    for (auto& link : state.links) {
      if (!link.requests.sent_any(wanted)) continue;
      ++matched;
      for (std::size_t i = 0; i < 2; ++i) {
        if (!chosen[i]) continue;
        link.own_modes[i] = mode;
        if (mode.kind == ProxyMode::Kind::drop) discard_queued(link.flows[i], state.counters[i]);
      }
    }
  });
  return matched;
}

void TcpProxy::discard_buffered(Direction direction) {
  apply([&](State& state) {
    const auto chosen = selected(direction);
    for (std::size_t i = 0; i < 2; ++i) {
      if (!chosen[i]) continue;
      for (auto& link : state.links) discard_queued(link.flows[i], state.counters[i]);
    }
  });
}

void TcpProxy::cut() {
  apply([](State& state) { state.cut = true; });
}

void TcpProxy::refuse() {
  apply([](State& state) { state.refusing = true; });
}

void TcpProxy::heal() {
  apply([](State& state) {
    state.cut = false;
    state.refusing = false;
  });
}

redis::Endpoint TcpProxy::upstream() const {
  std::lock_guard lock(mutex_);
  return upstream_;
}

void TcpProxy::retarget(redis::Endpoint upstream, bool reset_existing) {
  apply([&](State& state) {
    upstream_ = std::move(upstream);
    if (reset_existing) state.reset_links = true;
  });
}

bool TcpProxy::is_cut() const {
  std::lock_guard lock(mutex_);
  return state_->cut;
}

FlowCounters TcpProxy::counters(Direction direction) const {
  std::lock_guard lock(mutex_);
  const auto chosen = selected(direction);
  FlowCounters sum;
  for (std::size_t i = 0; i < 2; ++i) {
    if (!chosen[i]) continue;
    const auto& one = state_->counters[i];
    sum.received += one.received;
    sum.forwarded += one.forwarded;
    sum.dropped += one.dropped;
    sum.buffered += one.buffered;
  }
  return sum;
}

std::size_t TcpProxy::open_connections() const {
  std::lock_guard lock(mutex_);
  return state_->links.size();
}

std::uint64_t TcpProxy::refused_connections() const {
  std::lock_guard lock(mutex_);
  return state_->refused_at.size();
}

std::uint64_t TcpProxy::refused_connections_until(std::chrono::steady_clock::time_point until) const {
  std::lock_guard lock(mutex_);
  const auto& times = state_->refused_at;  // in time order: appended by the poll thread
  return static_cast<std::uint64_t>(std::upper_bound(times.begin(), times.end(), until) - times.begin());
}

std::uint64_t TcpProxy::idle_connections_reset() const {
  std::lock_guard lock(mutex_);
  return state_->idle_reset;
}

namespace {

// Read what `flow.from` has into `bytes` (left empty at EOF or when there
// was nothing). Returns false when the socket failed (the link must be reset).
bool receive(Flow& flow, std::string& bytes) {
  bytes.assign(kReadSize, '\0');
  const ssize_t n = ::recv(flow.from, bytes.data(), bytes.size(), 0);
  bytes.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  if (n == 0) flow.eof = true;
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  return true;
}

// Queue what was read, or discard it in drop mode.
void take(Flow& flow, std::string bytes, const ProxyMode& mode, FlowCounters& counters, Clock::time_point now) {
  const std::size_t size = bytes.size();
  const std::uint64_t at = flow.read;
  flow.read += size;
  counters.received += size;
  if (mode.kind == ProxyMode::Kind::drop) {
    counters.dropped += size;
    return;
  }
  const auto due = mode.kind == ProxyMode::Kind::delay ? now + mode.delay : now;
  flow.queue.push_back(Chunk{std::move(bytes), 0, due, at});
  flow.queued += size;
  counters.buffered += size;
}

// Nothing in the queue may go before `limit` moves (a parked or incomplete request).
bool blocked(const Flow& flow, std::uint64_t limit) { return !flow.queue.empty() && front_offset(flow) >= limit; }

// Write every chunk that is due, in order, up to stream offset `limit`.
// Returns false when the socket failed.
bool write_due(Flow& flow, const ProxyMode& mode, FlowCounters& counters, Clock::time_point now, std::uint64_t limit) {
  flow.want_write = false;
  if (mode.kind == ProxyMode::Kind::hold) return true;
  while (!flow.queue.empty() && flow.queue.front().due <= now && !blocked(flow, limit)) {
    Chunk& chunk = flow.queue.front();
    const std::size_t allowed = static_cast<std::size_t>(
        std::min<std::uint64_t>(chunk.bytes.size() - chunk.offset, limit - front_offset(flow)));
    const ssize_t n = ::send(flow.to, chunk.bytes.data() + chunk.offset, allowed, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        flow.want_write = true;
        return true;
      }
      return errno == EINTR;
    }
    const auto size = static_cast<std::size_t>(n);
    chunk.offset += size;
    flow.queued -= size;
    counters.forwarded += size;
    counters.buffered -= size;
    if (chunk.offset == chunk.bytes.size()) flow.queue.pop_front();
  }
  if (flow.eof && flow.queue.empty() && !flow.shut) {
    ::shutdown(flow.to, SHUT_WR);  // pass the FIN on once everything before it is delivered
    flow.shut = true;
  }
  return true;
}

bool wants_read(const Flow& flow) { return !flow.eof && !flow.closing && flow.queued < kMaxBufferedPerFlow; }

// Whether a link a cut resets had request bytes on their way to the server:
// queued here, or already in the client's socket, not yet read (the client
// wrote just before the cut landed).
bool carries_request(const Flow& up, int client) {
  int unread = 0;
  return up.queued > 0 || (::ioctl(client, FIONREAD, &unread) == 0 && unread > 0);
}

}  // namespace

struct TcpProxy::PollSet {
  std::vector<pollfd> fds;    // [0] the wake fd, [1] the listener, then two per polled link
  std::vector<Link*> polled;  // polled[i] owns fds[2 + 2*i] (client) and fds[3 + 2*i] (server)
  int timeout_ms = -1;        // until the next delayed chunk falls due; -1: none
};

const ProxyMode& TcpProxy::mode_of(const Link& link, std::size_t flow) const {
  return link.own_modes[flow] ? *link.own_modes[flow] : state_->modes[flow];
}

void TcpProxy::drop_link(Link& link, bool reset) {
  for (std::size_t i = 0; i < 2; ++i) {
    state_->counters[i].dropped += link.flows[i].queued;
    state_->counters[i].buffered -= link.flows[i].queued;
  }
  if (reset) {
    reset_and_close(link.client);
    reset_and_close(link.server);
  } else {
    ::close(link.client);
    ::close(link.server);
  }
}

// Act on the requested changes, deliver what is due, close the links that are
// done, then tell the callers waiting in apply().
void TcpProxy::act_on_changes(std::chrono::steady_clock::time_point now) {
  State& state = *state_;
  if (state.cut || state.reset_links) {
    for (auto& link : state.links) {
      if (state.cut && carries_request(link.flows[kClientToServer], link.client)) state.refused_at.push_back(now);
      else if (state.cut) ++state.idle_reset;
      drop_link(link, true);
    }
    state.links.clear();
    state.reset_links = false;
  }
  if (state.refusing) refuse_requests();
  state.parking.hold_for_group(state.links);
  for (auto& link : state.links) {
    if (link.broken) continue;  // reset below: nothing more of it goes on
    for (std::size_t i = 0; i < 2; ++i)
      if (!write_due(link.flows[i], mode_of(link, i), state.counters[i], now, state.parking.send_limit(link, i))) link.broken = true;
    if (link.flows[kClientToServer].closing && link.flows[kClientToServer].queue.empty()) link.broken = true;
  }
  for (auto it = state.links.begin(); it != state.links.end();) {
    const bool finished = it->flows[0].shut && it->flows[1].shut;
    if (it->broken || finished) {
      drop_link(*it, it->broken);
      it = state.links.erase(it);
    } else {
      ++it;
    }
  }
  state.seen = state.requested;
  applied_.notify_all();
}

// refuse(): every link whose client has a request on its way is marked to be
// reset before any of it is forwarded.
void TcpProxy::refuse_requests() {
  for (auto& link : state_->links) {
    if (link.broken || !carries_request(link.flows[kClientToServer], link.client)) continue;
    link.broken = true;
    state_->refused_at.push_back(Clock::now());
  }
}

// What to wait for, and until when (the next delayed chunk that falls due).
void TcpProxy::build_poll_set(PollSet& set, std::chrono::steady_clock::time_point now) {
  set.fds.assign({pollfd{wake_fd_, POLLIN, 0}, pollfd{listen_fd_, POLLIN, 0}});
  set.polled.clear();
  set.timeout_ms = -1;
  for (auto& link : state_->links) {
    short client_events = 0, server_events = 0;
    const Flow& up = link.flows[kClientToServer];
    const Flow& down = link.flows[kServerToClient];
    if (wants_read(up)) client_events |= POLLIN;
    if (wants_read(down)) server_events |= POLLIN;
    if (up.want_write) server_events |= POLLOUT;
    if (down.want_write) client_events |= POLLOUT;
    set.fds.push_back(pollfd{client_events ? link.client : -1, client_events, 0});
    set.fds.push_back(pollfd{server_events ? link.server : -1, server_events, 0});
    set.polled.push_back(&link);
    for (std::size_t i = 0; i < 2; ++i) {
      const Flow& flow = link.flows[i];
      if (flow.queue.empty() || flow.want_write || mode_of(link, i).kind == ProxyMode::Kind::hold ||
          blocked(flow, state_->parking.send_limit(link, i)))
        continue;
      const auto wait = std::chrono::ceil<std::chrono::milliseconds>(flow.queue.front().due - now).count();
      const int bounded = static_cast<int>(std::max<long long>(0, wait));
      set.timeout_ms = set.timeout_ms < 0 ? bounded : std::min(set.timeout_ms, bounded);
    }
  }
}

// One direction of one link after poll(): read what its sender has, if it
// may, let the watch see a client's requests, and queue them.
void TcpProxy::pump(Link& link, std::size_t flow, short revents, std::chrono::steady_clock::time_point now) {
  if (!(revents & (POLLIN | POLLHUP | POLLERR)) || !wants_read(link.flows[flow])) return;
  std::string bytes;
  if (!receive(link.flows[flow], bytes)) {
    link.broken = true;
    return;
  }
  if (bytes.empty()) return;
  const ProxyMode& mode = mode_of(link, flow);
  if (flow == kClientToServer) state_->parking.watch(link, bytes, mode.kind == ProxyMode::Kind::drop, now);
  take(link.flows[flow], std::move(bytes), mode, state_->counters[flow], now);
}

// Every connection waiting on the listener becomes a link to the upstream.
void TcpProxy::accept_links() {
  for (;;) {
    const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) break;
    const bool refused = state_->cut || state_->refusing;
    const int server = refused ? -1 : connect_upstream(upstream_);
    if (server < 0) {  // cut, refusing, or the upstream is down: the client sees a reset
      if (refused) state_->refused_at.push_back(Clock::now());
      reset_and_close(client);
      continue;
    }
    prepare(client);
    Link link;
    link.client = client;
    link.server = server;
    link.flows[kClientToServer].from = client;
    link.flows[kClientToServer].to = server;
    link.flows[kServerToClient].from = server;
    link.flows[kServerToClient].to = client;
    state_->parking.accept(link);
    state_->links.push_back(std::move(link));
  }
}

// --- the protocol watch: servers/request_parking.h decides, the poll thread fences ---

std::shared_ptr<ParkGroup> TcpProxy::arm_watch(RespPattern pattern, std::shared_ptr<ParkGroup> group,
                                               std::size_t member) {
  if (!group) group = std::make_shared<ParkGroup>();
  auto shared = std::make_shared<const RespPattern>(std::move(pattern));
  apply([&](State& state) { state.parking.arm(shared, group, member, state.links); });
  return group;
}

void TcpProxy::release_park() {
  apply([](State& state) { state.parking.release(state.links); });
}

void TcpProxy::drop_park() {
  apply([](State& state) { state.parking.drop(state.links, state.counters[kClientToServer]); });
}

void TcpProxy::run() {
  std::unique_lock lock(mutex_);
  quiet_at_fork_.holding();
  PollSet set;
  while (!state_->stopping) {
    const auto now = Clock::now();
    act_on_changes(now);
    build_poll_set(set, now);

    lock.unlock();
    ::poll(set.fds.data(), set.fds.size(), set.timeout_ms);
    lock.lock();
    if (state_->stopping) break;
    const auto after = Clock::now();

    if (set.fds[0].revents & POLLIN) {
      std::uint64_t count = 0;
      (void)!::read(wake_fd_, &count, sizeof count);
    }
    for (std::size_t i = 0; i < set.polled.size(); ++i) {
      pump(*set.polled[i], kClientToServer, set.fds[2 + 2 * i].revents, after);
      pump(*set.polled[i], kServerToClient, set.fds[3 + 2 * i].revents, after);
    }
    if (set.fds[1].revents & POLLIN) accept_links();
  }
}

}  // namespace locklab::harness
