#include "nemesis/caught_waiters.h"

#include <thread>

#include "servers/lock_server_layout.h"
#include "servers/tcp_proxy.h"
#include "nemesis/topology_fault.h"

namespace locklab::harness {

void CaughtWaiters::catch_all_but(LockServerLayout* topology, int holder, std::chrono::milliseconds bound) {
  ran_ = true;
  bound_ = bound;
  if (topology == nullptr || !topology->plan().client_proxies) {
    why_not_ = "no per-client links to park the waiters' requests at";
    return;
  }
  for (int c = 0; c < topology->plan().clients; ++c) {
    if (c == holder) continue;
    Armed armed{c, std::make_shared<ParkGroup>(), topology->client_links(c)};
    for (std::size_t j = 0; j < armed.links.size(); ++j) armed.links[j]->arm_watch(pattern_, armed.group, j);
    armed_.push_back(std::move(armed));
  }
  // Polled, bounded: a waiter sends its next attempt within its wait and retry pause.
  const auto until = std::chrono::steady_clock::now() + bound;
  const auto all_parked = [this] {
    for (const Armed& armed : armed_)
      if (!armed.group->claimed()) return false;
    return true;
  };
  while (!all_parked() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds{1});
}

void CaughtWaiters::drop_all() {
  for (const Armed& armed : armed_)
    for (TcpProxy* link : armed.links) armed.group->claimed() ? link->drop_park() : link->release_park();
}

std::string CaughtWaiters::summary() const {
  std::string caught, missed;
  for (const Armed& armed : armed_) {
    if (const auto arrival = armed.group->arrival())
      caught += (caught.empty() ? "" : ", ") + ("client " + std::to_string(armed.client) + "'s " + arrival->command);
    else
      missed += (missed.empty() ? "" : ", ") + std::to_string(armed.client);
  }
  if (!why_not_.empty()) return "catch=" + pattern_.text() + ": nobody caught (" + why_not_ + ")";
  return "caught as the fault acted (" + pattern_.text() + "): " + (caught.empty() ? "nothing" : caught) +
         (missed.empty() ? "" : "; client(s) " + missed + " sent none within " + ms_text(bound_));
}

std::optional<std::string> CaughtWaiters::not_caught() const {
  if (!ran_) return "catch=" + pattern_.text() + ": the fault never reached its catch";
  if (!why_not_.empty()) return "catch=" + pattern_.text() + ": " + why_not_;
  for (const Armed& armed : armed_)
    if (!armed.group->claimed())
      return "catch=" + pattern_.text() + ": client " + std::to_string(armed.client) +
             " sent no matching request within " + ms_text(bound_) + ", so its request was not caught";
  return std::nullopt;
}

}  // namespace locklab::harness
