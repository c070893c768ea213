#include "sweeps/adapter_declaration.h"

#include <cstdio>
#include <memory>
#include <set>

#include "servers/redis_server.h"
#include "workload/adapter_lock.h"

namespace locklab::harness {

Result<LockDescription> declared_by_init_ok(const LockDescription& lock) {
  auto server = RedisServer::start();
  if (!server) return Error{server.error().kind, "adapter " + lock.label + ": no server to ask it on: " +
                                                     server.error().message};
  LockConfig config;
  config.key = "locklab:declaration";
  config.servers = {(*server)->connection_options()};
  auto adapter = AdapterLock::create(lock.adapter, config, 0, AdapterTimeouts{}, lock.label);
  if (!adapter) return adapter.error();
  const AdapterIdentity said = (*adapter)->identity();
  std::set<std::string> words;
  for (const auto& [word, value] : said.capabilities)
    if (value) words.insert(word);
  return with_declared(lock, words, said.release_window, said.acquire_gap);
}

Result<UserAdapters> with_init_ok_declarations(UserAdapters user) {
  for (auto& lock : user.locks) {
    if (lock.from_catalog) continue;
    auto declared = declared_by_init_ok(lock);
    if (declared) {
      lock = std::move(declared).value();
      continue;
    }
    if (declared.error().kind == ErrorKind::usage) return declared.error();
    std::fprintf(stderr, "locklab matrix: %s: its init_ok could not be read before its row was planned: %s\n",
                 lock.name.c_str(), declared.error().message.c_str());
  }
  return user;
}

}  // namespace locklab::harness
