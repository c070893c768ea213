// Redis Cluster failover, for real (issue 12 item 4, the cluster variant): a
// 3-master cluster with a replica each, the replication stream of the lock
// key's master held in a TcpProxy the master announces as its port. Client A
// acquires, the replica takes the slot with CLUSTER FAILOVER FORCE, the old
// master is demoted and resyncs in full, client B acquires the same lock: two
// holders, and the checker says so. The WAIT guard refuses A instead.
#include <sys/wait.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

#include "redis/cluster_routing.h"

#include "fixtures/failover_expectations.h"
#include "history/history.h"
#include "nemesis/bite.h"
#include "nemesis/fault_spec.h"
#include "nemesis/nemesis.h"
#include "nemesis/node_faults.h"
#include "support/conditions.h"
#include "trials/cluster_trial.h"

#ifndef LOCKLAB_BINARY
#error "LOCKLAB_BINARY must name the built locklab executable"
#endif

namespace locklab::testing {
namespace {

using namespace std::chrono_literals;

TEST(ClusterFailoverTopology, OnlyTheReplicationLinkIsHeldClientsPassThroughTheProxy) {
  auto started = harness::ClusterFailoverTopology::start();
  ASSERT_TRUE(started) << started.error().message;
  auto& topology = **started;
  const auto proxy_port = topology.link().endpoint().port;

  // Clients find the key's master at the port it announces: the proxy's.
  redis::ClusterConnection client(topology.seed());
  const std::string key = "locklab:failover";
  ASSERT_TRUE(client.refresh_slot_map());
  const int slot = redis::key_slot(key);
  int owner_port = 0;
  for (const auto& range : client.slot_map())
    if (range.first <= slot && slot <= range.last) owner_port = range.master.port;
  EXPECT_EQ(owner_port, proxy_port);

  ASSERT_TRUE(topology.hold_replication());
  auto set = client.command({"SET", key, "a"});
  ASSERT_TRUE(set) << "a client connecting after the hold passes: " << set.error().message;
  EXPECT_TRUE(set->is_status("OK")) << set->describe();
  EXPECT_TRUE(harness::wait_until([&] { return topology.held_bytes() > 0; }, 5s))
      << "the SET waits in the proxy on its way to the replica";

  auto promoted = topology.fail_over();
  ASSERT_TRUE(promoted) << promoted.error().message;
  EXPECT_EQ(promoted->to_string(), topology.replica().endpoint().to_string());
  ASSERT_TRUE(topology.wait_old_master_resynced());
  auto after = client.command({"GET", key});
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_TRUE(after->is_nil()) << "the new master never got the SET: " << after->describe();
}

// Issue 27 item 3's trap: a client whose pool was open through the master's
// proxy before the hold (Redisson connects at create()) keeps flowing; only
// the connection that sent REPLCONF/PSYNC is held, so the key is on the master
// and not on its replica.
TEST(ClusterFailoverTopology, HoldsOnlyTheReplicationLinkNotAPoolOpenBeforeIt) {
  auto started = harness::ClusterFailoverTopology::start();
  ASSERT_TRUE(started) << started.error().message;
  auto& topology = **started;
  redis::ClusterConnection pooled(topology.seed());
  const std::string key = "locklab:failover";
  auto warm = pooled.command({"SET", key, "before"});  // opens its connection to the key's master, through the proxy
  ASSERT_TRUE(warm && warm->is_status("OK")) << (warm ? warm->describe() : warm.error().message);
  ASSERT_TRUE(harness::wait_until([&] { return topology.link().open_connections() >= 2; }, 5s))
      << "the client's connection is open through the proxy beside the replication link";

  ASSERT_TRUE(topology.hold_replication());
  auto set = pooled.command({"SET", key, "held"});
  ASSERT_TRUE(set) << "the pooled connection still flows: " << set.error().message;
  EXPECT_TRUE(set->is_status("OK")) << set->describe();
  auto read = pooled.command({"GET", key});
  ASSERT_TRUE(read && read->is_string()) << (read ? read->describe() : read.error().message);
  EXPECT_EQ(read->text(), "held");
  EXPECT_TRUE(harness::wait_until([&] { return topology.held_bytes() > 0; }, 5s)) << "the SET waits in the proxy";

  // On the replica itself (READONLY: it serves its master's slots): the old value.
  auto replica = redis::Connection::connect(topology.replica().connection_options());
  ASSERT_TRUE(replica) << replica.error().message;
  ASSERT_TRUE(replica->command({"READONLY"}));
  auto on_replica = replica->command({"GET", key});
  ASSERT_TRUE(on_replica && on_replica->is_string()) << (on_replica ? on_replica->describe() : on_replica.error().message);
  EXPECT_EQ(on_replica->text(), "before") << "the held write did not reach the replica";

  ASSERT_TRUE(topology.resume_replication());
  EXPECT_TRUE(harness::wait_until(
      [&] {
        auto now = replica->command({"GET", key});
        return now && now->is_string() && now->text() == "held";
      },
      5s))
      << "resumed, the held write reaches the replica";
}

// A started cluster whose key's master has its replication held, and a
// connection straight to that master (nullptr/nullopt, after a failed
// expectation, when either could not be had).
std::pair<std::unique_ptr<harness::ClusterFailoverTopology>, std::optional<redis::Connection>>
started_with_replication_held() {
  auto started = harness::ClusterFailoverTopology::start();
  EXPECT_TRUE(started) << started.error().message;
  if (!started) return {};
  auto old_master = redis::Connection::connect((*started)->master().connection_options());
  EXPECT_TRUE(old_master) << old_master.error().message;
  const auto held = (*started)->hold_replication();
  EXPECT_TRUE(held) << (held ? "" : held.error().message);
  if (!old_master || !held) return {};
  return {std::move(*started), std::move(*old_master)};
}

// The old master grants nothing once its replica took over: a write sent to
// it right after the FORCE (before it learns the new epoch, while its replica
// is already promoted) waits in the pause and is answered MOVED, never OK.
// Without the pause it is taken there, beside the new master (Redisson 3.18.1's
// second holder while the slot moves, docs/peers.md): the next test.
TEST(ClusterFailoverTopology, TheOldMasterTakesNoWriteWhileTheSlotMoves) {
  auto [topology, old_master] = started_with_replication_held();
  ASSERT_TRUE(topology && old_master);
  const std::string key = "locklab:failover";

  bool sent = false;
  auto promoted = topology->fail_over(15s, harness::ClusterFailoverTopology::OldMasterWrites::paused,
                                     [&] { sent = static_cast<bool>(old_master->send({"SET", key, "late"})); });
  ASSERT_TRUE(promoted) << promoted.error().message;
  ASSERT_TRUE(sent);
  auto reply = old_master->read_until(std::chrono::steady_clock::now() + 5s);
  ASSERT_TRUE(reply) << "the paused write is answered once the old master is a replica: " << reply.error().message;
  EXPECT_TRUE(reply->is_error() && reply->text().starts_with("MOVED")) << reply->describe();
  auto after = old_master->command({"SET", key + ":after", "x"});
  ASSERT_TRUE(after) << "the pause ended with the failover: " << after.error().message;
  EXPECT_TRUE(after->is_error()) << "a replica redirects writes: " << after->describe();
}

// The window the pause closes: left open, the old master takes a write sent
// right after the FORCE (it learns the new epoch only once the other masters
// voted and gossiped it), and the write is lost with its resync.
TEST(ClusterFailoverTopology, LeftOpenTheOldMasterTakesAWriteWhileTheSlotMoves) {
  auto [topology, old_master] = started_with_replication_held();
  ASSERT_TRUE(topology && old_master);
  const std::string key = "locklab:failover";

  std::optional<Result<redis::Reply>> reply;
  auto promoted = topology->fail_over(15s, harness::ClusterFailoverTopology::OldMasterWrites::open,
                                     [&] { reply = old_master->command({"SET", key, "late"}); });
  ASSERT_TRUE(promoted) << promoted.error().message;
  ASSERT_TRUE(reply && *reply) << "the old master answers at once";
  // The election takes the other masters' votes and a round of gossip; a write stalled that long
  // on a loaded machine finds the old master a replica already, and says nothing of the window.
  if ((*reply)->is_error() && (*reply)->text().starts_with("MOVED"))
    GTEST_SKIP() << "the write came after the old master learned the new epoch: " << (*reply)->describe();
  EXPECT_TRUE((*reply)->is_status("OK")) << "taken while the slot moves: " << (*reply)->describe();
}

TEST(ClusterFailover, UnguardedLockIsGrantedTwiceAcrossTheFailover) {
  harness::ClusterFailoverTrial trial;
  auto outcome = harness::run_cluster_failover_trial(trial);
  ASSERT_TRUE(outcome) << outcome.error().message;
  expect_double_grant(*outcome);
}

TEST(ClusterFailover, WaitGuardRefusesTheLockTheReplicaNeverGot) {
  harness::ClusterFailoverTrial trial;
  trial.wait_replicas = 1;
  auto outcome = harness::run_cluster_failover_trial(trial);
  ASSERT_TRUE(outcome) << outcome.error().message;
  expect_guard_refused(*outcome);
  EXPECT_GT(outcome->held_bytes, 0u);
  // The demoted master now replicates from the new one and acknowledges B's lock.
  EXPECT_EQ(outcome->second_acquire, "acquired") << outcome->second_error;
}

// ---- the failover fault's reading of the key (issue 27: the promoted master "had the key") ----

// A refused acquire (Redisson 3.18.1: the lock script ran, WAIT counted no
// replica) left the lock's hash on the master only; the fault fails the master
// over without a holder. Meanwhile a client writes the hash on the promoted
// replica the moment it is master: the same field and count, so the same DUMP
// (Redisson's field is the client's id and thread, the same on a re-take).
class FailoverReading : public ::testing::Test {
 protected:
  static constexpr const char* kKey = "locklab:failover";  // the topology's key: its master is the proxied one
  static constexpr const char* kField = "client-0-uuid:1";

