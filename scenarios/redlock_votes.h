// Narrates a Redlock attempt's votes node by node, the nodes named A..E as in
// the story, and an actor's try (shared by the redlock_* scenarios).
#pragma once

#include <map>
#include <string>

#include "g6_redlock.h"
#include "servers/redis_server.h"
#include "scenario/scenario.h"

namespace locklab::harness {

using NodeNames = std::map<std::string, std::string>;  // "host:port" -> "A"

inline NodeNames name_nodes(const ServerList& masters) {
  NodeNames names;
  for (std::size_t i = 0; i < masters.size(); ++i)
    names[masters[i]->endpoint().to_string()] = std::string(1, static_cast<char>('A' + i));
  return names;
}

inline void narrate_votes(Scenario& story, const RedlockLock& lock, const NodeNames& names) {
  const auto& attempt = lock.last_attempt();
  std::string line;
  for (const auto& vote : attempt.votes) {
    const auto name = names.find(vote.node);
    line += (line.empty() ? "" : ", ") + (name == names.end() ? vote.node : name->second) + " " + to_string(vote.vote);
  }
  story.say("votes: " + line);
  story.say(std::to_string(attempt.votes_for) + " of " + std::to_string(attempt.votes.size()) + " for, quorum " +
            std::to_string(lock.quorum()) + ": " + attempt.verdict);
}

// `who` tries the lock once as a named actor (Scenario::tries_once), the votes narrated.
inline bool tries_once(Scenario& story, const std::string& who, RedlockLock& lock, const NodeNames& names) {
  return story.tries_once(who, lock, [&] { narrate_votes(story, lock, names); });
}

}  // namespace locklab::harness
