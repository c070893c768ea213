#include "nemesis/caught_waiters.h"

#include <thread>

#include "nemesis/topology_fault.h"
#include "servers/lock_server_layout.h"
#include "servers/tcp_proxy.h"

namespace locklab::harness {

void CaughtWaiters::catch_all_but(LockServerLayout* topology, int holder, const std::vector<std::size_t>& servers,
                                  std::chrono::milliseconds bound) {
  ran_ = true;
  bound_ = bound;
  if (topology == nullptr || !topology->plan().client_proxies) {
    why_not_ = "no per-client links to park the waiters' requests at";
    return;
  }
  for (int c = 0; c < topology->plan().clients; ++c) {
    if (c == holder) continue;
    Armed armed{c, std::make_shared<ParkGroup>(), {}};
    for (std::size_t j : servers) {
      TcpProxy* link = topology->client_link(c, j);
      link->arm_watch(pattern_, armed.group, j);
      armed.links.push_back(link);
    }
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
  // Decided now, once: a client not parked by the bound is let go at once, so that nothing it
  // sends while the fault acts is caught (and counted) after the fact. A park that lands between
  // the check and the release is let through by release_park() too.
  for (Armed& armed : armed_) {
    armed.caught = armed.group->claimed();
    if (armed.caught) continue;
    for (TcpProxy* link : armed.links) link->release_park();
    armed.settled = true;
  }
}

void CaughtWaiters::drop_caught() {
  for (Armed& armed : armed_) {
    if (armed.settled) continue;
    for (TcpProxy* link : armed.links) armed.caught ? link->drop_park() : link->release_park();
    armed.settled = true;
  }
}

std::string CaughtWaiters::summary() const {
  if (!why_not_.empty()) return "catch=" + pattern_.text() + ": nobody caught (" + why_not_ + ")";
  std::string caught, missed;
  for (const Armed& armed : armed_) {
    const auto arrival = armed.group->arrival();
    if (armed.caught && arrival)
      caught += (caught.empty() ? "" : ", ") + ("client " + std::to_string(armed.client) + "'s " + arrival->command);
    else
      missed += (missed.empty() ? "" : ", ") + std::to_string(armed.client);
  }
  return "caught before the fault acts (" + pattern_.text() + "): " + (caught.empty() ? "nothing" : caught) +
         (missed.empty() ? "" : "; client(s) " + missed + " sent none within " + ms_text(bound_));
}

std::optional<std::string> CaughtWaiters::not_caught() const {
  const std::string named = "catch=" + pattern_.text() + ": ";
  if (!ran_) return named + "the fault never reached its catch";
  if (!why_not_.empty()) return named + why_not_;
  if (armed_.empty()) return named + "no contender to catch";
  for (const Armed& armed : armed_)
    if (!armed.caught)
      return named + "client " + std::to_string(armed.client) + " sent no matching request within " + ms_text(bound_) +
             ", so its request was not caught";
  return std::nullopt;
}

}  // namespace locklab::harness
