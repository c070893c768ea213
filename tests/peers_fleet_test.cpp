// Mixed fleets (issue 18 §5, generalising issue 11 §7's redis-py fleet test):
// `locklab run --fleet LOCK:N,...` puts different locks' clients on one key and
// one counter, and the checker judges them as it judges any run.
//
// Pairs that can share a key use the same key, the same kind of value and a
// release that deletes only its own value: lua-safe-delete (SET key token NX PX
// ttl + a Lua compare-and-delete) and redis-py's `Lock` (the same, through its
// adapter) exclude each other, and the counter equals the combined
// acquisitions exactly. Pairs that cannot: a hash lock (reentrant-watchdog)
// beside a string lock (set-nx-px-token) fails with WRONGTYPE (error, the reply
// in the document); a majority lock (redlock, 5 nodes) beside a one-node lock
// (lua-safe-delete, the first node) admits both at once (violation).
//
// The redis-py fleet needs Debian's python3-redis (scripts/setup installs it);
// skipped with a message without it. ctest label: peers.
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/locklab_binary.h"
#include "run/run_document.h"

namespace locklab::harness {
namespace {

using nlohmann::json;
using testing::run_locklab;

bool python_redis_installed() { return std::system("/usr/bin/python3 -c 'import redis' >/dev/null 2>&1") == 0; }

class PeersFleetTest : public ::testing::Test {
 protected:
  // `locklab run ARGS --json FILE`: its document, after checking the exit code.
  json fleet_run(const std::string& args, int want_exit) {
    const auto run = run_locklab("run " + args + " --json " + scratch_.path("fleet.json"));
    EXPECT_EQ(run.exit_code, want_exit) << run.out << run.err;
    auto loaded = load_run(scratch_.path("fleet.json"));
    EXPECT_TRUE(loaded) << (loaded ? "" : loaded.error().message);
    return loaded ? *loaded : json::object();
  }

  testing::ScratchDir scratch_{"locklab-fleet"};
};

// The member of the document's `fleet` block that runs `lock`.
json member(const json& d, const std::string& lock) {
  for (const auto& m : d.value("fleet", json::array()))
    if (m["lock"] == lock) return m;
  ADD_FAILURE() << lock << " is not in the fleet block: " << d.value("fleet", json());
  return json::object();
}

TEST_F(PeersFleetTest, LocklabAndRedisPyShareOneKeyAndTheCountIsExact) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  const json d = fleet_run("--fleet lua-safe-delete:3,ext:redis-py:3 --duration 1.5", 0);
  EXPECT_EQ(d["verdict"], "safe") << d["verdict_reasons"];
  EXPECT_EQ(d["lock"], "lua-safe-delete:3,ext:redis-py:3");
  EXPECT_EQ(d["config"]["clients"], 6);
  const json locklab = member(d, "lua-safe-delete"), python = member(d, "ext:redis-py");
  EXPECT_EQ(locklab["clients"], json({0, 2}));
  EXPECT_EQ(python["clients"], json({3, 5}));
  EXPECT_GT(locklab["acquired"].get<long long>(), 0);
  EXPECT_GT(python["acquired"].get<long long>(), 0) << "both sides must really have contended";
  EXPECT_EQ(locklab["errors"].get<long long>() + python["errors"].get<long long>(), 0);
  EXPECT_EQ(d["counter"]["actual"].get<long long>(),
            locklab["acquired"].get<long long>() + python["acquired"].get<long long>())
      << "every section of either lock counted exactly once";
  EXPECT_EQ(d["counter"]["expected"], d["counter"]["actual"]);
  EXPECT_EQ(d["safety"]["overlaps"], 0);
  EXPECT_TRUE(d["adapters"].contains("ext:redis-py")) << "the adapter's round trip is recorded for the fleet too";
}

// Three string holders and one hash lock: the hash lock's script meets a string
// key and Redis refuses it (WRONGTYPE), a reply the run shows.
TEST_F(PeersFleetTest, AHashLockAndAStringLockCannotShareAKey) {
  const json d = fleet_run("--fleet set-nx-px-token:3,reentrant-watchdog:1 --ops 200", 1);
  ASSERT_EQ(d["verdict"], "error") << d["verdict_reasons"];
  const std::string reason = d["verdict_reasons"][0];
  EXPECT_EQ(reason.rfind("fleet: reentrant-watchdog failed ", 0), 0u) << reason;
  EXPECT_NE(reason.find("WRONGTYPE"), std::string::npos) << reason;
  EXPECT_NE(member(d, "reentrant-watchdog")["last_error"].get<std::string>().find("WRONGTYPE"), std::string::npos);
  EXPECT_EQ(member(d, "set-nx-px-token")["errors"], 0) << "SET NX on a hash just finds the key taken";
  EXPECT_EQ(d["counter"]["expected"], d["counter"]["actual"]) << "they still excluded each other";
}

// Redlock takes 3 of 5 nodes; lua-safe-delete holds only the first: both get in.
TEST_F(PeersFleetTest, AMajorityLockAndAOneNodeLockCannotShareAKey) {
  const json d = fleet_run("--fleet lua-safe-delete:2,redlock:2 --ops 200", 0);
  ASSERT_EQ(d["verdict"], "violation") << d["verdict_reasons"];
  EXPECT_GT(d["safety"]["overlaps"].get<long long>(), 0);
  EXPECT_EQ(d["generation"]["multi_node"], true) << "the run laid out the majority lock's nodes";
  EXPECT_NE(d["verdict_reasons"].dump().find("fleet: redlock takes a majority of the lock servers, lua-safe-delete "
                                             "only the first"),
            std::string::npos)
      << d["verdict_reasons"];
}

TEST_F(PeersFleetTest, ABadFleetIsAUsageErrorOnOneLine) {
  for (const auto& [args, line] : std::initializer_list<std::pair<const char*, const char*>>{
           {"--fleet lua-safe-delete", "--fleet: 'lua-safe-delete' is not LOCK:N"},
           {"--fleet lua-safe-delete:0", "--fleet: 'lua-safe-delete:0': N must be a number of clients >= 1"},
           {"--fleet setnx:1,setnx:2", "--fleet: setnx appears twice"},
           {"--fleet no-such-lock:2", "--fleet: unknown lock 'no-such-lock' (see: locklab list)"},
           {"--fleet setnx:200,redlock:100", "--fleet: 300 clients in all; must be between 1 and 256"},
           {"--fleet setnx:2 --clients 3", "--fleet excludes --clients"},
           {"--fleet setnx:2 --lock redlock", "--lock excludes --fleet"},
           {"--fleet lua-safe-delete:2,ext:redis-py:2 --mode thread",
            "--mode thread: ext:redis-py starts an adapter process in each client; use --mode process"},
       }) {
    const auto run = run_locklab(std::string("run ") + args + " --ops 10");
    EXPECT_EQ(run.exit_code, 2) << args << ": " << run.out << run.err;
    EXPECT_EQ(run.err.rfind(std::string("locklab: ") + line, 0), 0u) << args << ": " << run.err;
    EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << args << ": one line: " << run.err;
  }
}

}  // namespace
}  // namespace locklab::harness
