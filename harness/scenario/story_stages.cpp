#include "scenario/story_stages.h"

#include <utility>

namespace locklab::harness {

Contenders contenders(Scenario& story, std::chrono::milliseconds ttl, std::chrono::milliseconds retry,
                      StepHook a_step) {
  auto [server, probe, config] = story.single_server(ttl);
  config.retry_interval = retry;
  LockConfig a_config = config;
  a_config.owner = std::string("A");  // moved in: assigning the literal trips GCC 12's -Wrestrict false positive
  if (a_step) a_config.step = std::move(a_step);
  LockConfig b_config = config;
  b_config.owner = std::string("B");
  auto a = story.make_lock(a_config);
  auto b = story.make_lock(b_config);
  return {std::move(server), std::move(probe), std::move(config), std::move(a), std::move(b)};
}

ParkedAtWindow parked_at_window(Scenario& story, std::chrono::milliseconds ttl, const std::string& index1_owner,
                                const std::string& index2_owner) {
  auto [server, probe, config] = story.single_server(ttl);
  auto gate = std::make_unique<StepGate>(story.window());
  LockConfig index1_config = config;
  if (!index1_owner.empty()) index1_config.owner = index1_owner;
  index1_config.step = gate->hook();
  LockConfig index2_config = config;
  if (!index2_owner.empty()) index2_config.owner = index2_owner;
  auto index1 = story.make_lock(index1_config);
  auto index2 = story.make_lock(index2_config);
  return {std::move(server), std::move(probe), std::move(config), std::move(gate), std::move(index1),
          std::move(index2)};
}

}  // namespace locklab::harness
