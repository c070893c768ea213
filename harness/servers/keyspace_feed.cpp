#include "servers/keyspace_feed.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <set>

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::int64_t now_ns() {  // the history's clock (history.h, monotonic_ns())
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// K: keyspace channels; g generic (del, expire, rename), $ string (set),
// h hash, l list, z zset (hash- and queue-based locks), x expired, e evicted.
constexpr const char* kWitnessFlags = "Kg$hlzxe";
constexpr const char* kKeyspacePrefix = "__keyspace@0__:";

// One read in one atomic script, so no event can fall between the read and
// its marker: PTTL, TYPE, the value by type, then PUBLISH of the marker on our
// channel. Always exactly four calls (kCommandsPerRead counts them with EVAL).
constexpr const char* kReadScript = R"lua(
local k = KEYS[1]
local ttl = redis.call('pttl', k)
local t = redis.call('type', k)['ok']
local v
if t == 'string' then v = redis.call('get', k)
elseif t == 'hash' then v = redis.call('hkeys', k)
elseif t == 'list' then v = redis.call('lrange', k, 0, -1)
elseif t == 'zset' then v = redis.call('zrange', k, 0, -1)
else v = redis.call('exists', k) end
redis.call('publish', ARGV[1], ARGV[2])
return {ttl, t, v}
)lua";

// The node's flags plus ours, each letter once (a server may already notify
// for something else; we must not take that away).
std::string merged_flags(const std::string& current) {
  std::string merged = current;
  for (const char flag : std::string(kWitnessFlags))
    if (merged.find(flag) == std::string::npos) merged += flag;
  return merged;
}

Status enable_notifications(redis::Connection& reader) {
  auto current = reader.command({"CONFIG", "GET", "notify-keyspace-events"});
  if (!current) return current.error();
  const std::string now = current->is_array() && current->size() == 2 ? std::string(current->element(1).text()) : "";
  auto set = reader.command({"CONFIG", "SET", "notify-keyspace-events", merged_flags(now)});
  if (!set) return set.error();
  if (set->is_error()) return Error{ErrorKind::reply, "CONFIG SET notify-keyspace-events: " + set->describe()};
  return Done{};
}

// SUBSCRIBE (not PSUBSCRIBE): a key is a literal name, and a glob character in
// it must not widen the watch to other keys.
Status subscribe(redis::Connection& subscriber, const std::vector<std::string>& channels) {
  redis::Args args{"SUBSCRIBE"};
  for (const auto& channel : channels) args.push_back(channel);
  if (auto sent = subscriber.send(args); !sent) return sent.error();
  const auto deadline = Clock::now() + 2s;
  for (std::size_t confirmed = 0; confirmed < channels.size(); ++confirmed) {
    auto reply = subscriber.read_until(deadline);
    if (!reply) return reply.error();
    if (!reply->is_array() || reply->size() < 1 || reply->element(0).text() != "subscribe")
      return Error{ErrorKind::protocol, "SUBSCRIBE answered " + reply->describe()};
  }
  return Done{};
}

redis::ConnectionOptions witness_options(redis::ConnectionOptions node) {
  node.cluster = false;
  node.counted = false;  // the witness's traffic is not the lock's cost
  node.connect_timeout = 500ms;
  node.command_timeout = 500ms;  // a paused node: the read gives up, the feed goes on
  return node;
}

std::vector<std::string> values_of(const redis::Reply& value) {
  std::vector<std::string> out;
  if (value.is_string()) out.emplace_back(value.text());
  for (std::size_t i = 0; value.is_array() && i < value.size(); ++i) out.emplace_back(value.element(i).text());
  return out;
}

}  // namespace

Result<std::unique_ptr<KeyspaceFeed>> KeyspaceFeed::start(const redis::ConnectionOptions& node,
                                                          const std::vector<std::string>& keys) {
  const redis::ConnectionOptions options = witness_options(node);
  auto reader = redis::Connection::connect(options);
  if (!reader) return reader.error();
  if (auto enabled = enable_notifications(*reader); !enabled) return enabled.error();
  auto subscriber = redis::Connection::connect(options);
  if (!subscriber) return subscriber.error();
  const std::string channel = "locklab:witness:" + std::to_string(::getpid()) + ":" + std::to_string(now_ns());
  std::set<std::string> channels{channel};
  for (const auto& key : keys) channels.insert(kKeyspacePrefix + key);
  if (auto subscribed = subscribe(*subscriber, {channels.begin(), channels.end()}); !subscribed)
    return subscribed.error();
  std::unique_ptr<KeyspaceFeed> feed(
      new KeyspaceFeed(std::move(subscriber).value(), std::move(reader).value(), channel, node.endpoint.to_string()));
  if (feed->wake_fd_ < 0) return Error{ErrorKind::io, "eventfd failed"};
  feed->thread_ = std::thread([raw = feed.get()] { raw->run(); });
  feed->quiet_->wait_until_held();
  return feed;
}

