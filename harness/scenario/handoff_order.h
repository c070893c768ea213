// Why a waiter was refused right after a release (pubsub_wakeup), told in the
// order the server ran the acquires (server_order.h), not in the order their
// replies happen to be printed: for each waiter, its first refusal sent after
// the release, against the acquire that won the key.
#pragma once

#include <string>

#include "scenario/scenario.h"

namespace locklab::harness {

// `releaser`: the actor whose release (its last command) freed the lock. Call
// once the traffic is over: it reads the server's log of the key (Scenario::server_log()).
void explain_handoff(Scenario& story, const std::string& releaser);

}  // namespace locklab::harness
