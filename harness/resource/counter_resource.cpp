#include "resource/counter_resource.h"

#include <charconv>

#include "redis/cluster_routing.h"

namespace locklab::harness {
namespace {

// KEYS[1] counter, KEYS[2] highest token seen; ARGV[1] token.
// Returns {1, value-or-nil} when admitted, {0} when the token is stale.
constexpr const char* kFencedRead = R"lua(
local highest = tonumber(redis.call('GET', KEYS[2]) or '0')
local token = tonumber(ARGV[1])
if token < highest then return {0} end
if token > highest then redis.call('SET', KEYS[2], ARGV[1]) end
return {1, redis.call('GET', KEYS[1])}
)lua";

// KEYS[1] counter, KEYS[2] highest token seen; ARGV[1] token, ARGV[2] new value.
// Returns 1 when written, 0 when the token is stale.
constexpr const char* kFencedWrite = R"lua(
local highest = tonumber(redis.call('GET', KEYS[2]) or '0')
local token = tonumber(ARGV[1])
if token < highest then return 0 end
if token > highest then redis.call('SET', KEYS[2], ARGV[1]) end
redis.call('SET', KEYS[1], ARGV[2])
return 1
)lua";

Result<long long> parse_counter(const redis::Reply& reply, const std::string& key) {
  if (reply.is_nil()) return 0LL;
  const auto text = reply.text();
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size())
    return Error{ErrorKind::protocol, key + " is not a number: " + reply.describe()};
  return value;
}

}  // namespace

CounterResource::CounterResource(redis::ConnectionOptions server, std::string key)
    : link_(std::move(server)),
      key_(std::move(key)),
      // In a cluster the fenced scripts need both keys in one slot.
      fence_key_(link_.options().cluster ? redis::same_slot_key(key_, ":highest-token") : key_ + ":highest-token"),
      fenced_read_(kFencedRead),
      fenced_write_(kFencedWrite) {}

// Every call goes through link_ (not a connection taken from it): in a
// cluster the link routes each one to the master owning the counter's slot.
Result<CounterResource::Read> CounterResource::read(std::optional<std::uint64_t> token) {
  if (!token) {
    auto reply = link_.command({"GET", key_});
    if (!reply) return reply.error();
    auto value = parse_counter(*reply, key_);
    if (!value) return value.error();
    return Read{false, *value};
  }
  auto reply = link_.run(fenced_read_, {key_, fence_key_}, {std::to_string(*token)});
  if (!reply) return reply.error();
  if (reply->element(0).integer() == 0) return Read{true, 0};
  auto value = parse_counter(reply->element(1), key_);
  if (!value) return value.error();
  return Read{false, *value};
}

Result<bool> CounterResource::write(long long value, std::optional<std::uint64_t> token) {
  if (!token) {
    auto reply = link_.command({"SET", key_, std::to_string(value)});
    if (!reply) return reply.error();
    if (!reply->is_status("OK"))
      return Error{ErrorKind::reply, link_.options().endpoint.to_string() + ": SET counter failed: " +
                                         std::string(reply->text())};
    return true;
  }
  auto reply = link_.run(fenced_write_, {key_, fence_key_}, {std::to_string(*token), std::to_string(value)});
  if (!reply) return reply.error();
  return reply->integer() == 1;
}

Result<long long> CounterResource::value() {
  auto reply = link_.command({"GET", key_});
  if (!reply) return reply.error();
  return parse_counter(*reply, key_);
}

Status CounterResource::reset() {
  auto reply = link_.command({"DEL", key_, fence_key_});
  if (!reply) return reply.error();
  return Done{};
}

}  // namespace locklab::harness
