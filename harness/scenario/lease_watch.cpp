#include "scenario/lease_watch.h"

namespace locklab::harness {

bool watch_renewals(Scenario& story, RedisProbe& probe, const std::string& key, std::chrono::milliseconds lease,
                    int renewals) {
  long long previous = -2;
  int seen = 0;
  bool gone = false;
  wait_until(
      [&] {
        const auto pttl = probe.pttl(key);
        if (!pttl) return false;
        if (*pttl == -2) return gone = true;
        // A rise of a sixth of the lease is a renewal, not the jitter of polling.
        if (previous >= 0 && *pttl > previous + lease.count() / 6) {
          ++seen;
          story.narrator().say("PTTL " + key + " rose from " + std::to_string(previous) + " to " +
                                   std::to_string(*pttl) + " ms: the lease was renewed",
                               StepDetail::observed(key, *pttl));
        }
        previous = *pttl;
        return seen >= renewals;
      },
      std::chrono::seconds{10}, std::chrono::milliseconds{5});
  if (gone)
    story.narrator().say("PTTL " + key + " => -2: the key expired, last seen with " + std::to_string(previous) +
                             " ms left",
                         StepDetail::observed(key, -2));
  return seen >= renewals;
}

}  // namespace locklab::harness
