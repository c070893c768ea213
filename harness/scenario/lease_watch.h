// Watching a lease from outside, for the watchdog stories: polls a key's PTTL
// and narrates every renewal (the PTTL rising again) and the key's expiry; the
// view (story_record.h) records each as a lease seen on that key.
#pragma once

#include <chrono>
#include <string>

#include "scenario/scenario.h"
#include "support/redis_probe.h"

namespace locklab::harness {

// Polls `key`'s PTTL through `probe` (for at most 10 s) until `renewals`
// renewals of a `lease`-long lease were seen or the key is gone; narrates each.
// True = the renewals were seen.
bool watch_renewals(Scenario& story, RedisProbe& probe, const std::string& key, std::chrono::milliseconds lease,
                    int renewals);

}  // namespace locklab::harness
