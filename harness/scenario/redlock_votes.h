// Narrates a Redlock attempt's votes node by node, each node by its story name
// (N1..N5: Scenario::masters() names them, so they never read as the clients
// A, B, Z), and an actor's try (shared by the redlock_* scenarios).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "g6_redlock.h"

#include "scenario/scenario.h"

namespace locklab::harness {

// The story's lock as a RedlockLock (its votes are read): the story must be told with redlock.
std::unique_ptr<RedlockLock> make_redlock(Scenario& story, const LockConfig& config);

// The attempt's verdict (RedlockLock::Attempt::verdict) in the narration's language.
std::string verdict_text(const RedlockLock::Attempt& attempt, std::size_t quorum);

void narrate_votes(Scenario& story, const RedlockLock& lock);

// `who` tries the lock once as a named actor (Scenario::tries_once), the votes narrated.
bool tries_once(Scenario& story, const std::string& who, RedlockLock& lock);

}  // namespace locklab::harness
