// Replicated + Sentinel, for real: a master, one replica whose replication
// stream runs through a TcpProxy (ProxiedReplication: the stream can be held),
// and three `redis-server --sentinel` processes monitoring the master (quorum 2).
//
//   auto topology = SentinelTopology::start();     // every sentinel sees the master, the replica and the others
//   topology->replication().hold_replication();    // the next write stays in the proxy
//   ... a client acquires on the master ...
//   auto promoted = topology->kill_master();       // SIGKILL, held bytes lost, wait for Sentinel's promotion
//   ... a client that asks the sentinels now finds the replica, without the lock ...
//
// Sentinel itself promotes the replica (no REPLICAOF NO ONE from us): the time
// from the crash to the new address is Sentinel's (down-after-milliseconds,
// election, promotion).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "redis/connection.h"
#include "redis/result.h"

#include "servers/proxied_replication.h"
#include "servers/redis_server.h"

namespace locklab::harness {

struct SentinelSettings {
  std::string master_name = "m";
  int sentinels = 3;
  int quorum = 2;
  std::chrono::milliseconds down_after{500};
  // Long on purpose: after failover-timeout a sentinel "fixes" a replica whose
  // master address differs from the monitored one (+fix-slave-config) and would
  // point ours past the proxy. One replica is promoted well within it anyway.
  std::chrono::milliseconds failover_timeout{60'000};
  std::chrono::milliseconds ready_timeout{15'000};
  // How long kill_master waits for the sentinels' own election. A split vote
  // waits out the election (10 s) and then 2 x failover-timeout before the
  // next one, so past this window one sentinel is told to fail over alone.
  std::chrono::milliseconds election_window{12'000};
};

class SentinelTopology {
 public:
  static Result<std::unique_ptr<SentinelTopology>> start(SentinelSettings settings = {});
  ~SentinelTopology();
  SentinelTopology(const SentinelTopology&) = delete;
  SentinelTopology& operator=(const SentinelTopology&) = delete;

  ProxiedReplication& replication() { return *replication_; }
  const std::string& master_name() const { return settings_.master_name; }
  // How clients reach the sentinels (for redis::discover_master).
  std::vector<redis::ConnectionOptions> sentinels() const;

  // The master as the sentinels report it now.
  Result<redis::Endpoint> current_master() const;

  // SIGKILL the master (it never comes back), drop whatever replication bytes
  // the proxy held, and wait until the sentinels name another master. If
  // their election has not promoted one within settings' election_window,
  // one sentinel is told SENTINEL FAILOVER.
  Result<redis::Endpoint> kill_master(std::chrono::milliseconds timeout = std::chrono::milliseconds{30'000});

 private:
  SentinelTopology() = default;
  Status wait_until_ready();
  std::string force_failover() const;

  SentinelSettings settings_;
  std::unique_ptr<ProxiedReplication> replication_;
  std::string config_dir_;
  ServerList sentinels_;
};

}  // namespace locklab::harness
