// Redis Cluster support against a real 3-master cluster (harness/servers/redis_cluster.h):
// the slot function (the spec's test vectors and the server's own CLUSTER
// KEYSLOT), routing, MOVED and ASK redirections, the redirect bound, and every
// single-key generation in cluster mode without a CROSSSLOT error.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "redis/cluster_routing.h"
#include "redis/link.h"

#include "registry.h"

#include "servers/redis_cluster.h"

namespace locklab::testing {
namespace {

using namespace std::chrono_literals;
using redis::ClusterConnection;
using redis::Connection;
using redis::key_slot;

// ---------------------------------------------------------------------------
// The slot function, without a server.

TEST(ClusterSlots, Crc16MatchesTheSpecsTestVector) {
  // cluster-spec, "Keys distribution model": the XMODEM CRC16 of "123456789".
  EXPECT_EQ(redis::crc16_xmodem("123456789"), 0x31C3);
  EXPECT_EQ(redis::crc16_xmodem(""), 0);
}

TEST(ClusterSlots, HashTagRulesAreTheSpecs) {
  // The spec's own examples (cluster-spec, "Hash tags").
  EXPECT_EQ(redis::hash_tag("{user1000}.following"), "user1000");
  EXPECT_EQ(redis::hash_tag("foo{}{bar}"), "foo{}{bar}");   // empty tag: the whole key
  EXPECT_EQ(redis::hash_tag("foo{{bar}}zap"), "{bar");      // first '{', the next '}'
  EXPECT_EQ(redis::hash_tag("foo{bar}{zap}"), "bar");       // only the first tag counts
  EXPECT_EQ(redis::hash_tag("no-braces"), "no-braces");
  EXPECT_EQ(redis::hash_tag("open{only"), "open{only");
  EXPECT_EQ(key_slot("{user1000}.following"), key_slot("{user1000}.followers"));
  EXPECT_EQ(key_slot("foo"), 12182);  // the documentation's CLUSTER KEYSLOT example
}

TEST(ClusterSlots, SameSlotKeysShareTheSlot) {
  for (const std::string key : {"locklab:lock", "{orders}:lock", "orders{lock", "a{b}c"}) {
    EXPECT_EQ(key_slot(redis::same_slot_key(key, ":fence")), key_slot(key)) << key;
  }
  EXPECT_EQ(redis::same_slot_key("locklab:lock", ":fence"), "{locklab:lock}:fence");
  EXPECT_EQ(redis::same_slot_key("{orders}:lock", ":fence"), "{orders}:lock:fence");
}

TEST(ClusterSlots, RoutingKeyIsTheFirstKey) {
  EXPECT_EQ(redis::routing_key({"SET", "k", "v"}), "k");
  EXPECT_EQ(redis::routing_key({"EVALSHA", "sha", "2", "k1", "k2", "arg"}), "k1");
  EXPECT_EQ(redis::routing_key({"EVAL", "return 1", "0"}), std::nullopt);
  EXPECT_EQ(redis::routing_key({"WAIT", "1", "100"}), std::nullopt);
  EXPECT_EQ(redis::routing_key({"publish", "channel", "m"}), std::nullopt);
  EXPECT_EQ(redis::routing_key({"PING"}), std::nullopt);
}

TEST(ClusterSlots, RedirectsAreParsed) {
  const auto moved = redis::parse_redirect("MOVED 3999 127.0.0.1:6381");
  ASSERT_TRUE(moved);
  EXPECT_FALSE(moved->ask);
  EXPECT_EQ(moved->slot, 3999);
  EXPECT_EQ(moved->to.port, 6381);
  const auto ask = redis::parse_redirect("ASK 1 127.0.0.1:7000");
  ASSERT_TRUE(ask);
  EXPECT_TRUE(ask->ask);
  EXPECT_FALSE(redis::parse_redirect("ERR wrong number of arguments"));
  EXPECT_FALSE(redis::parse_redirect("MOVED 99999 127.0.0.1:1"));
}

// ---------------------------------------------------------------------------
// Against a real cluster: one per test process (ctest runs each TEST alone).

class ClusterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto started = harness::RedisCluster::start();
    ASSERT_TRUE(started) << started.error().message;
    cluster_ = std::move(started).value();
  }
  static void TearDownTestSuite() { cluster_.reset(); }

  void SetUp() override {
    ASSERT_TRUE(cluster_) << "no cluster";
    ASSERT_TRUE(cluster_->flush_all());
  }

  static harness::RedisCluster& cluster() { return *cluster_; }