  void SetUp() override {
    auto started = harness::ClusterFailoverTopology::start();
    ASSERT_TRUE(started) << started.error().message;
    topology_ = std::move(started).value();
    std::string why;
    auto history = harness::SharedHistory::create(3, 64, &why);
    ASSERT_TRUE(history) << why;
    history_.emplace(std::move(*history));
    context_.endpoints = {topology_->seed()};
    context_.key = kKey;
    context_.ttl = 2000ms;
    context_.history = &*history_;
    context_.cluster_failover = topology_.get();
    context_.started = std::chrono::steady_clock::now();
    go_ns_ = harness::monotonic_ns();
    harness::FaultEnv env;
    env.clients = 3;
    env.ttl_ms = 2000;
    env.lock = "redisson-like";
    env.capabilities.uses_redis = true;
    auto spec = harness::parse_fault_spec("failover:after=acquire");
    ASSERT_TRUE(spec) << spec.error().message;
    auto fault = harness::make_failover_fault(*spec, env);
    ASSERT_TRUE(fault) << fault.error().message;
    fault_ = std::move(fault).value();
    fault_->before_run(context_);  // holds the replication link
  }

  // The refused acquire: the hash on the master, an error in the history.
  std::string orphan_on_master() {
    redis::ClusterConnection client(topology_->seed());
    auto set = client.command({"HSET", kKey, kField, "1"});
    EXPECT_TRUE(set && set->is_integer()) << (set ? set->describe() : set.error().message);
    auto dump = client.command({"DUMP", kKey});
    EXPECT_TRUE(dump && dump->is_string()) << (dump ? dump->describe() : dump.error().message);
    history_->slot(0).errors.fetch_add(1);
    return dump && dump->is_string() ? std::string(dump->text()) : std::string();
  }

