// Talking to a Redis Cluster: which master owns a key, and a connection that
// routes each command to that master and follows the cluster's redirections.
//
// The rules are the Redis Cluster specification's (cluster-spec, "Keys
// distribution model"): slot = CRC16-XMODEM(hashed part) mod 16384, where the
// hashed part is the key's {hash tag} (first '{', the next '}', non-empty) or
// else the whole key. A node that does not own a slot answers MOVED (the slot
// has moved for good: refresh the map) or ASK (the slot is being migrated:
// send ASKING, then the command, to the named node, once).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "redis/connection.h"
#include "redis/script.h"

namespace locklab::redis {

constexpr int kClusterSlots = 16384;

std::uint16_t crc16_xmodem(std::string_view data);
// The part of `key` the slot is computed from: its hash tag, or the whole key.
std::string_view hash_tag(std::string_view key);
int key_slot(std::string_view key);
// A key in the same slot as `key` with `suffix` appended: `key` itself when it
// has a hash tag, else "{key}" (keys holding '}' but no tag cannot be wrapped:
// same_slot_key() then still returns "{key}"+suffix, and key_slot() tells).
std::string same_slot_key(const std::string& key, std::string_view suffix);

// The key a command is routed by: the first key of EVAL/EVALSHA, else args[1];
// nullopt for commands without keys (PING, WAIT, PUBLISH, SCRIPT, INFO, ...).
std::optional<std::string_view> routing_key(const Args& args);

struct SlotRange {
  int first = 0;
  int last = 0;
  Endpoint master;
};
// CLUSTER SLOTS on `connection`, masters only.
Result<std::vector<SlotRange>> read_slot_map(Connection& connection);

struct Redirect {
  bool ask = false;  // false: MOVED
  int slot = 0;
  Endpoint to;
};
// "MOVED 3999 127.0.0.1:6381" / "ASK 3999 127.0.0.1:6381", else nullopt.
std::optional<Redirect> parse_redirect(std::string_view error_text);

// A connection to a whole cluster: one hiredis Connection per node, opened on
// first use. Not thread-safe (one per lock object, like a Connection). A node
// connection that broke is replaced on the next call, as redis::Link does.
class ClusterConnection {
 public:
  // `seed`: any node of the cluster; its timeouts and AUTH apply to every node.
  explicit ClusterConnection(ConnectionOptions seed, int max_redirects = 5);

  // Routed by routing_key(args); a keyless command goes to the node used last
  // (so WAIT follows the write it waits for). MOVED refreshes the slot map and
  // retries; ASK sends ASKING and retries on the named node. More than
  // max_redirects redirections ⇒ ErrorKind::reply. Other error replies come
  // back as Replies, like Connection::command(). A node that cannot be reached
  // or fails mid-command makes the next command reload the slot map first (it
  // may have failed over); the failed command itself is not retried, since it
  // may have been applied (Error::outcome_unknown()).
  Result<Reply> command(const Args& args);

  // The script by EVAL with its source, routed by keys.front(): a node reached
  // by a redirection needs no SCRIPT LOAD first.
  Result<Reply> run(const Script& script, const Args& keys, const Args& args);

  // The master that owns `slot` by the current map (loads it on first use).
  Result<Connection*> master_for_slot(int slot);
  // The node used last, or the seed: for keyless commands and subscriptions.
  Result<Connection*> current();
  Status refresh_slot_map();

  const std::vector<SlotRange>& slot_map() const { return map_; }
  std::uint64_t redirects_followed() const { return redirects_; }
  const ConnectionOptions& seed() const { return seed_; }

 private:
  Result<Connection*> node(const Endpoint& endpoint);
  std::optional<Endpoint> owner_of(int slot) const;

  ConnectionOptions seed_;
  int max_redirects_;
  std::vector<SlotRange> map_;
  bool map_stale_ = false;  // a node failed us: reload the map before the next routed command
  std::map<std::string, Connection> nodes_;  // by Endpoint::to_string()
  Endpoint last_;
  std::uint64_t redirects_ = 0;
};

}  // namespace locklab::redis
