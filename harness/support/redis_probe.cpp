#include "support/redis_probe.h"

namespace locklab::harness {

Result<RedisProbe> RedisProbe::connect(const redis::ConnectionOptions& options) {
  RedisProbe probe(options);
  if (auto connected = probe.link_.get(); !connected) return connected.error();
  return probe;
}

// A broken probe connection is replaced on the next read (redis::Link): the
// observer must keep observing across a server restart (a fault the story injects).
std::optional<redis::Reply> RedisProbe::ask(const redis::Args& args) {
  auto reply = link_.command(args);
  if (!reply || reply->is_error()) return std::nullopt;
  return std::move(reply).value();
}

std::optional<bool> RedisProbe::exists(const std::string& key) {
  auto reply = ask({"EXISTS", key});
  if (!reply) return std::nullopt;
  return reply->integer() > 0;
}

std::optional<std::string> RedisProbe::value(const std::string& key) {
  auto reply = ask({"GET", key});
  if (!reply) return std::nullopt;
  return reply->string();
}

std::optional<long long> RedisProbe::pttl(const std::string& key) {
  auto reply = ask({"PTTL", key});
  if (!reply) return std::nullopt;
  return reply->integer();
}

Condition RedisProbe::key_absent(std::string key) {
  return [this, key = std::move(key)] { return exists(key) == false; };
}

Condition RedisProbe::key_present(std::string key) {
  return [this, key = std::move(key)] { return exists(key) == true; };
}

Condition RedisProbe::value_differs(std::string key, std::string from) {
  return [this, key = std::move(key), from = std::move(from)] {
    const auto now = value(key);
    return now.has_value() && *now != from;
  };
}

}  // namespace locklab::harness
