// The lock servers as a witness (issue #25, part 2; docs/harness.md, "The
// server as witness"): whether a lease was lost under its holder comes from
// what the servers saw, not from what the lock said. Through the real binary
// on servers the run starts: a library whose release always answers
// `released` (simple-redis-mutex; needs harness/adapters/kits/js/install), a user's
// adapter written here that does the same, a quorum lock, a generation that
// keeps its lease, and a run on --redis, which the witness does not watch.
// The join itself is checked on made-up logs first (no Redis).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixtures/run_documents.h"
#include "run/witness_join.h"
#include "servers/redis_server.h"

namespace locklab::harness {
namespace {

using nlohmann::json;
using testing::run_locklab;

constexpr std::int64_t kMs = 1'000'000;

// ---- the join, on made-up logs ---------------------------------------------------

// Client 0 inside [100 ms, 1000 ms); a read at 110-111 ms saw the key with
// `pttl` ms left; then `events` (name, stamp in ms) in server order.
struct MadeUp {
  CsRecord section;
  FeedLog log;
  explicit MadeUp(std::int64_t pttl) {
    section.client = 0;
    section.enter_ns = 100 * kMs;
    section.exit_ns = 1000 * kMs;
    section.stage = CsStage::closed;
    log.ended_cleanly = true;
    log.reads.push_back(KeyRead{0, "k", 110 * kMs, 111 * kMs, pttl, "string", {"token"}});
    log.items.push_back(FeedItem{112 * kMs, "", "", 0});
  }
  MadeUp& then(const std::string& event, std::int64_t at_ms) {
    log.items.push_back(FeedItem{at_ms * kMs, "k", event, -1});
    return *this;
  }
  NodeSaw saw() const { return judge_node(log, marker_positions(log), section, "k"); }
};

TEST(WitnessJoin, AnExpiryWhileInsideIsALostLease) {
  EXPECT_EQ(MadeUp(290).then("expired", 450).saw(), NodeSaw::lost);
}

TEST(WitnessJoin, APttlThatRanOutBeforeTheHolderLeftIsALostLeaseEvenWithoutAnEvent) {
  EXPECT_EQ(MadeUp(290).saw(), NodeSaw::lost) << "the stream held to the end and nothing renewed the lease";
  EXPECT_EQ(MadeUp(290).then("expired", 1100).saw(), NodeSaw::lost) << "the expiry notice trailed the exit";
}

TEST(WitnessJoin, ARenewalKeepsTheLease) {
  EXPECT_EQ(MadeUp(290).then("expire", 200).then("del", 1005).saw(), NodeSaw::held);
}

TEST(WitnessJoin, TheHoldersOwnReleaseAfterItLeftIsNotALoss) {
  EXPECT_EQ(MadeUp(5000).then("del", 1001).saw(), NodeSaw::held);
}

TEST(WitnessJoin, ABlindFeedCannotTellAndTheLocksWordStands) {
  MadeUp made(290);
  made.log.ended_cleanly = false;
  EXPECT_EQ(made.saw(), NodeSaw::unknown);
  const auto found = witness_sections({made.log}, {made.section}, [](int) { return std::string("k"); }, 1);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_FALSE(found[0].judged);
}

TEST(WitnessJoin, AQuorumLockLosesItsLeaseWithAMajorityOfItsNodes) {
  MadeUp lost(290), kept(5000);
  auto key = [](int) { return std::string("k"); };
  auto one_of_three = witness_sections({lost.log, kept.log, kept.log}, {lost.section}, key, 2);
  EXPECT_TRUE(one_of_three[0].judged);
  EXPECT_FALSE(one_of_three[0].lost) << "two of three nodes still hold the key";
  auto two_of_three = witness_sections({lost.log, lost.log, kept.log}, {lost.section}, key, 2);
  EXPECT_TRUE(two_of_three[0].lost);
}

// ---- runs through the binary ------------------------------------------------------

// A user's adapter (docs/adapters.md): SET NX PX with a token, a Lua
// compare-and-delete release, but it answers `released` whatever the script
// said, like a library that discards the result.
constexpr const char* kAlwaysReleased = R"py(
import json, sys, uuid
import redis
DELETE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
server, key, token = None, "", ""
for line in sys.stdin:
    m = json.loads(line)
    kind = m["type"]
    if kind == "init":
        server = redis.Redis(host=m["servers"][0]["host"], port=m["servers"][0]["port"])
        key = m["key"]
        reply = {"type": "init_ok", "library": "always-released", "version": "0", "language": "python",
                 "capabilities": {"expires": True, "owner_checked_release": True}, "key": key}
    elif kind == "acquire":
        token = uuid.uuid4().hex
        got = server.set(key, token, nx=True, px=m["ttl_ms"])
        reply = {"type": "acquire_ok", "outcome": "acquired" if got else "timed_out"}
    elif kind == "release":
        server.eval(DELETE, 1, key, token)  # its answer, 0 or 1, is dropped
        reply = {"type": "release_ok", "outcome": "released"}
    else:
        reply = {"type": "noop_ok"}
    print(json.dumps({"id": m["id"], **reply}), flush=True)
)py";

// Every section outlives its lease and nobody else tries: safe, and exposed
// only if the servers say the lease was lost. No fault: a slow-holder fault
// with one client is refused now (no contender: it could not bite).
constexpr const char* kSlowHolder = "--clients 1 --ops 2 --ttl 300 --hold 900";

class Witness : public testing::RunDocumentsTest {
 protected:
  Witness() : RunDocumentsTest("locklab-witness") {}

