// The physical floor, in plain hiredis (no locklab code between the client and
// the socket): what any lock must pay at least on this machine, measured in the
// same binary and the same run as the locks themselves.
//
//   cycle     SET key v NX PX ttl, then DEL key: two blocking round trips, one node
//   fan-out   the same two commands sent to N nodes at once, every fd polled,
//             every reply read: two round trips, 2N commands (Redlock's floor)
//   get-set   GET counter, SET counter v: the harness's critical section, raw
#pragma once

#include <poll.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <hiredis/hiredis.h>

#include "redis/connection.h"

namespace locklab::bench {

struct ContextFree {
  void operator()(redisContext* context) const { redisFree(context); }
};
struct ReplyFree {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using RawContext = std::unique_ptr<redisContext, ContextFree>;
using RawReply = std::unique_ptr<redisReply, ReplyFree>;

// A blocking hiredis context, or nullptr (the error is in `why`).
inline RawContext raw_connect(const redis::Endpoint& endpoint, std::string& why) {
  RawContext context(redisConnect(endpoint.host.c_str(), endpoint.port));
  if (!context || context->err) {
    why = endpoint.to_string() + ": " + (context ? context->errstr : "cannot allocate a context");
    return nullptr;
  }
  return context;
}

// One blocking command; nullptr on a connection error.
inline RawReply raw_command(redisContext* context, const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<std::size_t> lengths;
  for (const auto& arg : args) {
    argv.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  return RawReply(static_cast<redisReply*>(
      redisCommandArgv(context, static_cast<int>(argv.size()), argv.data(), lengths.data())));
}

// The same command to every context, then every fd polled until each has
// answered: one round trip whatever the number of nodes. Returns the replies in
// context order, or nullopt on any I/O error.
inline std::optional<std::vector<RawReply>> raw_fan_out(const std::vector<RawContext>& contexts,
                                                        const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<std::size_t> lengths;
  for (const auto& arg : args) {
    argv.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  for (const auto& context : contexts) {
    if (redisAppendCommandArgv(context.get(), static_cast<int>(argv.size()), argv.data(), lengths.data()) != REDIS_OK)
      return std::nullopt;
    int done = 0;
    while (done == 0)
      if (redisBufferWrite(context.get(), &done) != REDIS_OK) return std::nullopt;
  }
  std::vector<RawReply> replies(contexts.size());
  std::size_t waiting = contexts.size();
  std::vector<pollfd> fds(contexts.size());
  while (waiting > 0) {
    fds.clear();
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < contexts.size(); ++i) {
      if (replies[i]) continue;
      fds.push_back({contexts[i]->fd, POLLIN, 0});
      which.push_back(i);
    }
    if (::poll(fds.data(), fds.size(), 5000) <= 0) return std::nullopt;
    for (std::size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      redisContext* context = contexts[which[k]].get();
      if (redisBufferRead(context) != REDIS_OK) return std::nullopt;
      void* raw = nullptr;
      if (redisGetReplyFromReader(context, &raw) != REDIS_OK) return std::nullopt;
      if (raw == nullptr) continue;  // only part of the reply so far
      replies[which[k]].reset(static_cast<redisReply*>(raw));
      --waiting;
    }
  }
  return replies;
}

}  // namespace locklab::bench
