#include "scenario/redlock_votes.h"

#include <chrono>

namespace locklab::harness {

std::unique_ptr<RedlockLock> make_redlock(Scenario& story, const LockConfig& config) {
  auto lock = story.make_lock(config);
  auto* redlock = dynamic_cast<RedlockLock*>(lock.get());
  if (redlock == nullptr) story.die("{} is not a Redlock: this story counts its votes", story.lock_name());
  lock.release();  // owned by `redlock` from here on
  return std::unique_ptr<RedlockLock>(redlock);
}

std::string verdict_text(const RedlockLock::Attempt& attempt, std::size_t quorum) {
  const auto ms = [](std::chrono::microseconds us) { return us.count() / 1000; };
  if (attempt.acquired) return text("acquired, validity {} ms", ms(attempt.validity));
  if (attempt.votes_for >= quorum)
    return text("quorum came too late: elapsed {} ms, validity {} ms <= 0", ms(attempt.elapsed), ms(attempt.validity));
  return text("no quorum: {0} for, {1} against, {2} errored or timed out (quorum {3})", attempt.votes_for,
              attempt.votes_against, attempt.votes.size() - attempt.votes_for - attempt.votes_against, quorum);
}

void narrate_votes(Scenario& story, const RedlockLock& lock) {
  const auto& attempt = lock.last_attempt();
  std::string line;
  for (const auto& vote : attempt.votes)
    line += (line.empty() ? "" : ", ") + story.narrator().server_name(vote.node) + " " +
            std::string(translated(to_string(vote.vote)));
  story.say("votes: {}", line);
  story.say("{0} of {1} for, quorum {2}: {3}", attempt.votes_for, attempt.votes.size(), lock.quorum(),
            verdict_text(attempt, lock.quorum()));
}

bool tries_once(Scenario& story, const std::string& who, RedlockLock& lock) {
  return story.tries_once(who, lock, [&] { narrate_votes(story, lock); });
}

}  // namespace locklab::harness
