// Narrates a Redlock attempt's votes node by node, each node by its story name
// (N1..N5: Scenario::masters() names them, so they never read as the clients
// A, B, Z), and an actor's try (shared by the redlock_* scenarios).
#pragma once

#include <chrono>
#include <string>

#include "g6_redlock.h"
#include "scenario/scenario.h"

namespace locklab::harness {

// The attempt's verdict (RedlockLock::Attempt::verdict) in the narration's language.
inline std::string verdict_text(const RedlockLock::Attempt& attempt, std::size_t quorum) {
  const auto ms = [](std::chrono::microseconds us) { return us.count() / 1000; };
  if (attempt.acquired) return text("acquired, validity {} ms", ms(attempt.validity));
  if (attempt.votes_for >= quorum)
    return text("quorum came too late: elapsed {} ms, validity {} ms <= 0", ms(attempt.elapsed), ms(attempt.validity));
  return text("no quorum: {0} for, {1} against, {2} errored or timed out (quorum {3})", attempt.votes_for,
              attempt.votes_against, attempt.votes.size() - attempt.votes_for - attempt.votes_against, quorum);
}

inline void narrate_votes(Scenario& story, const RedlockLock& lock) {
  const auto& attempt = lock.last_attempt();
  std::string line;
  for (const auto& vote : attempt.votes)
    line += (line.empty() ? "" : ", ") + story.narrator().server_name(vote.node) + " " +
            std::string(translated(to_string(vote.vote)));
  story.say("votes: {}", line);
  story.say("{0} of {1} for, quorum {2}: {3}", attempt.votes_for, attempt.votes.size(), lock.quorum(),
            verdict_text(attempt, lock.quorum()));
}

// `who` tries the lock once as a named actor (Scenario::tries_once), the votes narrated.
inline bool tries_once(Scenario& story, const std::string& who, RedlockLock& lock) {
  return story.tries_once(who, lock, [&] { narrate_votes(story, lock); });
}

}  // namespace locklab::harness
