// Polled conditions: wait for a state, never for a time.
//
// A race replays on every run of a loaded 2-core machine only if each actor
// waits for the state the story needs ("A's key has expired", "B holds the
// lock"), not for a number of milliseconds that usually suffices. Scenarios,
// step-point faults and tests all wait through these.
#pragma once

#include <chrono>
#include <functional>

namespace locklab::harness {

using Condition = std::function<bool()>;

// Polls `condition` every `every` until it holds (true) or `timeout` passes (false).
bool wait_until(const Condition& condition, std::chrono::milliseconds timeout,
                std::chrono::milliseconds every = std::chrono::milliseconds{1});

}  // namespace locklab::harness
