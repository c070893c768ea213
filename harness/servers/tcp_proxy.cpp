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
#include <cctype>
#include <cerrno>
#include <cstring>
#include <deque>
#include <list>
#include <optional>
#include <string>
#include <vector>

namespace locklab::harness {
namespace {

using Clock = std::chrono::steady_clock;

// A flow that stops being drained (hold, a slow receiver) stops being read past
// this: the sender's kernel buffers then fill, as with a real stalled link.
constexpr std::size_t kMaxBufferedPerFlow = 64u << 20;
constexpr std::size_t kReadSize = 64u << 10;

enum FlowIndex : std::size_t { kClientToServer = 0, kServerToClient = 1 };

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

constexpr std::uint64_t kNoLimit = ~std::uint64_t{0};

struct Chunk {
  std::string bytes;
  std::size_t offset = 0;  // how much of it was written
  Clock::time_point due;
  std::uint64_t at = 0;    // the stream offset of bytes[0] (what the sender sent before it)
};

}  // namespace

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

struct TcpProxy::Link {
  int client = -1;
  int server = -1;
  std::array<Flow, 2> flows;
  std::array<std::optional<ProxyMode>, 2> own_modes;  // set_open_connections_mode(); else the proxy-wide mode
  bool broken = false;
  // The protocol watch of the client's requests (resp_watch.h).
  RespReader reader;                    // from the connection's first byte, armed or not
  std::optional<RespMatcher> matcher;   // while armed
  std::optional<std::uint64_t> fence;   // parked: no request byte from this stream offset on is forwarded
  std::vector<std::string> names_sent;  // the distinct command names its client sent, upper case (set_mode_where_sent)
};

struct TcpProxy::Watch {
  std::shared_ptr<const RespPattern> pattern;
  std::shared_ptr<ParkGroup> group;
  std::size_t member = 0;
};

struct TcpProxy::State {
  std::array<ProxyMode, 2> modes{};
  std::array<FlowCounters, 2> counters{};
  std::list<Link> links;
  bool cut = false;
  bool refusing = false;  // refuse(): reset a connection as a request arrives
  std::vector<Clock::time_point> refused_at;  // when each connection was refused a request (refused_connections())
  std::uint64_t idle_reset = 0;  // idle connections a cut reset (idle_connections_reset())
  bool reset_links = false;  // retarget(): reset the open connections once
  std::optional<Watch> watch;  // arm_watch() .. release_park() / drop_park()
  std::vector<RespCommand> completed;  // scratch: the requests one read completed
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

std::string upper_case(std::string_view text) {
  std::string upper(text);
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper;
}

// A connection's distinct command names, kept for set_mode_where_sent(); a
// client speaks a few dozen at most, the cap only guards against a flood.
void remember_names(std::vector<std::string>& names, const std::vector<RespCommand>& commands) {
  constexpr std::size_t kMaxNames = 64;
  for (const RespCommand& command : commands) {
    std::string name = upper_case(command.name());
    if (names.size() < kMaxNames && std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(std::move(name));
  }
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
  std::vector<std::string> wanted;
  for (const auto& name : names) wanted.push_back(upper_case(name));
  std::size_t matched = 0;
  apply([&](State& state) {
    const auto chosen = selected(direction);
    for (auto& link : state.links) {
      const bool sent = std::any_of(wanted.begin(), wanted.end(), [&](const std::string& name) {
        return std::find(link.names_sent.begin(), link.names_sent.end(), name) != link.names_sent.end();
      });
      if (!sent) continue;
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

// The stream offset of the first byte still waiting in the proxy (or of the next one to come).
std::uint64_t front_offset(const Flow& flow) {
  if (flow.queue.empty()) return flow.read;
  return flow.queue.front().at + flow.queue.front().offset;
}

// Nothing in the queue may go before `limit` moves (a parked or incomplete request).
bool blocked(const Flow& flow, std::uint64_t limit) { return !flow.queue.empty() && front_offset(flow) >= limit; }

// Throw away every queued byte at stream offset `from` or later.
void discard_from(Flow& flow, std::uint64_t from, FlowCounters& counters) {
  while (!flow.queue.empty()) {
    Chunk& last = flow.queue.back();
    const std::uint64_t start = std::max<std::uint64_t>(from, last.at + last.offset);
    if (start >= last.at + last.bytes.size()) break;
    const auto cut = static_cast<std::size_t>(last.at + last.bytes.size() - start);
    flow.queued -= cut;
    counters.dropped += cut;
    counters.buffered -= cut;
    last.bytes.resize(last.bytes.size() - cut);
    if (last.offset == last.bytes.size()) flow.queue.pop_back();
  }
}

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
  hold_for_group();
  for (auto& link : state.links) {
    if (link.broken) continue;  // reset below: nothing more of it goes on
    for (std::size_t i = 0; i < 2; ++i)
      if (!write_due(link.flows[i], mode_of(link, i), state.counters[i], now, send_limit(link, i))) link.broken = true;
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
          blocked(flow, send_limit(link, i)))
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
  if (flow == kClientToServer) watch_requests(link, bytes, mode.kind == ProxyMode::Kind::drop, now);
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
    if (state_->watch) link.matcher.emplace(state_->watch->pattern);
    state_->links.push_back(std::move(link));
  }
}

// --- the protocol watch (servers/resp_watch.h) ----------------------------------

std::shared_ptr<ParkGroup> TcpProxy::arm_watch(RespPattern pattern, std::shared_ptr<ParkGroup> group,
                                               std::size_t member) {
  if (!group) group = std::make_shared<ParkGroup>();
  auto shared = std::make_shared<const RespPattern>(std::move(pattern));
  apply([&](State& state) {
    state.watch = Watch{shared, group, member};
    for (auto& link : state.links) {
      link.matcher.emplace(shared);
      link.fence.reset();
    }
  });
  return group;
}

void TcpProxy::release_park() {
  apply([](State& state) {
    state.watch.reset();
    for (auto& link : state.links) {
      link.matcher.reset();
      link.fence.reset();
    }
  });
}

void TcpProxy::drop_park() {
  apply([this](State& state) {
    // A link of this proxy that has not looked since another link of the
    // group parked (its poll thread had nothing to read) has no fence yet:
    // fence it now, before the watch goes, so that what the client wrote before
    // it died -- queued here or still in the socket -- is discarded and the link
    // reset like the parked one (a dead Redlock client's script must not reach
    // the other nodes).
    hold_for_group();
    state.watch.reset();
    for (auto& link : state.links) {
      link.matcher.reset();
      if (!link.fence) continue;
      Flow& up = link.flows[kClientToServer];
      discard_from(up, *link.fence, state.counters[kClientToServer]);
      up.closing = true;  // act_on_changes resets the link once what came before the fence is out
      link.fence.reset();
    }
  });
}

// What a read of the client's requests completed; the first command that
// completes the pattern parks (a dropped request never reaches the server:
// nothing to park).
void TcpProxy::watch_requests(Link& link, std::string_view bytes, bool dropped, std::chrono::steady_clock::time_point now) {
  std::vector<RespCommand>& completed = state_->completed;
  completed.clear();
  link.reader.feed(bytes, completed);
  remember_names(link.names_sent, completed);
  if (dropped || !state_->watch || !link.matcher || link.fence) return;
  for (const RespCommand& command : completed)
    if (link.matcher->advance(command)) return park(link, command, now);
}

void TcpProxy::park(Link& link, const RespCommand& command, std::chrono::steady_clock::time_point now) {
  const Watch& watch = *state_->watch;
  if (watch.group->claim({watch.member, command.describe(), now})) {
    link.fence = command.begin;
  } else if (watch.group->claimed()) {  // another link of the client parked first: hold all of this one
    link.fence = std::min(command.begin, front_offset(link.flows[kClientToServer]));
  }
  // else another client's group took the last park the budget had: this command goes on.
}

// Once any link of the group parked, every connection of this proxy holds
// what it has not forwarded yet (the client's other links, its other connections).
void TcpProxy::hold_for_group() {
  if (!state_->watch || !state_->watch->group->claimed()) return;
  for (auto& link : state_->links)
    if (!link.fence) link.fence = front_offset(link.flows[kClientToServer]);
}

// How far a flow may be forwarded: requests stop at a fence; while armed, at
// the start of a request not yet whole (it has not been matched yet).
std::uint64_t TcpProxy::send_limit(const Link& link, std::size_t flow) const {
  if (flow != kClientToServer) return kNoLimit;
  if (link.fence) return *link.fence;
  if (state_->watch && !link.flows[flow].eof) return link.reader.settled();
  return kNoLimit;
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
