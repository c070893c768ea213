#include "scenario/lease_watch.h"

namespace locklab::harness {
namespace {

// The renewals narrated so far: steps of a background lane ("(background)",
// or "A/background" relayed from a ProcessActor), where the watchdog runs,
// other than loading its script.
int background_steps(Narrator& narrator) {
  int count = 0;
  for (const auto& step : narrator.steps()) {
    const std::string who = step.value("who", "");
    const std::string said = step.value("text", "");
    const bool background = who.size() >= 10 && who.compare(who.size() - 10, 10, "background") == 0;
    if (background && said.rfind("SCRIPT ", 0) != 0) ++count;  // a SCRIPT LOAD renews nothing
  }
  return count;
}

}  // namespace

bool watch_renewals(Scenario& story, RedisProbe& probe, const std::string& key, std::chrono::milliseconds lease,
                    int renewals) {
  long long previous = -2;
  int seen = 0;
  bool gone = false;
  int renewals_narrated = background_steps(story.narrator());
  wait_until(
      [&] {
        const auto pttl = probe.pttl(key);
        if (!pttl) return false;
        if (*pttl == -2) return gone = true;
        // A rise of a sixth of the lease is a renewal, not the jitter of polling.
        if (previous >= 0 && *pttl > previous + lease.count() / 6) {
          ++seen;
          // The renewal's own line (its reply, relayed from the holder's process) comes
          // first: the PTTL rose because of it. Bounded: a lost line delays, never blocks.
          wait_until([&] { return background_steps(story.narrator()) > renewals_narrated; }, std::chrono::seconds{1});
          renewals_narrated = background_steps(story.narrator());
          story.narrator().say(text("PTTL {0} rose from {1} to {2} ms: the lease was renewed", key, previous, *pttl),
                               StepDetail::observed(key, *pttl));
        }
        previous = *pttl;
        return seen >= renewals;
      },
      std::chrono::seconds{10}, std::chrono::milliseconds{5});
  if (gone)
    story.narrator().say(text("PTTL {0} => -2: the key expired, last seen with {1} ms left", key, previous),
                         StepDetail::observed(key, -2));
  return seen >= renewals;
}

}  // namespace locklab::harness