  static Connection connect(const harness::RedisServer& node) {
    auto connection = Connection::connect(node.connection_options());
    EXPECT_TRUE(connection) << connection.error().message;
    return std::move(connection).value();
  }

  // The master owning `slot` by its index in cluster().masters(), from a fresh map.
  static std::size_t owner_index(int slot) {
    auto seed = connect(*cluster().masters().front());
    auto map = redis::read_slot_map(seed);
    EXPECT_TRUE(map) << map.error().message;
    for (const auto& range : *map)
      if (range.first <= slot && slot <= range.last)
        for (std::size_t i = 0; i < cluster().masters().size(); ++i)
          if (cluster().masters()[i]->endpoint().port == range.master.port) return i;
    ADD_FAILURE() << "no owner for slot " << slot;
    return 0;
  }

  // A key (with the given prefix) whose slot belongs to master `index`.
  static std::string key_on_master(std::size_t index, const std::string& prefix = "k") {
    for (int i = 0;; ++i) {
      std::string key = prefix + std::to_string(i);
      if (owner_index(key_slot(key)) == index) return key;
    }
  }

  static std::string node_id(const harness::RedisServer& node) {
    auto connection = connect(node);
    auto id = connection.command({"CLUSTER", "MYID"});
    EXPECT_TRUE(id && id->is_string());
    return std::string(id->text());
  }

 private:
  static inline std::unique_ptr<harness::RedisCluster> cluster_;
};

TEST_F(ClusterTest, EveryNodeIsOkAndTheSlotsAreSplitOverThreeMasters) {
  EXPECT_TRUE(cluster().wait_ready(1s));
  auto seed = connect(*cluster().masters().front());
  auto map = redis::read_slot_map(seed);
  ASSERT_TRUE(map) << map.error().message;
  ASSERT_EQ(map->size(), 3u);
  int covered = 0;
  for (const auto& range : *map) covered += range.last - range.first + 1;
  EXPECT_EQ(covered, redis::kClusterSlots);
}

TEST_F(ClusterTest, OurSlotFunctionAgreesWithTheServers) {
  auto seed = connect(*cluster().masters().front());
  for (const std::string key : {"123456789", "foo", "locklab:lock", "{orders}:lock", "foo{}{bar}", "foo{{bar}}zap",
                                "product:17", "{locklab:lock}:fence"}) {
    auto slot = seed.command({"CLUSTER", "KEYSLOT", key});
    ASSERT_TRUE(slot && slot->is_integer());
    EXPECT_EQ(slot->integer(), key_slot(key)) << key;
  }
}

TEST_F(ClusterTest, CommandsAreRoutedToTheMasterThatOwnsTheKey) {
  ClusterConnection routed(cluster().seed());
  for (std::size_t master = 0; master < cluster().masters().size(); ++master) {
    const auto key = key_on_master(master);
    auto set = routed.command({"SET", key, "v"});
    ASSERT_TRUE(set) << set.error().message;
    EXPECT_TRUE(set->is_status("OK")) << set->describe();
    auto owner = connect(*cluster().masters()[master]);
    auto got = owner.command({"GET", key});
    ASSERT_TRUE(got);
    EXPECT_EQ(got->string(), "v") << key << " lives on master " << master;
  }
  EXPECT_EQ(routed.redirects_followed(), 0u) << "a fresh slot map needs no redirection";
}

TEST_F(ClusterTest, MovedRefreshesTheSlotMapAndRetries) {
  ClusterConnection routed(cluster().seed());
  const auto key = key_on_master(1);
  const int slot = key_slot(key);
  ASSERT_TRUE(routed.command({"SET", key, "before"}));  // the map says: master 1
  ASSERT_TRUE(routed.command({"DEL", key}));
  // Hand the (empty) slot to master 2 on every node: master 1 now answers MOVED.
  const auto to = node_id(*cluster().masters()[2]);
  for (const auto& master : cluster().masters()) {
    auto connection = connect(*master);
    auto moved = connection.command({"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", to});
    ASSERT_TRUE(moved && moved->is_status("OK")) << (moved ? moved->describe() : moved.error().message);
  }
  auto set = routed.command({"SET", key, "after"});
  ASSERT_TRUE(set) << set.error().message;
  EXPECT_TRUE(set->is_status("OK")) << set->describe();
  EXPECT_GE(routed.redirects_followed(), 1u) << "the stale map was corrected by MOVED";
  auto new_owner = connect(*cluster().masters()[2]);
  EXPECT_EQ(new_owner.command({"GET", key})->string(), "after");
}

