#include "counter_resource.h"

#include <charconv>

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
      fence_key_(key_ + ":highest-token"),
      fenced_read_(kFencedRead),
      fenced_write_(kFencedWrite) {}

Result<CounterResource::Read> CounterResource::read(std::optional<std::uint64_t> token) {
  auto connection = link_.get();
  if (!connection) return connection.error();
  if (!token) {
    auto reply = (*connection)->command({"GET", key_});
    if (!reply) return reply.error();
    auto value = parse_counter(*reply, key_);
    if (!value) return value.error();
    return Read{false, *value};
  }
  auto reply = fenced_read_.run(**connection, {key_, fence_key_}, {std::to_string(*token)});
  if (!reply) return reply.error();
  if (reply->element(0).integer() == 0) return Read{true, 0};
  auto value = parse_counter(reply->element(1), key_);
  if (!value) return value.error();
  return Read{false, *value};
}

Result<bool> CounterResource::write(long long value, std::optional<std::uint64_t> token) {
  auto connection = link_.get();
  if (!connection) return connection.error();
  if (!token) {
    auto reply = (*connection)->command({"SET", key_, std::to_string(value)});
    if (!reply) return reply.error();
    if (!reply->is_status("OK")) return redis::reply_error(**connection, *reply, "SET counter");
    return true;
  }
  auto reply = fenced_write_.run(**connection, {key_, fence_key_}, {std::to_string(*token), std::to_string(value)});
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
