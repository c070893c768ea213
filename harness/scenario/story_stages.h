// The casts two or more stories open with, on one story server
// (Scenario::single_server): the clients' locks made, the step points wired.
//
//   contenders        A and B (their owner fields) retrying every `retry`;
//                     A's step points go to a hook (setnx_crash_deadlock,
//                     setnx_expire_gap: A crashes at the story's window)
//   parked_at_window  index1 parks at the story's window (a StepGate) until
//                     the director opens it; index2 is free (check_then_delete_race,
//                     lua_delete_fixes_it)
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "lock.h"

#include "scenario/scenario.h"
#include "scenario/step_gate.h"

namespace locklab::harness {

struct Contenders {
  std::unique_ptr<RedisServer> server;
  RedisProbe probe;
  LockConfig config;  // the story's settings, before any client's own
  std::unique_ptr<DistributedLock> a, b;
};
Contenders contenders(Scenario& story, std::chrono::milliseconds ttl, std::chrono::milliseconds retry,
                      StepHook a_step);

struct ParkedAtWindow {
  std::unique_ptr<RedisServer> server;
  RedisProbe probe;
  LockConfig config;
  std::unique_ptr<StepGate> gate;  // at story.window(): index1's first arrival there waits for open()
  std::unique_ptr<DistributedLock> index1, index2;
};
// `index1_owner`, `index2_owner`: their owner fields ("": a fresh one each, LockConfig's default).
ParkedAtWindow parked_at_window(Scenario& story, std::chrono::milliseconds ttl, const std::string& index1_owner = "",
                                const std::string& index2_owner = "");

}  // namespace locklab::harness
