#include "servers/sentinel_topology.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "redis/sentinel.h"

#include "support/conditions.h"

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;

redis::ConnectionOptions short_timeouts(redis::ConnectionOptions options) {
  options.connect_timeout = 500ms;
  options.command_timeout = 1000ms;
  return options;
}

// A sentinel's config: it rewrites the file as it learns, so each gets its own.
Status write_config(const std::string& path, const SentinelSettings& settings, const redis::Endpoint& master) {
  std::ofstream file(path);
  const std::string& name = settings.master_name;
  file << "sentinel resolve-hostnames no\n"
       << "sentinel monitor " << name << " " << master.host << " " << master.port << " " << settings.quorum << "\n"
       << "sentinel down-after-milliseconds " << name << " " << settings.down_after.count() << "\n"
       << "sentinel failover-timeout " << name << " " << settings.failover_timeout.count() << "\n"
       << "sentinel parallel-syncs " << name << " 1\n";
  file.close();
  if (!file) return Error{ErrorKind::io, "cannot write " + path};
  return Done{};
}

// `SENTINEL master <name>` as field -> value (a flat array of pairs).
Result<std::map<std::string, std::string>> master_state(const redis::ConnectionOptions& sentinel,
                                                        const std::string& name) {
  auto connection = redis::Connection::connect(sentinel);
  if (!connection) return connection.error();
  auto reply = connection->command({"SENTINEL", "master", name});
  if (!reply) return reply.error();
  if (!reply->is_array()) return Error{ErrorKind::reply, "SENTINEL master: " + reply->describe()};
  std::map<std::string, std::string> fields;
  for (std::size_t i = 0; i + 1 < reply->size(); i += 2)
    fields[std::string(reply->element(i).text())] = std::string(reply->element(i + 1).text());
  return fields;
}

}  // namespace

Result<std::unique_ptr<SentinelTopology>> SentinelTopology::start(SentinelSettings settings) {
  std::unique_ptr<SentinelTopology> topology(new SentinelTopology());
  topology->settings_ = settings;
  auto replication = ProxiedReplication::start();
  if (!replication) return replication.error();
  topology->replication_ = std::move(replication).value();

  std::string dir = (std::filesystem::temp_directory_path() / "locklab-sentinel-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) return Error{ErrorKind::io, std::string("mkdtemp: ") + std::strerror(errno)};
  topology->config_dir_ = dir;
  for (int i = 0; i < settings.sentinels; ++i) {
    const std::string path = dir + "/sentinel-" + std::to_string(i) + ".conf";
    if (auto written = write_config(path, settings, topology->replication_->master().endpoint()); !written)
      return written.error();
    ServerOptions options;
    options.config_file = path;
    options.extra_args = {"--sentinel"};
    auto sentinel = RedisServer::start(options);
    if (!sentinel) return Error{ErrorKind::io, "cannot start a sentinel: " + sentinel.error().message};
    topology->sentinels_.push_back(std::move(sentinel).value());
  }
  if (auto ready = topology->wait_until_ready(); !ready) return ready.error();
  return topology;
}

SentinelTopology::~SentinelTopology() {
  sentinels_.clear();  // stop the sentinels before the servers they watch
  replication_.reset();
  std::error_code ignored;
  if (!config_dir_.empty()) std::filesystem::remove_all(config_dir_, ignored);
}

std::vector<redis::ConnectionOptions> SentinelTopology::sentinels() const {
  std::vector<redis::ConnectionOptions> all;
  for (const auto& sentinel : sentinels_) all.push_back(short_timeouts(sentinel->connection_options()));
  return all;
}

Result<redis::Endpoint> SentinelTopology::current_master() const {
  return redis::discover_master(sentinels(), settings_.master_name);
}

// Every sentinel sees the master up, its replica, and the other sentinels
// (discovered through the master's hello channel): only then can a quorum
// agree that the master is down and elect a leader to fail over.
Status SentinelTopology::wait_until_ready() {
  std::string last = "no answer yet";
  const auto others = std::to_string(settings_.sentinels - 1);
  const bool ready = wait_until(
      [&] {
        for (const auto& sentinel : sentinels()) {
          auto state = master_state(sentinel, settings_.master_name);
          if (!state) {
            last = state.error().message;
            return false;
          }
          auto& fields = *state;
          last = "sentinel " + sentinel.endpoint.to_string() + ": flags " + fields["flags"] + ", replicas " +
                 fields["num-slaves"] + ", other sentinels " + fields["num-other-sentinels"];
          if (fields["flags"] != "master" || fields["num-slaves"] != "1" || fields["num-other-sentinels"] != others)
            return false;
        }
        return true;
      },
      settings_.ready_timeout, 50ms);
  if (ready) return Done{};
  return Error{ErrorKind::timeout, "sentinels not ready: " + last};
}

Result<redis::Endpoint> SentinelTopology::kill_master(std::chrono::milliseconds timeout) {
  auto before = current_master();
  if (!before) return before.error();
  replication_->master().crash();
  // What the proxy still held dies with the master; cut() also refuses the
  // replica's reconnects, as a dead master would.
  replication_->link().cut();
  std::string last = "still " + before->to_string();
  redis::Endpoint promoted;
  auto moved = [&] {
    auto now = current_master();
    if (!now) {
      last = now.error().message;
      return false;
    }
    promoted = *now;
    return promoted.to_string() != before->to_string();
  };
  const auto start = std::chrono::steady_clock::now();
  const auto natural = std::min(timeout, settings_.election_window);
  if (wait_until(moved, natural, 50ms)) return promoted;
  // A split vote: each candidate waits out its election (10 s) and then
  // 2 x failover-timeout before it tries again. Ask one sentinel to fail
  // over on its own (SENTINEL FAILOVER needs no votes); Sentinel still
  // picks and promotes the replica.
  last.append("; ").append(force_failover());
  const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  if (spent < timeout && wait_until(moved, timeout - spent, 50ms)) return promoted;
  return Error{ErrorKind::timeout, "Sentinel did not promote a replica within " + std::to_string(timeout.count()) +
                                       " ms (" + last + ")"};
}

std::string SentinelTopology::force_failover() const {
  std::string answers;
  for (const auto& sentinel : sentinels()) {
    auto connection = redis::Connection::connect(sentinel);
    if (!connection) continue;
    auto reply = connection->command({"SENTINEL", "FAILOVER", settings_.master_name});
    if (!reply) continue;
    answers.append(" ").append(reply->describe());
    if (reply->is_status()) return "forced by sentinel " + sentinel.endpoint.to_string();
  }
  return "no sentinel took SENTINEL FAILOVER:" + answers;
}

}  // namespace locklab::harness
