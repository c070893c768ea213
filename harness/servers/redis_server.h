// Starts and stops real redis-server processes on free loopback ports.
//
// Every server runs in its own temp dir with persistence off, is reachable
// within a bounded wait (PING), and is stopped when its RedisServer object is
// destroyed. Two more guards against orphans: the child asks the kernel to
// SIGKILL it when the thread that started it dies (PR_SET_PDEATHSIG: covers a
// parent killed by SIGKILL), and SIGINT/SIGTERM of the parent kill every
// server it started before the parent exits. So: start servers from a thread
// that outlives them (the main thread in practice).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "redis/connection.h"

#include "servers/clock_shim/contract.h"

namespace locklab::harness {

struct ServerOptions {
  std::string binary;                        // empty = $LOCKLAB_REDIS_SERVER, then PATH, then /usr/bin
  // A config file given as the first argument (absolute path). Sentinel needs
  // one it can rewrite: {"--sentinel"} in extra_args + this = a sentinel.
  std::string config_file;
  std::optional<redis::Endpoint> replica_of;  // start as a replica of this master
  std::string password;                      // --requirepass
  std::vector<std::string> extra_args;       // e.g. {"--appendonly", "yes"}
  // Preload the clock shim (harness/servers/clock_shim): the node's wall clock can then
  // be jumped with jump_clock() (servers/clock_jump.h). Monotonic time is untouched.
  bool clock_shim = false;
  std::chrono::milliseconds start_timeout{10'000};
};

class RedisServer {
 public:
  static Result<std::unique_ptr<RedisServer>> start(ServerOptions options = {});

  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;
  ~RedisServer();  // stop() and remove the temp dir

  const redis::Endpoint& endpoint() const { return endpoint_; }
  redis::ConnectionOptions connection_options() const;
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  const std::string& dir() const { return dir_; }
  std::string log_tail(std::size_t max_bytes = 2000) const;
  // The file the clock shim reads its offset from (ServerOptions::clock_shim).
  std::string clock_offset_file() const { return dir_ + "/" LOCKLAB_CLOCK_OFFSET_BASENAME; }
  bool under_clock_shim() const { return options_.clock_shim; }

  void pause();   // SIGSTOP: the process keeps its port, answers nothing
  void resume();  // SIGCONT
  void crash();   // SIGKILL and reap: no shutdown, no save
  void stop();    // SIGTERM, then SIGKILL after 5 s; reaped. Idempotent.
  // A new process on the same port and dir (after crash() or stop()). With
  // persistence off it comes back empty: "restart without persistence".
  Status restart();

 private:
  RedisServer(ServerOptions options, std::string dir);
  Status launch(int port);
  Result<std::vector<std::string>> server_environment() const;

  ServerOptions options_;
  std::string dir_;
  redis::Endpoint endpoint_;
  pid_t pid_ = -1;
};

using ServerList = std::vector<std::unique_ptr<RedisServer>>;

// N independent masters (Redlock).
Result<ServerList> start_masters(std::size_t count, const ServerOptions& options = {});

// servers[0] = master, servers[1..replicas] = its replicas, every replication
// link up and every replica already acknowledging writes (ready for WAIT).
Result<ServerList> start_master_with_replicas(std::size_t replicas, const ServerOptions& options = {});

inline Result<ServerList> start_master_with_replica(const ServerOptions& options = {}) {
  return start_master_with_replicas(1, options);
}

// The redis-server binary that start() would use, or an error saying how to get one.
Result<std::string> find_redis_server(const std::string& preferred = {});

// The server version ("7.0.15") as INFO reports it, or "unknown".
std::string server_version(const redis::ConnectionOptions& options);

}  // namespace locklab::harness
