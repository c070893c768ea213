#include "redis/connection.h"

#include <poll.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <mutex>

#include <hiredis/hiredis.h>

namespace locklab::redis {
namespace {

std::atomic<std::uint64_t> g_commands{0};
std::atomic<std::uint64_t> g_round_trips{0};
std::atomic<std::uint64_t> g_exchanges{0};

// OneRoundTrip's state: inside a scope, and whether its one round trip was counted.
thread_local int t_round_depth = 0;
thread_local bool t_round_counted = false;

// One request batch answered by one server: an exchange, and a round trip
// unless it is part of a round already counted.
void count_exchange() {
  g_exchanges.fetch_add(1, std::memory_order_relaxed);
  if (t_round_depth > 0) {
    if (t_round_counted) return;
    t_round_counted = true;
  }
  g_round_trips.fetch_add(1, std::memory_order_relaxed);
}

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

// hiredis 0.14 has no REDIS_ERR_TIMEOUT: a timeout is REDIS_ERR_IO with EAGAIN.
Error error_from_context(const redisContext& context, const Endpoint& where) {
  const std::string prefix = where.to_string() + ": ";
  const int saved_errno = errno;
  switch (context.err) {
    case REDIS_ERR_IO:
      if (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK || saved_errno == ETIMEDOUT ||
          saved_errno == EINPROGRESS)
        return {ErrorKind::timeout, prefix + "timed out"};
      return {ErrorKind::io, prefix + context.errstr};
    case REDIS_ERR_EOF: return {ErrorKind::closed, prefix + "connection closed by server"};
    case REDIS_ERR_PROTOCOL: return {ErrorKind::protocol, prefix + context.errstr};
    default: return {ErrorKind::io, prefix + context.errstr};
  }
}

std::vector<const char*> argv_of(const Args& args, std::vector<std::size_t>& lengths) {
  std::vector<const char*> argv;
  argv.reserve(args.size());
  lengths.clear();
  lengths.reserve(args.size());
  for (const auto& arg : args) {
    argv.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  return argv;
}

}  // namespace

namespace {
std::atomic<TrafficObserver*> g_observer{nullptr};

void observe_sent(const Endpoint& to, const Args& request) {
  if (auto* observer = g_observer.load(std::memory_order_acquire)) observer->sent(to, request);
}
void observe_received(const Endpoint& from, const Reply* reply, const Error* error) {
  if (auto* observer = g_observer.load(std::memory_order_acquire)) observer->received(from, reply, error);
}
}  // namespace

void set_traffic_observer(TrafficObserver* observer) { g_observer.store(observer, std::memory_order_release); }

Traffic traffic() { return {g_commands.load(), g_round_trips.load(), g_exchanges.load()}; }

OneRoundTrip::OneRoundTrip() {
  if (t_round_depth++ == 0) t_round_counted = false;
}
OneRoundTrip::~OneRoundTrip() { --t_round_depth; }

std::string Endpoint::to_string() const { return host + ":" + std::to_string(port); }

std::optional<Endpoint> Endpoint::parse(std::string_view text) {
  Endpoint endpoint;
  std::string_view port_text = text;
  if (const auto colon = text.rfind(':'); colon != std::string_view::npos) {
    if (colon > 0) endpoint.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  int port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || end != port_text.data() + port_text.size() || port <= 0 || port > 65535)
    return std::nullopt;
  endpoint.port = port;
  return endpoint;
}

void Connection::ContextDeleter::operator()(redisContext* context) const {
  if (context != nullptr) redisFree(context);
}

Connection::Connection(ContextPtr context, ConnectionOptions options)
    : context_(std::move(context)), options_(std::move(options)) {}
Connection::Connection(Connection&&) noexcept = default;
Connection& Connection::operator=(Connection&&) noexcept = default;
Connection::~Connection() = default;

// hiredis writes with plain write(): a write to a connection the server reset
// would raise SIGPIPE and kill the whole process. Errors must be values, so
// the first connection makes the process ignore SIGPIPE (write then fails with
// EPIPE, which becomes an ErrorKind::io). A program that needs SIGPIPE can
// re-install its handler after connecting.
static void ignore_sigpipe_once() {
  static std::once_flag once;
  std::call_once(once, [] { ::signal(SIGPIPE, SIG_IGN); });
}

// Connecting sends no lock command (AUTH at most), so whatever goes wrong here
// has a known outcome: nothing was applied. A connect timeout must not look
// like a lost reply (outcome_unknown()), or callers would report "may hold".
static Error nothing_applied(Error error) {
  if (error.kind == ErrorKind::timeout || error.kind == ErrorKind::closed) error.kind = ErrorKind::io;
  error.request_sent = false;
  return error;
}

Result<Connection> Connection::connect(const ConnectionOptions& options) {
  auto connection = open(options);
  if (!connection) return nothing_applied(connection.error());
  return connection;
}

Result<Connection> Connection::open(const ConnectionOptions& options) {
  ignore_sigpipe_once();
  if (options.connect_timeout.count() <= 0)
    return Error{ErrorKind::usage, "connect timeout must be > 0"};
  ContextPtr context(redisConnectWithTimeout(options.endpoint.host.c_str(), options.endpoint.port,
                                             to_timeval(options.connect_timeout)));
  if (!context) return Error{ErrorKind::io, options.endpoint.to_string() + ": out of memory"};
  if (context->err != 0) {
    Error error = error_from_context(*context, options.endpoint);
    if (error.kind == ErrorKind::io) error.message = options.endpoint.to_string() + ": cannot connect: " + context->errstr;
    return error;
  }
  if (options.command_timeout.count() > 0 &&
      redisSetTimeout(context.get(), to_timeval(options.command_timeout)) != REDIS_OK)
    return error_from_context(*context, options.endpoint);

  Connection connection(std::move(context), options);
  if (!options.password.empty()) {
    Args auth = options.user.empty() ? Args{"AUTH", options.password}
                                     : Args{"AUTH", options.user, options.password};
    auto reply = connection.command(auth);
    if (!reply) return reply.error();
    if (reply->is_error())
      return Error{ErrorKind::auth, options.endpoint.to_string() + ": AUTH refused: " + std::string(reply->text())};
  }
  return connection;
}

int Connection::fd() const { return context_ ? context_->fd : -1; }

bool Connection::buffered() const {
  return context_ && context_->reader != nullptr && context_->reader->pos < context_->reader->len;
}

Error Connection::fail_from_context(bool request_sent) {
  broken_ = error_from_context(*context_, options_.endpoint);
  broken_->request_sent = request_sent;
  return *broken_;
}

// A broken connection fails fast with its original error, but this request
// never left: whatever the first failure said about its own request, this
// one was not applied.
Error Connection::fail_fast() const {
  Error error = *broken_;
  error.request_sent = false;
  return error;
}

void Connection::append(const Args& args) {
  if (broken_) return;
  std::vector<std::size_t> lengths;
  auto argv = argv_of(args, lengths);
  if (redisAppendCommandArgv(context_.get(), static_cast<int>(argv.size()), argv.data(), lengths.data()) != REDIS_OK) {
    fail_from_context(false);
    return;
  }
  ++pending_;
  if (!options_.counted) return;
  g_commands.fetch_add(1, std::memory_order_relaxed);
  observe_sent(options_.endpoint, args);
}

// Only after flush(): every pending request is on the wire, so a failure here
// (timeout, close, reset) leaves each of them maybe applied.
Result<Reply> Connection::read_one() {
  void* raw = nullptr;
  if (redisGetReply(context_.get(), &raw) != REDIS_OK || raw == nullptr) {
    const Error error = fail_from_context(true);
    if (options_.counted) observe_received(options_.endpoint, nullptr, &error);
    return error;
  }
  --pending_;
  Reply reply(static_cast<redisReply*>(raw));
  if (options_.counted) observe_received(options_.endpoint, &reply, nullptr);
  return reply;
}

Result<std::vector<Reply>> Connection::read_pending() {
  if (broken_) return fail_fast();
  if (options_.counted) count_exchange();
  if (auto flushed = flush(); !flushed) return flushed.error();
  std::vector<Reply> replies;
  replies.reserve(pending_);
  while (pending_ > 0) {
    auto reply = read_one();
    if (!reply) return reply.error();
    replies.push_back(std::move(reply).value());
  }
  return replies;
}

Result<Reply> Connection::command(const Args& args) {
  if (args.empty()) return Error{ErrorKind::usage, "empty command"};
  append(args);
  auto replies = read_pending();
  if (!replies) return replies.error();
  return std::move(replies->back());
}

// A blocking context's redisBufferWrite() succeeds only after write() took
// some bytes, so the first call failing means nothing reached the socket (not
// applied); a later one failing means part of the requests may have.
Status Connection::flush() {
  int done = 0;
  bool wrote_some = false;
  while (done == 0) {
    if (redisBufferWrite(context_.get(), &done) != REDIS_OK) return fail_from_context(wrote_some);
    wrote_some = true;
  }
  return Done{};
}

Status Connection::send(const Args& args) {
  if (broken_) return fail_fast();
  append(args);
  if (broken_) return fail_fast();
  return flush();
}

Result<Reply> Connection::read_until(std::chrono::steady_clock::time_point deadline) {
  if (broken_) return fail_fast();
  auto reply = read_by(deadline);
  if (options_.counted)
    observe_received(options_.endpoint, reply ? &reply.value() : nullptr, reply ? nullptr : &reply.error());
  return reply;
}

Result<Reply> Connection::read_by(std::chrono::steady_clock::time_point deadline) {
  const bool request_sent = pending_ > 0;  // sent by send(): a failure now leaves it maybe applied
  // With nothing pending this reads a pushed message (pub/sub): not a round trip.
  if (pending_ > 0 && options_.counted) count_exchange();
  for (;;) {
    void* raw = nullptr;
    if (redisGetReplyFromReader(context_.get(), &raw) != REDIS_OK) return fail_from_context(request_sent);
    if (raw != nullptr) {
      if (pending_ > 0) --pending_;
      return Reply(static_cast<redisReply*>(raw));
    }
    // Rounded up: 0.9 ms left is a 1 ms poll, not a last look.
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    // Past the deadline, still look once (poll timeout 0): a reader that visits
    // several connections in turn must not call a reply that already arrived a timeout.
    const bool last_look = left.count() <= 0;
    pollfd pfd{context_->fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, last_look ? 0 : static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) {
      broken_ = Error{ErrorKind::io, options_.endpoint.to_string() + ": poll: " + std::strerror(errno), request_sent};
      return *broken_;
    }
    if (ready > 0) {
      if (redisBufferRead(context_.get()) != REDIS_OK) return fail_from_context(request_sent);
      continue;
    }
    if (last_look) {
      // The request is on the wire; its reply may still come and would desync
      // this context: mark it dead, as hiredis itself would.
      broken_ = Error{ErrorKind::timeout, options_.endpoint.to_string() + ": timed out", request_sent};
      return *broken_;
    }
  }
}

}  // namespace locklab::redis
