// The step actions of `--step POINT:ACTION` as a nemesis: the hook each client
// runs at its step points, and StepNemesis, which installs those hooks and,
// for pauses, stops and resumes the parked clients from the coordinator
// (through the process faults' ClientParking). The actions themselves are
// parsed in nemesis.h; this is where they act.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nemesis/nemesis.h"

namespace locklab::harness {

class ClientParking;

class SharedCells;

// The hook for `client` from the actions that apply to it; pauses park the
// client in `parking` (the coordinator side must run, see StepNemesis). Each
// hit that acts counts in `fired` (one cell per action, by its index among
// all of them; memory shared across fork), before the action runs: a crash
// counts too.
StepHook make_step_hook(std::vector<StepAction> actions, int client, std::shared_ptr<ClientParking> parking = nullptr,
                        std::shared_ptr<SharedCells> fired = nullptr);

// Nemesis that installs step actions in the clients and, for pauses, stops
// and resumes the parked clients from the coordinator.
class StepNemesis final : public Nemesis {
 public:
  explicit StepNemesis(std::vector<StepAction> actions);
  std::string name() const override { return "step-actions"; }
  StepHook client_step_hook(int client) override;
  void tick(NemesisContext& context) override;
  void after_run(NemesisContext& context) override;
  std::chrono::milliseconds allowance(std::chrono::milliseconds ttl) const;  // the longest pause

  // Like a fault's record, one per action, for the run document's
  // "step_actions": {"spec", "point", "fired": hits that acted, "acted"}.
  // Read after after_run().
  nlohmann::json record() const;
  // One line per action that never fired ("step SPEC did not act: ..."): a
  // run whose step never happened shows nothing about it (its verdict is error).
  std::vector<std::string> not_acted() const;

 private:
  std::vector<StepAction> actions_;
  std::shared_ptr<ClientParking> parking_;  // shared with the clients' hooks (memory shared across fork)
  std::shared_ptr<SharedCells> fired_;      // [i]: the hits of action i that acted, counted in the clients
};

}  // namespace locklab::harness
