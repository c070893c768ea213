#include "servers/cluster_failover_topology.h"

#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "redis/cluster_routing.h"

#include "servers/proxied_replication.h"
#include "support/conditions.h"

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;

// One line of CLUSTER NODES: "<id> <ip:port@cport> <flags> <master> <ping> <pong> <epoch> <link> <slot>...".
struct NodeLine {
  std::string id;
  std::string flags;               // "myself,master", "slave", ...
  std::string master;              // a replica's master id, else "-"
  std::string config_epoch;
  std::vector<std::string> slots;  // "0-5460", "7", "[...migrating...]"
};

std::vector<NodeLine> parse_nodes(std::string_view text) {
  std::vector<NodeLine> nodes;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    NodeLine node;
    std::string address, ping, pong, link;
    if (!(words >> node.id >> address >> node.flags >> node.master >> ping >> pong >> node.config_epoch >> link))
      continue;
    for (std::string slot; words >> slot;) node.slots.push_back(slot);
    nodes.push_back(std::move(node));
  }
  return nodes;
}

bool has_flag(const std::string& flags, std::string_view flag) {
  std::istringstream parts(flags);
  for (std::string part; std::getline(parts, part, ',');)
    if (part == flag) return true;
  return false;
}

bool serves_slot(const NodeLine& node, int slot) {
  for (const auto& range : node.slots) {
    if (range.empty() || range.front() == '[') continue;  // a migration in progress, not ownership
    const auto dash = range.find('-');
    const int first = std::stoi(range.substr(0, dash));
    const int last = dash == std::string::npos ? first : std::stoi(range.substr(dash + 1));
    if (first <= slot && slot <= last) return true;
  }
  return false;
}

// What one node thinks: is `new_id` the master serving `slot`, `old_id` a
// replica, and the cluster ok? Empty when all hold, else what does not.
std::string failover_seen_by(const RedisServer& node, const std::string& new_id, const std::string& old_id, int slot) {
  auto info = ask_cluster_node(node, {"CLUSTER", "INFO"});
  if (!info) return info.error().message;
  if (info_field(info->text(), "cluster_state") != "ok")
    return node.endpoint().to_string() + ": cluster_state " + info_field(info->text(), "cluster_state");
  auto nodes = ask_cluster_node(node, {"CLUSTER", "NODES"});
  if (!nodes) return nodes.error().message;
  bool promoted = false, demoted = false;
  for (const auto& line : parse_nodes(nodes->text())) {
    if (line.id == new_id) promoted = has_flag(line.flags, "master") && serves_slot(line, slot);
    if (line.id == old_id) demoted = has_flag(line.flags, "slave");
  }
  if (promoted && demoted) return {};
  return node.endpoint().to_string() + " sees " +
         (promoted ? "the old master not yet a replica" : "the replica not yet master of the slot");
}

// The masters' config epochs as `node` sees them, by node id.
using Epochs = std::map<std::string, std::string>;

// Empty when `node` knows `replica_id` as a replica of `master_id` and sees
// the masters' config epochs all different (fills `epochs`). The cluster is ok
// as soon as the slots are covered, but gossip is still settling then, and a
// FORCE failover's votes need it settled: a master that still takes the
// replica for a master refuses its vote ("it is a master node"), and so does
// one that knows a newer config epoch for the slot than the replica asks with
// (the masters all start at epoch 0 and resolve the collision by bumping).
std::string settled_at(const RedisServer& node, const std::string& replica_id, const std::string& master_id,
                       Epochs& epochs) {
  auto nodes = ask_cluster_node(node, {"CLUSTER", "NODES"});
  if (!nodes) return nodes.error().message;
  bool known = false;
  std::set<std::string> distinct;
  for (const auto& line : parse_nodes(nodes->text())) {
    if (line.id == replica_id) known = has_flag(line.flags, "slave") && line.master == master_id;
    if (has_flag(line.flags, "master")) {
      epochs[line.id] = line.config_epoch;
      distinct.insert(line.config_epoch);
    }
  }
  if (!known) return node.endpoint().to_string() + " does not know the replica as its master's yet";
  if (distinct.size() != epochs.size()) return node.endpoint().to_string() + " sees masters sharing a config epoch";
  return {};
}

// The masters' log lines about their votes ("Failover auth granted/denied ..."): why an election failed.
std::string vote_log(const ServerList& masters) {
  std::string votes;
  for (const auto& master : masters) {
    std::istringstream lines(master->log_tail(8000));
    for (std::string line; std::getline(lines, line);)
      if (line.find("Failover auth") != std::string::npos) votes += " [" + line + "]";
  }
  return votes.empty() ? " none logged" : votes;
}

}  // namespace

