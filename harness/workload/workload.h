// The workload (Jepsen's "client" + "generator"): N clients, started together,
// each looping acquire (bounded wait) -> critical section -> release.
//
// The critical section is the seeds' counter demo: GET counter, hold, SET
// counter value+1 -- a read-modify-write that loses updates unless the lock
// really excludes. With a fencing token the read and write carry it and the
// resource refuses stale holders (counted as stale_writes_rejected).
//
// Clients are separate processes by default (fork) or threads; everything they
// observe goes into a SharedHistory the coordinator created before forking.
// Inside the component: one client's loop is client_loop.h's; how clients are
// started, isolated (process groups, cgroups), supervised and reaped is
// client_pools.cpp's; this header and workload.cpp are the entry.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lock.h"

#include "history/history.h"
#include "nemesis/nemesis.h"
#include "workload/section_oracle.h"

namespace locklab::harness {

enum class ClientMode { process, thread };

// Filled from RunOptions (options.h), the one source of the run's defaults: the
// values below are only "not set yet", never defaults a run relies on.
struct WorkloadConfig {
  std::string lock_name;             // for the progress line (a fleet: its spec)
  // Client i's lock, made in client i (its own process in process mode: an
  // adapter is then spawned in it, in its process group). The run's lock
  // description's make (workload/lock_catalog.h); a fleet's member for i.
  std::function<LockResult(const LockConfig&, int client)> make_lock;
  LockConfig lock;                   // key, ttl, retry, servers... (owner left empty: one per client)
  // Where client i reaches the lock servers instead of lock.servers (its own
  // proxies, so a fault can act on one client's links). Empty = lock.servers.
  std::function<std::vector<redis::ConnectionOptions>(int client)> client_servers;
  redis::ConnectionOptions counter;  // where the protected counter lives
  std::string counter_key = "locklab:counter";
  int clients = 0;
  ClientMode mode = ClientMode::process;
  std::optional<std::int64_t> ops;  // total acquire attempts across all clients; nullopt = run for `duration`
  std::chrono::milliseconds duration{0};
  std::chrono::milliseconds hold{0};
  std::chrono::milliseconds wait{0};  // bound of each try_acquire()
  std::chrono::milliseconds setup_timeout{15'000};
  std::chrono::milliseconds fault_allowance{0};  // added to the hard deadline: the longest a fault may stop a client
  bool progress = false;  // a progress line on stderr
  // The second oracle, beside the history: every critical section also tells
  // it its entry, its resource access and its exit (section_oracle.h); the
  // coordinator tells it which clients died. Null: none.
  std::shared_ptr<SectionOracles> section_oracles;
};

struct WorkloadOutcome {
  std::int64_t go_ns = 0;   // the barrier opened
  std::int64_t end_ns = 0;  // the last client left its loop
  int crashed_clients = 0;  // died at a step point or by a signal (a fault, not an error)
  int killed_clients = 0;   // did not finish in time; the coordinator killed them
  int failed_clients = 0;   // exited with an error or threw: its share of the run is missing (verdict error)
  std::vector<std::string> failures;  // process mode: "client N: <its last error>" per failed client
  std::vector<std::int64_t> crashed_ns;  // when the coordinator saw each crashed client exit (monotonic)
  // Crashed clients whose adapter exited mid-run, each "client N's adapter exited ...: the
  // service dies on <its stderr's error line>" (client_loop.cpp end_lock).
  std::vector<std::string> adapter_deaths;
  redis::Traffic thread_traffic;  // thread mode: this process's traffic during the run
  std::vector<pid_t> pids;
  // How the faults reach every process of a client (support/client_cgroup.h):
  // "cgroup2", "cgroup1-freezer", "process-group", or "none" (thread mode, or no client ran).
  std::string isolation_kind = "none";
  std::string isolation_why = "no client process ran";
};

// Runs the clients to completion. An Error means the run could not be
// measured (a client could not set up, fork failed); clients are reaped either way.
// `at_barrier` runs when every client is ready, just before the barrier opens
// (the caller's "before" snapshots belong there: client setup is not the run).
Result<WorkloadOutcome> run_workload(const WorkloadConfig& config, const SharedHistory& history,
                                            Nemesis& nemesis, NemesisContext& context,
                                            const std::function<void()>& at_barrier = {});

// The bound after which the coordinator gives up on the clients and kills them.
std::chrono::milliseconds hard_deadline(const WorkloadConfig& config);

}  // namespace locklab::harness
