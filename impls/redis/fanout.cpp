#include "redis/fanout.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <optional>

namespace locklab::redis {
namespace {

using Clock = std::chrono::steady_clock;

// Every connection still waiting for its reply, as one pollfd array.
struct Waiting {
  std::vector<pollfd> fds;
  std::vector<std::size_t> server_of;
};

Waiting waiting_for(const std::vector<Connection*>& sent) {
  Waiting waiting;
  for (std::size_t i = 0; i < sent.size(); ++i) {
    if (sent[i] == nullptr) continue;
    waiting.fds.push_back({sent[i]->fd(), POLLIN, 0});
    waiting.server_of.push_back(i);
  }
  return waiting;
}

// An idle connection (no request pending) has nothing to read unless the
// server closed it or sent something we did not ask for; either way it is unusable.
bool closed_while_idle(const Connection& connection) {
  pollfd pfd{connection.fd(), POLLIN | POLLRDHUP, 0};
  return ::poll(&pfd, 1, 0) != 0;
}

}  // namespace

FanOut::FanOut(std::vector<ConnectionOptions> servers)
    : servers_(std::move(servers)), connections_(servers_.size()) {}

Result<Connection*> FanOut::live(std::size_t server) {
  auto& connection = connections_[server];
  if (connection && !connection->broken() && !closed_while_idle(*connection)) return &*connection;
  connection.reset();
  auto fresh = Connection::connect(servers_[server]);
  if (!fresh) return fresh.error();
  connection.emplace(std::move(fresh).value());
  return &*connection;
}

FanOut::Reachable FanOut::connect_all() {
  Reachable reachable;
  for (std::size_t i = 0; i < size(); ++i) {
    auto connection = live(i);
    if (connection) ++reachable.connected;
    else if (reachable.first_error.empty()) reachable.first_error = connection.error().message;
  }
  return reachable;
}

FanOut::Replies FanOut::run(const Args& command, std::chrono::milliseconds timeout) {
  const std::size_t n = size();
  std::vector<std::optional<Result<Reply>>> slots(n);
  std::vector<Connection*> sent(n, nullptr);

  // 1. Write and flush on every connection before reading any reply.
  for (std::size_t i = 0; i < n; ++i) {
    auto connection = live(i);
    if (!connection) {
      slots[i] = connection.error();
    } else if (auto written = (*connection)->send(command); !written) {
      slots[i] = written.error();
    } else {
      sent[i] = *connection;
    }
  }

  // 2. Poll every fd still waiting until the one deadline; read whichever is ready.
  // The client waits once for every server: one round trip (a reconnect's AUTH,
  // above, was a wait of its own).
  const OneRoundTrip one_round;
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    Waiting waiting = waiting_for(sent);
    const auto now = Clock::now();
    if (waiting.fds.empty() || now >= deadline) break;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
    const int ready = ::poll(waiting.fds.data(), waiting.fds.size(), static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) break;  // the rest get their last look below
    for (std::size_t k = 0; ready > 0 && k < waiting.fds.size(); ++k) {
      if (waiting.fds[k].revents == 0) continue;
      const std::size_t i = waiting.server_of[k];
      // Readable (or closed) now; a reply that is only half in may finish by the deadline.
      slots[i] = sent[i]->read_until(std::max(deadline, Clock::now() + std::chrono::milliseconds{1}));
      sent[i] = nullptr;
    }
  }

  // 3. Past the deadline: read_until() takes one last look (a reply already in
  // the socket is still read), else reports the timeout and marks the connection
  // broken, since a late reply would desync it; live() reconnects next round.
  for (std::size_t i = 0; i < n; ++i)
    if (sent[i] != nullptr) slots[i] = sent[i]->read_until(deadline);

  Replies replies;
  replies.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto& slot = *slots[i];
    if (slot && slot->is_error())
      replies.push_back(Error{ErrorKind::reply, name(i) + ": " + std::string(slot->text())});
    else
      replies.push_back(std::move(slot));
  }
  return replies;
}

std::vector<ConnectionOptions> within(std::vector<ConnectionOptions> servers, std::chrono::milliseconds timeout) {
  for (auto& options : servers) {
    options.connect_timeout = std::min(options.connect_timeout, std::max(timeout, std::chrono::milliseconds{1}));
    options.command_timeout = timeout;
  }
  return servers;
}

std::size_t IntegerCounts::of(long long value) const {
  const auto found = by_value.find(value);
  return found == by_value.end() ? 0 : found->second;
}

IntegerCounts count_integers(const FanOut::Replies& replies) {
  IntegerCounts counts;
  for (const auto& reply : replies) {
    if (reply && reply->is_integer()) {
      ++counts.by_value[reply->integer()];
    } else if (++counts.unanswered == 1) {
      counts.first_unanswered = reply ? "unexpected reply " + reply->describe() : reply.error().message;
    }
  }
  return counts;
}

}  // namespace locklab::redis