Result<std::unique_ptr<ClusterFailoverTopology>> ClusterFailoverTopology::start(ClusterFailoverSettings settings) {
  std::unique_ptr<ClusterFailoverTopology> topology(new ClusterFailoverTopology());
  topology->settings_ = settings;
  const int slot = redis::key_slot(settings.key);

  ClusterOptions options;
  options.replicas_per_master = 1;
  options.node_timeout = settings.node_timeout;
  options.ready_timeout = settings.ready_timeout;
  // A replica's full sync (the first one, and the demoted master's) starts at
  // once instead of after the 5 s Redis waits for more replicas to join it.
  options.server.extra_args = {"--repl-diskless-sync-delay", "0"};
  auto* self = topology.get();
  options.before_forming = [self, slot](const RedisCluster& cluster) -> Status {
    self->master_index_ = cluster.master_of_slot(slot);
    const RedisServer& master = *cluster.masters()[self->master_index_];
    auto proxy = TcpProxy::start(master.endpoint());
    if (!proxy) return proxy.error();
    self->proxy_ = std::move(proxy).value();
    // Before any MEET: every node (the replica too) learns the proxy's port
    // from the master's first gossip. The bus port is not announced, so it stays the real one.
    const auto proxy_port = std::to_string(self->proxy_->endpoint().port);
    auto announced = ask_cluster_node(master, {"CONFIG", "SET", "cluster-announce-port", proxy_port});
    if (!announced) return announced.error();
    return Done{};
  };
  auto cluster = RedisCluster::start(std::move(options));
  if (!cluster) return cluster.error();
  topology->cluster_ = std::move(cluster).value();

  auto& master = topology->master();
  auto& replica = topology->replica();
  if (auto synced = wait_replica_in_sync(master, replica, settings.ready_timeout); !synced) return synced.error();
  auto replication = server_info(replica, "replication");
  if (!replication) return replication.error();
  const auto master_port = info_field(*replication, "master_port");
  if (master_port != std::to_string(topology->proxy_->endpoint().port))
    return Error{ErrorKind::protocol, "the replica follows port " + master_port + ", not the proxy's " +
                                          std::to_string(topology->proxy_->endpoint().port)};
  if (auto known = topology->wait_settled(settings.ready_timeout); !known) return known.error();
  const auto warm_up = redis::same_slot_key(settings.key, ":replication-warm-up");
  if (auto acking = wait_for_first_acknowledgement(master, warm_up, settings.ready_timeout); !acking)
    return acking.error();
  if (auto synced = wait_replica_in_sync(master, replica, settings.ready_timeout); !synced) return synced.error();
  return topology;
}

Status ClusterFailoverTopology::wait_settled(std::chrono::milliseconds timeout) {
  auto master_id = ask_cluster_node(master(), {"CLUSTER", "MYID"});
  if (!master_id) return master_id.error();
  auto replica_id = ask_cluster_node(replica(), {"CLUSTER", "MYID"});
  if (!replica_id) return replica_id.error();
  std::string last = "not polled";
  const bool settled = wait_until(
      [&] {
        std::optional<Epochs> agreed;
        for (const auto* list : {&cluster_->masters(), &cluster_->replicas()})
          for (const auto& node : *list) {
            Epochs epochs;
            last = settled_at(*node, std::string(replica_id->text()), std::string(master_id->text()), epochs);
            if (!last.empty()) return false;
            if (agreed && *agreed != epochs) {
              last = node->endpoint().to_string() + " sees other config epochs than the nodes before it";
              return false;
            }
            agreed = std::move(epochs);
          }
        return true;
      },
      timeout, 20ms);
  if (settled) return Done{};
  return Error{ErrorKind::timeout, "the cluster's gossip has not settled: " + last};
}

redis::ConnectionOptions ClusterFailoverTopology::seed() const {
  const auto& masters = cluster_->masters();
  auto options = masters[(master_index_ + 1) % masters.size()]->connection_options();
  options.cluster = true;
  return options;
}

Status ClusterFailoverTopology::hold_replication() {
  // The replica's link is the connection that sent REPLCONF/PSYNC; a client's
  // pool (Redisson opens its own at create(), through this same announced
  // port) sends neither and keeps flowing.
  const auto held = proxy_->set_mode_where_sent({"REPLCONF", "PSYNC", "SYNC"}, Direction::server_to_client,
                                                ProxyMode::hold());
  if (held != 1)
    return Error{ErrorKind::protocol, "the master's proxy has " + std::to_string(held) +
                                          " connections that sent REPLCONF/PSYNC (of " +
                                          std::to_string(proxy_->open_connections()) + " open); expected the one replication link"};
  return Done{};
}

Status ClusterFailoverTopology::resume_replication() {
  proxy_->set_mode_where_sent({"REPLCONF", "PSYNC", "SYNC"}, Direction::server_to_client, ProxyMode::pass());
  return Done{};
}

