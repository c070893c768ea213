// The lock servers as a witness of the run (docs/harness.md, "The server as
// witness"): whether a lease was lost under its holder comes from what the
// servers the run started saw happen to the lock keys, not from what the lock
// said. A nemesis of the run so it hears holder_entered (the coordinator's
// watch: a new holder is inside), which asks every node for a read of the
// holder's key; the feeds (servers/keyspace_feed.h) record the keyspace
// events; finish() joins them with the history (run/witness_join.h).
//
// Servers the run does not own (--redis, --sentinel, --cluster) are not
// watched: the block says why, and the lock's own word judges as before.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "redis/connection.h"

#include "history/history.h"
#include "nemesis/nemesis.h"
#include "servers/keyspace_feed.h"

namespace locklab::harness {

struct WitnessPlan {
  std::vector<redis::ConnectionOptions> nodes;  // direct, never through a proxy
  std::vector<std::string> keys;                // every known lock key
  std::function<std::string(int)> key_of;       // client -> the key its lock holds ("" unknown)
  int quorum = 1;                               // nodes that must keep the key (N/2+1 for a quorum lock)
};

// What finish() found, for the verdict and the document.
struct WitnessOutcome {
  nlohmann::json block;                // the document's "witness"
  std::int64_t commands_on_servers = 0;  // its reads' commands, to take out of the run's server count
};

class LeaseWitness : public Nemesis {
 public:
  // A witness that does not watch, and why (the document says so).
  static std::unique_ptr<LeaseWitness> unwatched(std::string why);
  explicit LeaseWitness(WitnessPlan plan) : plan_(std::move(plan)) {}
  ~LeaseWitness() override;

  // Empty: it watches, it does no harm, so it is not named among the run's
  // nemeses (the document's `nemesis` stays what the faults are).
  std::string name() const override { return ""; }
  // Opens a feed on every node. A node it cannot watch makes the whole run
  // unwatched (a quorum cannot be judged from part of it): said, not fatal.
  void start();
  void holder_entered(NemesisContext& context, int client) override;

  // No more reads: called before the run's last server count, so the reads
  // finish() takes out of it are exactly those it counted.
  void close_reads();
  // Stops the feeds and judges every record: `lease_lost` becomes the
  // witness's finding wherever it could tell (the lock's word stays in
  // `lease_lost_word`, and stands where the witness could not tell).
  WitnessOutcome finish(std::vector<CsRecord>& records);

 private:
  WitnessPlan plan_;
  std::string why_not_;  // non-empty: not watching
  std::vector<std::unique_ptr<KeyspaceFeed>> feeds_;
};

}  // namespace locklab::harness