  json run(const std::string& args) {
    const auto outcome = run_locklab("run " + args + " --json " + path("run.json"));
    EXPECT_EQ(outcome.exit_code, 0) << outcome.out << outcome.err;
    return result("run.json");
  }

  static void expect_exposed(const json& d) {
    EXPECT_EQ(d["verdict"], "safe") << d["verdict_reasons"];
    EXPECT_TRUE(d["exposed"].get<bool>()) << d["witness"];
    EXPECT_EQ(d["safety"]["leases_lost_inside"], 2) << d["witness"];
    EXPECT_EQ(d["witness"]["watched"], true) << d["witness"];
    EXPECT_EQ(d["witness"]["leases_lost"], 2) << d["witness"];
  }
};

bool python_redis_installed() { return std::system("/usr/bin/python3 -c 'import redis' >/dev/null 2>&1") == 0; }

TEST_F(Witness, SimpleRedisMutexsSlowHolderIsExposedThoughItsReleaseSaysReleased) {
  if (!std::filesystem::is_directory(std::string(LOCKLAB_PEERS_DIR) + "/kits/js/node_modules"))
    GTEST_SKIP() << "harness/adapters/kits/js/node_modules is missing: run harness/adapters/kits/js/install (simple-redis-mutex)";
  const json d = run(std::string("--lock ext:simple-redis-mutex ") + kSlowHolder);
  expect_exposed(d);
  EXPECT_EQ(d["witness"]["lock_said_lost"], 0) << "the library's release always answers released";
}

TEST_F(Witness, AUserAdapterThatAlwaysAnswersReleasedIsExposed) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  const std::string adapter = path("always_released.py");
  std::ofstream(adapter) << kAlwaysReleased;
  const json d = run("--lock ext:always-released --adapter '/usr/bin/python3 " + adapter + "' " + kSlowHolder);
  expect_exposed(d);
}

// Redlock's values are opaque: the witness reads the key on each of the five
// nodes inside the section, and the lease is lost when fewer than three kept it.
TEST_F(Witness, AQuorumLockLosesItsLeaseWhenAMajorityOfItsNodesLostTheKey) {
  const json d = run(std::string("--lock redlock ") + kSlowHolder);
  expect_exposed(d);
  EXPECT_EQ(d["witness"]["quorum"], 3) << d["witness"];
  EXPECT_EQ(d["witness"]["nodes"].size(), 5u) << d["witness"];
}

TEST_F(Witness, AWatchdogThatKeepsItsLeaseIsNotExposed) {
  const json d = run(std::string("--lock reentrant-watchdog ") + kSlowHolder);
  EXPECT_EQ(d["verdict"], "safe") << d["verdict_reasons"];
  EXPECT_FALSE(d["exposed"].get<bool>()) << d["witness"];
  EXPECT_EQ(d["safety"]["leases_lost_inside"], 0) << d["witness"];
  EXPECT_EQ(d["witness"]["watched"], true);
  EXPECT_EQ(d["witness"]["sections_judged"], 2) << d["witness"];
  EXPECT_GT(d["witness"]["events"].get<int>(), 2) << "its renewals are events on the key";
}

TEST_F(Witness, ServersTheRunDoesNotOwnAreNotWatched) {
  auto server = RedisServer::start();
  ASSERT_TRUE(server) << server.error().message;
  const json d = run("--lock lua-safe-delete --clients 1 --ops 2 --redis " + (*server)->endpoint().to_string());
  EXPECT_EQ(d["witness"]["watched"], false) << d["witness"];
  EXPECT_NE(d["witness"]["why"].get<std::string>().find("--redis"), std::string::npos) << d["witness"];
}

}  // namespace
}  // namespace locklab::harness