TEST_F(ClusterTest, AskSendsAskingAndRetriesOnTheImportingNode) {
  ClusterConnection routed(cluster().seed());
  const auto key = key_on_master(0);
  const int slot = key_slot(key);
  const auto source = node_id(*cluster().masters()[0]);
  const auto target = node_id(*cluster().masters()[1]);
  auto on_target = connect(*cluster().masters()[1]);
  auto on_source = connect(*cluster().masters()[0]);
  ASSERT_TRUE(on_target.command({"CLUSTER", "SETSLOT", std::to_string(slot), "IMPORTING", source})->is_status("OK"));
  ASSERT_TRUE(on_source.command({"CLUSTER", "SETSLOT", std::to_string(slot), "MIGRATING", target})->is_status("OK"));
  // The key is not on the source: mid-migration it answers ASK.
  auto set = routed.command({"SET", key, "v"});
  ASSERT_TRUE(set) << set.error().message;
  EXPECT_TRUE(set->is_status("OK")) << set->describe();
  EXPECT_EQ(routed.redirects_followed(), 1u);
  ASSERT_TRUE(on_target.command({"ASKING"}));
  EXPECT_EQ(on_target.command({"GET", key})->string(), "v") << "written on the importing node";
  EXPECT_EQ(on_source.command({"EXISTS", key})->integer(), 0);
  for (auto* node : {&on_source, &on_target}) ASSERT_TRUE(node->command({"CLUSTER", "SETSLOT", std::to_string(slot), "STABLE"}));
}

TEST_F(ClusterTest, RedirectionsAreBounded) {
  // Source says ASK target; target is not importing, so it says MOVED source; and so on.
  ClusterConnection routed(cluster().seed(), 5);
  const auto key = key_on_master(0);
  const int slot = key_slot(key);
  auto on_source = connect(*cluster().masters()[0]);
  ASSERT_TRUE(on_source.command({"CLUSTER", "SETSLOT", std::to_string(slot), "MIGRATING",
                                 node_id(*cluster().masters()[1])})->is_status("OK"));
  auto set = routed.command({"SET", key, "v"});
  ASSERT_FALSE(set) << "a redirection loop must end: " << set->describe();
  EXPECT_NE(set.error().message.find("redirected more than 5"), std::string::npos) << set.error().message;
  EXPECT_EQ(routed.redirects_followed(), 6u);
  ASSERT_TRUE(on_source.command({"CLUSTER", "SETSLOT", std::to_string(slot), "STABLE"}));
}

TEST_F(ClusterTest, LinkRoutesScriptsByTheirFirstKey) {
  redis::Link link(cluster().seed());
  redis::Script script("redis.call('SET', KEYS[1], ARGV[1]); redis.call('INCR', KEYS[2]); return 1");
  for (std::size_t master = 0; master < cluster().masters().size(); ++master) {
    const auto key = key_on_master(master, "lock:");
    auto reply = link.run(script, {key, redis::same_slot_key(key, ":fence")}, {"v"});
    ASSERT_TRUE(reply) << reply.error().message;
    EXPECT_EQ(reply->integer(), 1);
  }
  // Keys in two slots: the server refuses the script, and we say so.
  auto crossed = link.run(script, {key_on_master(0), key_on_master(1)}, {"v"});
  ASSERT_FALSE(crossed);
  EXPECT_NE(crossed.error().message.find("CROSSSLOT"), std::string::npos) << crossed.error().message;
}

// Every generation that locks on one Redis, in cluster mode, with keys that
// land on each master and keys with and without hash tags: no CROSSSLOT (every
// script's keys share the lock key's slot) and the lock works.
TEST_F(ClusterTest, EverySingleKeyGenerationWorksWithoutCrossSlot) {
  for (const auto& generation : generations()) {
    if (!generation.capabilities.uses_redis || generation.capabilities.multi_node) continue;
    // A generation's own keys: generations store different types under a key.
    const auto& name = generation.name;
    std::vector<std::string> keys{name + ":lock", "{" + name + "}:lock", name + "{lock"};
    for (std::size_t master = 0; master < cluster().masters().size(); ++master)
      keys.push_back(key_on_master(master, name + ":product:"));
    for (const auto& key : keys) {
      LockConfig config;
      config.key = key;
      config.ttl = 5s;
      config.retry_interval = 5ms;
      config.servers = {cluster().seed()};
      auto made = make_lock(generation.name, config);
      ASSERT_TRUE(made) << generation.name << ": " << made.error().message;
      auto& lock = **made;
      const Acquire acquired = lock.try_acquire(0ms);
      EXPECT_EQ(acquired, Acquire::acquired) << generation.name << " " << key << ": " << lock.last_error();
      EXPECT_EQ(lock.last_error().find("CROSSSLOT"), std::string::npos) << generation.name << " " << key;
      const Release released = lock.release();
      EXPECT_EQ(released, Release::released) << generation.name << " " << key << ": " << lock.last_error();
      EXPECT_EQ(lock.last_error().find("CROSSSLOT"), std::string::npos) << generation.name << " " << key;
    }
  }
}