  // Writes on the replica as soon as it takes writes (a replica answers MOVED until promoted).
  std::thread take_on_promotion(redis::Args command) {
    return std::thread([this, command] {
      auto replica = redis::Connection::connect(topology_->replica().connection_options());
      if (!replica) return;
      taken_ = harness::wait_until(
          [&] {
            auto reply = replica->command(command);
            return reply && !reply->is_error();
          },
          30s, 1ms);
    });
  }

  harness::Bite fail_over_and_judge() {
    fault_->tick(context_);  // no holder, an acquire failed, the key on the master: it fails over
    fault_->after_run(context_);
    harness::BiteEvidence evidence;
    evidence.waits.resize(3);
    evidence.go_ns = go_ns_;
    evidence.end_ns = harness::monotonic_ns();
    evidence.ttl = 2000ms;
    return fault_->bite(evidence);
  }

  std::string promoted_dump() {
    redis::ClusterConnection client(topology_->seed());
    auto dump = client.command({"DUMP", kKey});
    return dump && dump->is_string() ? std::string(dump->text()) : "(" + (dump ? dump->describe() : dump.error().message) + ")";
  }

  std::unique_ptr<harness::ClusterFailoverTopology> topology_;
  std::optional<harness::SharedHistory> history_;
  harness::NemesisContext context_;
  std::unique_ptr<harness::Fault> fault_;
  std::int64_t go_ns_ = 0;
  std::atomic<bool> taken_{false};
};

// The replica never had the hash (replication held): the failover lost it, and
// every acquire was refused: the bite, though the promoted master holds the
// very value again by the time anyone reads it after the failover.
TEST_F(FailoverReading, KeyRetakenAfterThePromotionIsLostNotKept) {
  const std::string before = orphan_on_master();
  ASSERT_FALSE(before.empty());
  std::thread retake = take_on_promotion({"HSET", kKey, kField, "1"});
  const harness::Bite bite = fail_over_and_judge();
  retake.join();
  ASSERT_TRUE(taken_) << "the re-take never reached the promoted replica";
  EXPECT_EQ(promoted_dump(), before) << "the promoted master holds the very value: a reading after the failover "
                                        "would say it had the key";
  EXPECT_TRUE(bite.bit) << bite.what;
  EXPECT_TRUE(bite.refused_not_held) << bite.what;
  EXPECT_NE(bite.what.find("on the replica as it was promoted (read with replication held): not that value"),
            std::string::npos)
      << bite.what;
}

// The replica had the hash (replication resumed until it did): the failover
// kept it, whatever a client wrote on the promoted master afterwards (another
// field: a reading after the failover would say lost). Not exercised.
TEST_F(FailoverReading, KeyTheReplicaHadIsKeptThoughOverwrittenAfterThePromotion) {
  ASSERT_TRUE(topology_->resume_replication());
  const std::string before = orphan_on_master();
  ASSERT_FALSE(before.empty());
  auto replica = redis::Connection::connect(topology_->replica().connection_options());
  ASSERT_TRUE(replica) << replica.error().message;
  ASSERT_TRUE(replica->command({"READONLY"}));
  ASSERT_TRUE(harness::wait_until(
      [&] {
        auto field = replica->command({"HGET", kKey, kField});
        return field && field->is_string();
      },
      10s))
      << "the replica receives the hash once replication resumed";
  std::thread overwrite = take_on_promotion({"HSET", kKey, kField, "7"});
  const harness::Bite bite = fail_over_and_judge();
  overwrite.join();
  ASSERT_TRUE(taken_) << "the overwrite never reached the promoted replica";
  EXPECT_NE(promoted_dump(), before) << "another value on the promoted master: a reading after the failover would say lost";
  EXPECT_FALSE(bite.bit) << bite.what;
  EXPECT_FALSE(bite.refused_not_held) << bite.what;
  EXPECT_NE(bite.what.find("on the replica as it was promoted (read with replication held): that very value"),
            std::string::npos)
      << bite.what;
  EXPECT_NE(bite.what.find("the promoted master had the key"), std::string::npos) << bite.what;
}

// `locklab failover --cluster` end to end: its output and exit codes.
struct Outcome {
  int exit_code = -1;
  std::string out, err;
};

Outcome locklab(const std::string& args) {
  namespace fs = std::filesystem;
  std::string pattern = (fs::temp_directory_path() / "locklab-cluster-failover-XXXXXX").string();
  const fs::path dir = ::mkdtemp(pattern.data());
  const auto out = (dir / "stdout").string(), err = (dir / "stderr").string();
  const int status = std::system((std::string("'") + LOCKLAB_BINARY + "' " + args + " >'" + out + "' 2>'" + err + "'").c_str());
  const auto slurp = [](const std::string& file) {
    std::ifstream in(file);
    return std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  };
  Outcome outcome{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return outcome;
}

TEST(ClusterFailoverCli, ReportsTheDoubleGrant) {
  const auto run = locklab("failover --cluster --runs 1");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("run 1: A acquired"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("CLUSTER FAILOVER FORCE"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("B acquired: violation"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("lua-safe-delete (cluster), --wait-replicas 0: 1 double grant(s) in 1 run(s)"),
            std::string::npos)
      << run.out;
}

TEST(ClusterFailoverCli, BadInputIsOneLineAndExitTwo) {
  for (const std::string args : {"failover --cluster --lock redlock", "failover --cluster --wait-replicas 2",
                                 "failover --cluster --lock setnx --wait-replicas 1"}) {
    const auto run = locklab(args);
    EXPECT_EQ(run.exit_code, 2) << args << ": " << run.out << run.err;
    ASSERT_FALSE(run.err.empty()) << args;
    EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << args << ": one line: " << run.err;
    EXPECT_EQ(run.err.rfind("locklab: ", 0), 0u) << run.err;
    EXPECT_TRUE(run.out.empty()) << args << ": no trial ran: " << run.out;
  }
}

}  // namespace
}  // namespace locklab::testing