std::uint64_t ClusterFailoverTopology::held_bytes() const {
  return proxy_->counters(Direction::server_to_client).buffered;
}

// Pauses the old master's client writes (CLIENT PAUSE WRITE: EVAL and EVALSHA
// among them, and WAIT's acknowledgements are held back too; reads and the
// cluster bus go on), with a server-side end as a backstop. end() resumes
// them and says whether it could; on an early return the destructor does.
class OldMasterPause {
 public:
  static Result<OldMasterPause> start(const RedisServer& master, std::chrono::milliseconds backstop) {
    auto paused = ask_cluster_node(master, {"CLIENT", "PAUSE", std::to_string(backstop.count()), "WRITE"});
    if (!paused) return paused.error();
    return OldMasterPause(master);
  }
  OldMasterPause(OldMasterPause&& other) noexcept : master_(std::exchange(other.master_, nullptr)) {}
  OldMasterPause(const OldMasterPause&) = delete;
  OldMasterPause& operator=(const OldMasterPause&) = delete;
  OldMasterPause& operator=(OldMasterPause&&) = delete;
  ~OldMasterPause() { (void)end(); }

  Status end() {
    if (master_ == nullptr) return Done{};
    auto resumed = ask_cluster_node(*std::exchange(master_, nullptr), {"CLIENT", "UNPAUSE"});
    if (!resumed) return Error{resumed.error().kind, "the old master's writes could not be resumed: " + resumed.error().message};
    return Done{};
  }

 private:
  explicit OldMasterPause(const RedisServer& master) : master_(&master) {}
  const RedisServer* master_;
};

Result<redis::Endpoint> ClusterFailoverTopology::fail_over(std::chrono::milliseconds timeout, OldMasterWrites writes,
                                                           const std::function<void()>& after_forced) {
  auto old_id = ask_cluster_node(master(), {"CLUSTER", "MYID"});
  if (!old_id) return old_id.error();
  auto new_id = ask_cluster_node(replica(), {"CLUSTER", "MYID"});
  if (!new_id) return new_id.error();
  std::optional<OldMasterPause> pause;
  if (writes == OldMasterWrites::paused) {
    auto paused = OldMasterPause::start(master(), timeout + 1s);
    if (!paused) return paused.error();
    pause.emplace(std::move(*paused));
  }
  auto forced = ask_cluster_node(replica(), {"CLUSTER", "FAILOVER", "FORCE"});
  if (!forced) return forced.error();
  if (after_forced) after_forced();

  const int slot = redis::key_slot(settings_.key);
  std::string last = "not polled";
  const bool done = wait_until(
      [&] {
        for (const auto* list : {&cluster_->masters(), &cluster_->replicas()})
          for (const auto& node : *list) {
            last = failover_seen_by(*node, std::string(new_id->text()), std::string(old_id->text()), slot);
            if (!last.empty()) return false;
          }
        return true;
      },
      timeout, 20ms);
  if (!done)
    return Error{ErrorKind::timeout, "CLUSTER FAILOVER FORCE not complete: " + last + "; the masters' votes:" +
                                         vote_log(cluster_->masters()) +
                                         "; the replica's log: " + replica().log_tail(800)};
  if (pause)
    if (auto resumed = pause->end(); !resumed) return resumed.error();
  return replica().endpoint();
}

Status ClusterFailoverTopology::wait_old_master_resynced(std::chrono::milliseconds timeout) {
  const auto new_port = std::to_string(replica().endpoint().port);
  std::string last = "not polled";
  const bool done = wait_until(
      [&] {
        auto replication = server_info(master(), "replication");
        auto stats = server_info(replica(), "stats");
        if (!replication || !stats) {
          last = !replication ? replication.error().message : stats.error().message;
          return false;
        }
        last = "old master: role " + info_field(*replication, "role") + ", master port " +
               info_field(*replication, "master_port") + ", link " + info_field(*replication, "master_link_status") +
               "; full syncs served by the new master: " + info_field(*stats, "sync_full");
        return info_field(*replication, "role") == "slave" && info_field(*replication, "master_port") == new_port &&
               info_field(*replication, "master_link_status") == "up" && !info_field(*stats, "sync_full").empty() &&
               info_field(*stats, "sync_full") != "0";
      },
      timeout, 20ms);
  if (!done) return Error{ErrorKind::timeout, "the old master did not resync from the new one: " + last};
  // After a sync the replica's first acknowledgement can take a second (it
  // acks once a second); a guarded acquire's short WAIT must not miss it.
  // replica() is the new master now.
  return wait_for_first_acknowledgement(replica(), redis::same_slot_key(settings_.key, ":replication-warm-up"), timeout);
}

}  // namespace locklab::harness
