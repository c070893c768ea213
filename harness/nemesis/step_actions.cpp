// StepNemesis and the per-client step hooks: the actions a client runs at its step
// points (pause, delay, crash). Apart from nemesis.cpp because parking a client
// needs ClientParking (nemesis/client_parking.h), which nemesis.h only declares.
#include "nemesis/step_actions.h"

#include <unistd.h>

#include <memory>
#include <thread>

#include "history/history.h"
#include "nemesis/client_parking.h"
#include "support/process_control.h"

namespace locklab::harness {

StepHook make_step_hook(std::vector<StepAction> all, int client, std::shared_ptr<ClientParking> parking,
                        std::shared_ptr<SharedCells> fired) {
  // Each action keeps its index among all of them: it names its parking rule.
  std::vector<std::pair<std::size_t, StepAction>> actions;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].client < 0 || all[i].client == client) actions.emplace_back(i, std::move(all[i]));
  if (actions.empty()) return {};
  // Hits are counted per client; the hook runs only in that client's thread.
  auto hits = std::make_shared<std::vector<int>>(actions.size(), 0);
  return [actions = std::move(actions), hits, parking, fired, client](std::string_view point) {
    for (std::size_t i = 0; i < actions.size(); ++i) {
      const auto& [rule, action] = actions[i];
      if (action.point != point) continue;
      if (action.times > 0 && (*hits)[i] >= action.times) continue;
      ++(*hits)[i];
      if (fired) (*fired)[rule].fetch_add(1);
      switch (action.kind) {
        case StepAction::Kind::pause:
          if (parking) parking->park(client, static_cast<int>(rule));
          break;
        case StepAction::Kind::delay: std::this_thread::sleep_for(action.delay); break;
        case StepAction::Kind::crash:
          stamp_own_death();                // its section ends here, not when it is reaped
          exit_with_group(kCrashExitCode);  // its adapter dies with it
      }
    }
  };
}

namespace {

std::vector<ClientParking::Rule> parking_rules(const std::vector<StepAction>& actions) {
  std::vector<ClientParking::Rule> rules;
  for (const auto& action : actions) rules.push_back({action.pause, action.point});
  return rules;
}

}  // namespace

StepNemesis::StepNemesis(std::vector<StepAction> actions)
    : actions_(std::move(actions)),
      parking_(std::make_shared<ClientParking>(parking_rules(actions_))),
      fired_(std::make_shared<SharedCells>(actions_.size())) {}

StepHook StepNemesis::client_step_hook(int client) { return make_step_hook(actions_, client, parking_, fired_); }

namespace {

std::string spec_of(const StepAction& action) { return action.spec.empty() ? action.point : action.spec; }

}  // namespace

nlohmann::json StepNemesis::record() const {
  nlohmann::json records = nlohmann::json::array();
  for (std::size_t i = 0; i < actions_.size(); ++i) {
    const std::int64_t fired = (*fired_)[i].load();
    records.push_back({{"spec", spec_of(actions_[i])}, {"point", actions_[i].point}, {"fired", fired},
                       {"acted", fired > 0}});
  }
  return records;
}

std::vector<std::string> StepNemesis::not_acted() const {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < actions_.size(); ++i)
    if ((*fired_)[i].load() == 0)
      lines.push_back("step " + spec_of(actions_[i]) + " did not act: " +
                      nobody_did(actions_[i].client, "reached step point " + actions_[i].point));
  return lines;
}

void StepNemesis::tick(NemesisContext& context) { parking_->tick(context); }

void StepNemesis::after_run(NemesisContext& context) { parking_->resume_all(context); }

std::chrono::milliseconds StepNemesis::allowance(std::chrono::milliseconds ttl) const {
  return parking_->longest_pause(ttl);
}

}  // namespace locklab::harness