// A master that dies makes the next command reload the slot map: here its slot
// is handed to a survivor, and the command after the failed one lands there.
// (Its own cluster: a dead master would spoil the shared one.)
TEST(ClusterNodeLoss, AFailedNodeMakesTheNextCommandReloadTheSlotMap) {
  harness::ClusterOptions options;
  options.server.extra_args = {"--cluster-require-full-coverage", "no"};  // the survivors keep serving
  auto started = harness::RedisCluster::start(options);
  ASSERT_TRUE(started) << started.error().message;
  auto& cluster = **started;
  auto admin = [&](std::size_t master) {
    auto connection = Connection::connect(cluster.masters()[master]->connection_options());
    EXPECT_TRUE(connection) << connection.error().message;
    return std::move(connection).value();
  };
  // A key owned by master 1 (the seed is master 0).
  auto seed = admin(0);
  auto map = redis::read_slot_map(seed);
  ASSERT_TRUE(map);
  std::string key;
  for (int i = 0; key.empty(); ++i) {
    const auto candidate = "k" + std::to_string(i);
    for (const auto& range : *map)
      if (range.first <= key_slot(candidate) && key_slot(candidate) <= range.last &&
          range.master.port == cluster.masters()[1]->endpoint().port)
        key = candidate;
  }
  ClusterConnection routed(cluster.seed());
  ASSERT_TRUE(routed.command({"SET", key, "1"}));

  cluster.masters()[1]->crash();
  const auto survivor = admin(2).command({"CLUSTER", "MYID"});
  ASSERT_TRUE(survivor && survivor->is_string());
  for (std::size_t master : {0u, 2u}) {
    auto handed = admin(master).command({"CLUSTER", "SETSLOT", std::to_string(key_slot(key)), "NODE",
                                         std::string(survivor->text())});
    ASSERT_TRUE(handed && handed->is_status("OK")) << (handed ? handed->describe() : handed.error().message);
  }
  EXPECT_FALSE(routed.command({"SET", key, "2"})) << "the dead master cannot answer";
  auto after = routed.command({"SET", key, "3"});
  ASSERT_TRUE(after) << "the map was reloaded: " << after.error().message;
  EXPECT_TRUE(after->is_status("OK")) << after->describe();
  EXPECT_EQ(admin(2).command({"GET", key})->string(), "3");
}

// The optional replicas: one per master, each following its own master.
TEST(ClusterWithReplicas, EveryMasterHasItsReplicaAndTheClusterIsOk) {
  harness::ClusterOptions options;
  options.replicas_per_master = 1;
  auto started = harness::RedisCluster::start(options);
  ASSERT_TRUE(started) << started.error().message;
  auto& cluster = **started;
  EXPECT_EQ(cluster.size(), 6u);
  for (std::size_t master = 0; master < cluster.masters().size(); ++master) {
    ASSERT_EQ(cluster.replicas_of(master).size(), 1u);
    auto replica = Connection::connect(cluster.replicas_of(master).front()->connection_options());
    ASSERT_TRUE(replica) << replica.error().message;
    auto info = replica->command({"INFO", "replication"});
    ASSERT_TRUE(info && info->is_string());
    const auto port = std::to_string(cluster.masters()[master]->endpoint().port);
    EXPECT_NE(info->text().find("role:slave"), std::string_view::npos) << info->text();
    EXPECT_NE(info->text().find("master_port:" + port), std::string_view::npos) << info->text();
  }
  // A lock through the seed works with replicas present (they own no slots).
  LockConfig config;
  config.key = "locklab:lock";
  config.servers = {cluster.seed()};
  auto lock = make_lock("lua-safe-delete", config);
  ASSERT_TRUE(lock);
  EXPECT_EQ((*lock)->try_acquire(0ms), Acquire::acquired) << (*lock)->last_error();
  EXPECT_EQ((*lock)->release(), Release::released) << (*lock)->last_error();
}

}  // namespace
}  // namespace locklab::testing