KeyspaceFeed::KeyspaceFeed(redis::Connection subscriber, redis::Connection reader, std::string channel,
                           std::string node)
    : subscriber_(std::move(subscriber)),
      reader_(std::move(reader)),
      channel_(std::move(channel)),
      wake_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
      quiet_(std::make_unique<QuietAtFork>(work_mutex_)) {
  log_.node = std::move(node);
}

KeyspaceFeed::~KeyspaceFeed() {
  if (thread_.joinable()) (void)stop();
  quiet_.reset();  // unregistered before the mutex it names goes
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void KeyspaceFeed::request_read(int client, const std::string& key) {
  {
    std::lock_guard lock(requests_mutex_);
    request_ = std::make_pair(client, key);
  }
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void KeyspaceFeed::close_reads() {
  reads_closed_.store(true);
  std::lock_guard wait_for_the_thread(work_mutex_);  // it holds it while it serves a read
}

FeedLog KeyspaceFeed::stop() {
  stopping_.store(true);
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  return std::move(log_);
}

void KeyspaceFeed::run() {
  std::unique_lock work(work_mutex_);
  quiet_->holding();
  while (true) {
    serve_request();
    if (stopping_.load() && !end_sent_) {
      // The end marker: every event the server emitted before it is read once it comes back.
      end_sent_ = true;
      end_deadline_ = Clock::now() + 1s;
      auto sent = reader_.command({"PUBLISH", channel_, "end"});
      if (!sent) end_deadline_ = Clock::now();
    }
    if (log_.ended_cleanly || (end_sent_ && Clock::now() >= end_deadline_)) return;
    if (subscriber_.broken()) {
      if (stopping_.load()) return;
      work.unlock();
      wait_for_input(50ms);  // blind: only a stop or a request (ignored) wakes us
      work.lock();
      continue;
    }
    work.unlock();
    const bool readable = subscriber_.buffered() || wait_for_input(20ms);
    work.lock();
    if (readable) read_messages();
  }
}

// poll() on the subscription and the wake-up fd; true when the subscription
// has bytes to read.
bool KeyspaceFeed::wait_for_input(std::chrono::milliseconds bound) {
  pollfd fds[2] = {{subscriber_.broken() ? -1 : subscriber_.fd(), POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  if (::poll(fds, 2, static_cast<int>(bound.count())) <= 0) return false;
  if ((fds[1].revents & POLLIN) != 0) {
    std::uint64_t drained = 0;
    (void)!::read(wake_fd_, &drained, sizeof drained);
  }
  return (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
}

void KeyspaceFeed::read_messages() {
  do {
    // The fd is readable: a whole message follows at once, the bound only
    // guards against a server that stopped half way.
    auto message = subscriber_.read_until(Clock::now() + 1s);
    if (!message) return go_blind(message.error().message);
    take(*message);
  } while (subscriber_.buffered());
}

void KeyspaceFeed::take(const redis::Reply& message) {
  const std::int64_t stamp = now_ns();
  if (!message.is_array() || message.size() != 3 || message.element(0).text() != "message") return;
  const std::string channel(message.element(1).text());
  const std::string payload(message.element(2).text());
  FeedItem item;
  item.stamp_ns = stamp;
  if (channel == channel_) {
    if (payload == "end") {
      log_.ended_cleanly = true;
      return;
    }
    // Only we publish here, but a stray word must not throw on this thread.
    const auto [end, error] = std::from_chars(payload.data(), payload.data() + payload.size(), item.read);
    if (error != std::errc{} || end != payload.data() + payload.size() || item.read < 0) return;
  } else if (channel.starts_with(kKeyspacePrefix)) {
    item.key = channel.substr(std::string_view(kKeyspacePrefix).size());
    item.event = payload;
  } else {
    return;
  }
  log_.items.push_back(std::move(item));
}

void KeyspaceFeed::serve_request() {
  std::optional<std::pair<int, std::string>> request;
  {
    std::lock_guard lock(requests_mutex_);
    request.swap(request_);
  }
  if (!request || reads_closed_.load()) return;
  if (subscriber_.broken()) return;  // blind: a read without its marker tells nothing
  if (reader_.broken()) {
    auto fresh = redis::Connection::connect(reader_.options());  // a dead context is replaced, never reused
    if (!fresh) return;
    reader_ = std::move(fresh).value();
  }
  KeyRead read;
  read.client = request->first;
  read.key = request->second;
  const int index = static_cast<int>(log_.reads.size());
  read.sent_ns = now_ns();
  auto reply = reader_.command({"EVAL", kReadScript, "1", read.key, channel_, std::to_string(index)});
  // A timed-out EVAL may still have run: counted; one that never left is not.
  if (reply || reply.error().request_sent) log_.commands_sent += kCommandsPerRead;
  if (reply && reply->is_array() && reply->size() == 3) {
    read.replied_ns = now_ns();
    read.pttl = reply->element(0).integer();
    read.type = std::string(reply->element(1).text());
    read.value = values_of(reply->element(2));
  }
  log_.reads.push_back(std::move(read));
}

void KeyspaceFeed::go_blind(const std::string& why) {
  if (log_.blind_from_ns == 0) log_.blind_from_ns = now_ns();
  log_.error = why;
}

}  // namespace locklab::harness
