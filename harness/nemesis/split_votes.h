// node-crash:...:when=start:split=PATTERN -- the fault splits the first round's votes.
//
// With a minority of a quorum lock's nodes down, two contenders that start an
// attempt together may split the live nodes between them, so that neither
// reaches a quorum; whether they meet there within a millisecond is an
// interleaving, not the lock, and a library that cannot resolve such a round
// (@sesamecare-oss/redlock waits for a dead node's answer) read `liveness` in
// most runs and `safe` in the others (issue 25, item 7). With `split`, the
// fault decides it: the live nodes are shared out between clients 0 and 1
// (client 0 takes the first half, rounded up; client 1 the rest), and each
// client's first request matching PATTERN (servers/resp_watch.h) on a node of
// the other's share parks at its own link until the other's vote is there (the
// lock's key on that node, with a value other than the held client's own).
// Each node thus answers its owner first and the other contender second, and
// neither reaches a majority of all the nodes with its share. What the poll
// cannot see: a vote given back in the microseconds between the read and the
// release, and, for a lock that gives a failed round's votes back and tries
// again (generation 6), whether the vote read is the other's first round's or a
// later one's; a library that keeps its votes (@sesamecare-oss/redlock) has
// only the first. A link whose request did not park within the bound is let go and
// the split is missed: the fault's bite says so (Bite::schedule_missed), and
// the cell is `error`, never a class the schedule did not decide.
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "servers/resp_watch.h"
#include "support/redis_probe.h"

namespace locklab::harness {

class TcpProxy;
class LockServerLayout;
struct NemesisContext;

class SplitVotes {
 public:
  SplitVotes(RespPattern pattern, std::chrono::milliseconds bound) : pattern_(std::move(pattern)), bound_(bound) {}

  // Whether `live` nodes are a majority of `nodes` (a minority down) that two shares can split
  // with neither a majority.
  static bool splittable(std::size_t live, std::size_t nodes);

  // Arms client 1's links to client 0's share of `live` and client 0's to client 1's.
  // Without per-client links nobody is armed, and the split is missed.
  void arm(LockServerLayout* topology, const std::vector<std::size_t>& live);
  // Polled: a parked link goes on once the other contender's key is on its node; at the bound, every
  // link still armed is let go. Returns the notes of what happened since the last call.
  std::vector<std::string> tick(const NemesisContext& context);
  // The end of the run: every link let go (idempotent).
  void let_go();

  // For the fault's notes: "split the first round's votes (EVALSHA): client 0 first on nodes 2,3, ...".
  std::string plan_text() const;
  // For the bite, once split: "the first round split: client 0 first on node(s) 2,3, client 1 on 4".
  std::string done_text() const;
  // Why the split did not happen (a link let go before its request parked, no per-client links), or nullopt.
  std::optional<std::string> not_split() const;

 private:
  struct Held {
    int client = -1;       // whose request is held back
    std::size_t node = 0;  // at its link to this node, until the other client's key is there
    TcpProxy* link = nullptr;
    std::shared_ptr<ParkGroup> group;
    bool settled = false;        // let go
    bool after_vote = false;     // let go because the other's key was on the node, with its request parked
  };
  std::optional<std::string> value_on(const NemesisContext& context, std::size_t node, int client);
  bool other_vote_on(const NemesisContext& context, const Held& held);

  RespPattern pattern_;
  std::chrono::milliseconds bound_;
  std::vector<Held> held_;
  std::array<std::vector<std::size_t>, 2> shares_;  // [client]: the live nodes it gets first
  std::vector<std::optional<RedisProbe>> probes_;  // [node], opened on first use
  std::optional<std::chrono::steady_clock::time_point> first_tick_;
  bool bound_passed_ = false;
  bool armed_ = false;
  std::string why_not_;  // set when it could not arm
};

}  // namespace locklab::harness
