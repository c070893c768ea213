#include "run/redis_section_oracle.h"

#include <cstdint>

#include "redis/script.h"

namespace locklab::harness {
namespace {

// Enter: a new section id, stamped with the oracle's order; one pair per
// holder present; then this client is a holder. Returns the section id.
// KEYS: sections, holders, pairs, max, overlaps, seq; ARGV: holder, section key prefix.
constexpr const char* kEnterScript = R"lua(
local id = redis.call('INCR', KEYS[1])
local at = redis.call('INCR', KEYS[6])
redis.call('HSET', ARGV[2] .. id, 'enter', at)
local others = redis.call('HVALS', KEYS[2])
for _, other in ipairs(others) do redis.call('RPUSH', KEYS[3], other .. ' ' .. id) end
redis.call('HSET', KEYS[2], ARGV[1], id)
local now = #others + 1
if now > tonumber(redis.call('GET', KEYS[4]) or '0') then redis.call('SET', KEYS[4], now) end
if now > 1 then redis.call('INCR', KEYS[5]) end
return id
)lua";

// The read is about to be sent. KEYS: seq, section; ARGV: token ('' = none).
constexpr const char* kReadScript = R"lua(
local at = redis.call('INCR', KEYS[1])
redis.call('HSET', KEYS[2], 'read', at)
if ARGV[1] ~= '' then redis.call('HSET', KEYS[2], 'token', ARGV[1]) end
return at
)lua";

// The write came back (or the resource refused). KEYS: seq, section; ARGV: refused (0/1).
constexpr const char* kWriteScript = R"lua(
local at = redis.call('INCR', KEYS[1])
redis.call('HSET', KEYS[2], 'write', at, 'refused', ARGV[1])
return at
)lua";

// Leave: this client is no longer a holder (only of its own section).
// KEYS: holders; ARGV: holder, section id.
constexpr const char* kLeaveScript = R"lua(
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) end
return 1
)lua";

std::string holder_id(const OracleConfig& config, int client) { return config.host + "/" + std::to_string(client); }

// A reply that is not what the script returns is an oracle error too.
Result<long long> integer_reply(Result<redis::Reply> reply, const char* what) {
  if (!reply) return Error{reply.error().kind, std::string("oracle ") + what + ": " + reply.error().message};
  if (!reply->is_integer()) return Error{ErrorKind::reply, std::string("oracle ") + what + ": " + reply->describe()};
  return reply->integer();
}

// One client's events on the oracle (section_oracle.h).
class RedisSectionOracle : public SectionOracle {
 public:
  RedisSectionOracle(redis::Connection connection, const OracleConfig& config, int client)
      : connection_(std::move(connection)),
        run_id_(config.run_id),
        holder_(holder_id(config, client)),
        enter_script_(kEnterScript),
        read_script_(kReadScript),
        write_script_(kWriteScript),
        leave_script_(kLeaveScript) {}

  Status enter() override {
    section_.reset();
    auto id = integer_reply(enter_script_.run(connection_,
                                              {key("sections"), key("holders"), key("pairs"), key("max"),
                                               key("overlaps"), key("seq")},
                                              {holder_, key("section:")}),
                            "enter");
    if (!id) return id.error();
    section_ = *id;
    return Done{};
  }
  Status observe_read(std::optional<std::uint64_t> token) override {
    if (!section_) return Error{ErrorKind::usage, "oracle read: this section's enter failed"};
    return stamp(read_script_, token ? std::to_string(*token) : std::string(), "read");
  }
  Status observe_write(bool refused) override {
    if (!section_) return Error{ErrorKind::usage, "oracle write: this section's enter failed"};
    return stamp(write_script_, refused ? "1" : "0", "write");
  }
  Status leave() override {
    if (!section_) return Error{ErrorKind::usage, "oracle leave: this section's enter failed"};
    auto left = integer_reply(leave_script_.run(connection_, {key("holders")}, {holder_, std::to_string(*section_)}),
                              "leave");
    section_.reset();
    if (!left) return left.error();
    return Done{};
  }

 private:
  std::string key(const std::string& name) const { return oracle_key(run_id_, name); }
  Status stamp(redis::Script& script, const std::string& arg, const char* what) {
    auto at = integer_reply(script.run(connection_, {key("seq"), key("section:" + std::to_string(*section_))}, {arg}),
                            what);
    if (!at) return at.error();
    return Done{};
  }

  redis::Connection connection_;
  std::string run_id_;
  std::string holder_;
  redis::Script enter_script_, read_script_, write_script_, leave_script_;
  std::optional<long long> section_;  // the open section's id
};

}  // namespace

std::string oracle_key(const std::string& run_id, const std::string& name) {
  return "locklab:run:" + run_id + ":" + name;
}

Result<std::unique_ptr<SectionOracle>> RedisSectionOracles::connect(int client) const {
  auto connection = redis::Connection::connect(config_.server);
  if (!connection) return Error{connection.error().kind, "oracle: " + connection.error().message};
  return std::unique_ptr<SectionOracle>(
      std::make_unique<RedisSectionOracle>(std::move(connection).value(), config_, client));
}

Status RedisSectionOracles::client_died(int client) {
  if (!reaper_ || reaper_->broken()) {
    auto connection = redis::Connection::connect(config_.server);
    if (!connection) return Error{connection.error().kind, "oracle: " + connection.error().message};
    reaper_.emplace(std::move(connection).value());
  }
  auto reply = reaper_->command({"HDEL", oracle_key(config_.run_id, "holders"), holder_id(config_, client)});
  if (!reply) return Error{reply.error().kind, "oracle: " + reply.error().message};
  return Done{};
}

}  // namespace locklab::harness
