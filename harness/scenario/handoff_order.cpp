#include "scenario/handoff_order.h"

#include <algorithm>
#include <vector>

#include "scenario/claims.h"
#include "scenario/server_order.h"

namespace locklab::harness {
namespace {

using nlohmann::json;

std::string effect_of(const json& step) { return step.contains("lock") ? step["lock"].value("effect", "") : ""; }

// One refusal after the release, against the acquire that won the key.
void explain_refusal(Scenario& story, const json& steps, const json& refused, const json& won) {
  const int r = refused["step"].get<int>(), w = won["step"].get<int>();
  const std::string loser = refused["who"], winner = won["who"];
  switch (server_order(steps, story.server_log(), w, r)) {
    case ServerOrder::first_ran_first:
      if (r < w)
        return story.say_claiming({claim::before(claim::step(w), claim::step(r))},
                                  "{0}'s acquire (step {1}) was refused although its reply is printed before {2}'s "
                                  "(step {3}): the server ran {2}'s first. Its log shows H's release freeing the key, "
                                  "then {2}'s acquire taking it; {0}'s was sent after the release, and a refusal "
                                  "means the key was there again",
                                  loser, r, winner, w);
      return story.say_claiming({claim::before(claim::step(w), claim::step(r))},
                                "{0}'s acquire (step {1}) was refused: the server had run {2}'s (step {3}) first, and "
                                "the key was {2}'s",
                                loser, r, winner, w);
    case ServerOrder::then_ran_first:
      return story.say_claiming({claim::before(claim::step(r), claim::step(w))},
                                "{0}'s acquire (step {1}) ran before {2}'s (step {3}) and was refused", loser, r,
                                winner, w);
    case ServerOrder::unknown:
      return story.say_claiming({claim::unordered(claim::step(w), claim::step(r))},
                                "{0}'s refused acquire (step {1}) and {2}'s acquire (step {3}) cannot be ordered from "
                                "what was recorded: their replies crossed, and the server's log does not place them",
                                loser, r, winner, w);
  }
}

}  // namespace

// Each waiter's first refusal sent after the release: the acquire that won the key was run first (or not known).
void explain_handoff(Scenario& story, const std::string& releaser) {
  const json steps = story.narrator().steps();
  double released_at = -1;  // the release came back then
  for (const auto& step : steps)
    if (step["who"] == releaser && step["kind"] == "command") released_at = step["t_ms"].get<double>();
  const json* won = nullptr;
  for (const auto& step : steps)
    if (!won && step.value("sent_ms", -1.0) >= released_at && effect_of(step).rfind("acquired", 0) == 0) won = &step;
  if (won == nullptr) return;
  std::vector<std::string> told;
  for (const auto& step : steps) {
    const std::string who = step["who"];
    if (step.value("sent_ms", -1.0) < released_at || effect_of(step).rfind("refused", 0) != 0) continue;
    if (who == (*won)["who"] || std::find(told.begin(), told.end(), who) != told.end()) continue;
    told.push_back(who);
    explain_refusal(story, steps, step, *won);
  }
}

}  // namespace locklab::harness
