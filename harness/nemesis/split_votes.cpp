#include "nemesis/split_votes.h"

#include "nemesis/nemesis.h"
#include "nemesis/topology_fault.h"
#include "servers/lock_server_layout.h"
#include "servers/tcp_proxy.h"

namespace locklab::harness {
namespace {

std::string node_list(const std::vector<std::size_t>& nodes) {
  std::string text;
  for (std::size_t j : nodes) {  // one piece at a time (GCC 12 warns falsely on "," + std::string)
    if (!text.empty()) text.push_back(',');
    text.append(std::to_string(j));
  }
  return text;
}

}  // namespace

// A minority down (the live nodes are a quorum), and client 0's ceil(live / 2) nodes short of one.
bool SplitVotes::splittable(std::size_t live, std::size_t nodes) {
  const std::size_t quorum = nodes / 2 + 1;
  return live >= quorum && live >= 2 && (live + 1) / 2 < quorum;
}

void SplitVotes::arm(LockServerLayout* topology, const std::vector<std::size_t>& live) {
  armed_ = true;
  const std::size_t first = (live.size() + 1) / 2;
  shares_[0].assign(live.begin(), live.begin() + static_cast<std::ptrdiff_t>(first));
  shares_[1].assign(live.begin() + static_cast<std::ptrdiff_t>(first), live.end());
  if (topology == nullptr || !topology->plan().client_proxies) {
    why_not_ = "no per-client links to hold the contenders' requests at";
    return;
  }
  // Each link parks on its own: a request held at one node must not hold the client's others.
  for (int client = 0; client < 2; ++client)
    for (std::size_t node : shares_[static_cast<std::size_t>(1 - client)]) {
      TcpProxy* link = topology->client_link(client, node);
      held_.push_back({client, node, link, link->arm_watch(pattern_, nullptr, node)});
    }
}

std::optional<std::string> SplitVotes::value_on(const NemesisContext& context, std::size_t node, int client) {
  if (probes_.size() < context.endpoints.size()) probes_.resize(context.endpoints.size());
  auto& probe = probes_[node];
  if (!probe)
    if (auto opened = RedisProbe::connect(context.endpoints[node])) probe.emplace(std::move(opened).value());
  return probe ? probe->value(lock_key_of(context, client)) : std::nullopt;
}

// The other client's vote is on the held request's node: the key is there, and it is not the
// held client's own (its value on a node of its own share, where nothing of it was held).
bool SplitVotes::other_vote_on(const NemesisContext& context, const Held& held) {
  const auto there = value_on(context, held.node, 1 - held.client);
  if (!there) return false;
  const auto own = value_on(context, shares_[static_cast<std::size_t>(held.client)].front(), held.client);
  return own != there;
}

std::vector<std::string> SplitVotes::tick(const NemesisContext& context) {
  std::vector<std::string> notes;
  // The bound counts from the first tick: the clients run from then on (the arming is before the run).
  if (!first_tick_) first_tick_ = std::chrono::steady_clock::now();
  bound_passed_ = std::chrono::steady_clock::now() - *first_tick_ >= bound_;
  for (Held& held : held_) {
    if (held.settled) continue;
    // Parked first, then the other's vote: the node answers its owner before this request.
    if (held.group->claimed() && other_vote_on(context, held)) {
      held.after_vote = true;
      const auto arrival = held.group->arrival();
      notes.push_back("client " + std::to_string(held.client) + "'s " + (arrival ? arrival->command : "request") +
                      " goes on to node " + std::to_string(held.node) + ", client " + std::to_string(1 - held.client) +
                      "'s vote there first");
    } else if (!bound_passed_) {
      continue;
    }
    held.link->release_park();
    held.settled = true;
  }
  return notes;
}

void SplitVotes::let_go() {
  for (Held& held : held_) {
    if (held.settled) continue;
    held.link->release_park();
    held.settled = true;
  }
}

std::string SplitVotes::plan_text() const {
  return "split the first round's votes (" + pattern_.text() + "): client 0 first on node(s) " + node_list(shares_[0]) +
         ", client 1 on " + node_list(shares_[1]) + "; each one's request held at the other's until its vote is there";
}

std::string SplitVotes::done_text() const {
  return "the first round split: client 0 first on node(s) " + node_list(shares_[0]) + ", client 1 on " +
         node_list(shares_[1]) + ", each one's request answered after the other's vote";
}

std::optional<std::string> SplitVotes::not_split() const {
  const std::string named = "split=" + pattern_.text() + ": ";
  if (!armed_) return named + "the fault never armed its split";
  if (!why_not_.empty()) return named + why_not_;
  for (const Held& held : held_) {
    if (held.after_vote) continue;
    const std::string whose = "client " + std::to_string(held.client) + "'s request at node " + std::to_string(held.node);
    const std::string within = bound_passed_ ? " within " + ms_text(bound_) : " before the run ended";
    if (!held.group->claimed()) return named + whose + " never came" + within + ", so the round was not split";
    return named + whose + " was held, but client " + std::to_string(1 - held.client) + "'s vote never reached node " +
           std::to_string(held.node) + within + ", so the round was not split";
  }
  return std::nullopt;
}

}  // namespace locklab::harness
