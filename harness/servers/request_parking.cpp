#include "servers/request_parking.h"

#include <algorithm>
#include <cctype>

#include "servers/proxy_link.h"

namespace locklab::harness {
namespace {

std::string upper(std::string_view text) {
  std::string upper(text);
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper;
}

// A connection's distinct command names, kept for set_mode_where_sent(); a
// client speaks a few dozen at most, the cap only guards against a flood.
void remember_names(std::vector<std::string>& names, const std::vector<RespCommand>& commands) {
  constexpr std::size_t kMaxNames = 64;
  for (const RespCommand& command : commands) {
    std::string name = upper(command.name());
    if (names.size() < kMaxNames && std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(std::move(name));
  }
}

// Throw away every queued byte at stream offset `from` or later.
void discard_from(Flow& flow, std::uint64_t from, FlowCounters& counters) {
  while (!flow.queue.empty()) {
    Chunk& last = flow.queue.back();
    const std::uint64_t start = std::max<std::uint64_t>(from, last.at + last.offset);
    if (start >= last.at + last.bytes.size()) break;
    const auto cut = static_cast<std::size_t>(last.at + last.bytes.size() - start);
    flow.queued -= cut;
    counters.dropped += cut;
    counters.buffered -= cut;
    last.bytes.resize(last.bytes.size() - cut);
    if (last.offset == last.bytes.size()) flow.queue.pop_back();
  }
}

}  // namespace

bool LinkRequests::sent_any(const std::vector<std::string>& upper_names) const {
  return std::any_of(upper_names.begin(), upper_names.end(), [&](const std::string& name) {
    return std::find(names_sent.begin(), names_sent.end(), name) != names_sent.end();
  });
}

std::vector<std::string> LinkRequests::upper_case(const std::vector<std::string>& names) {
  std::vector<std::string> result;
  for (const auto& name : names) result.push_back(upper(name));
  return result;
}

void RequestParking::arm(std::shared_ptr<const RespPattern> pattern, std::shared_ptr<ParkGroup> group,
                         std::size_t member, std::list<ProxyLink>& links) {
  for (auto& link : links) {
    link.requests.matcher.emplace(pattern);
    link.requests.fence.reset();
  }
  watch_ = Watch{std::move(pattern), std::move(group), member};
}

void RequestParking::release(std::list<ProxyLink>& links) {
  watch_.reset();
  for (auto& link : links) {
    link.requests.matcher.reset();
    link.requests.fence.reset();
  }
}

void RequestParking::drop(std::list<ProxyLink>& links, FlowCounters& up_counters) {
  // A link of this proxy that has not looked since another link of the
  // group parked (its poll thread had nothing to read) has no fence yet:
  // fence it now, before the watch goes, so that what the client wrote before
  // it died -- queued here or still in the socket -- is discarded and the link
  // reset like the parked one (a dead Redlock client's script must not reach
  // the other nodes).
  hold_for_group(links);
  watch_.reset();
  for (auto& link : links) {
    link.requests.matcher.reset();
    if (!link.requests.fence) continue;
    Flow& up = link.flows[kClientToServer];
    discard_from(up, *link.requests.fence, up_counters);
    up.closing = true;  // the proxy resets the link once what came before the fence is out
    link.requests.fence.reset();
  }
}

void RequestParking::accept(ProxyLink& link) const {
  if (watch_) link.requests.matcher.emplace(watch_->pattern);
}

// What a read of the client's requests completed; the first command that
// completes the pattern parks (a dropped request never reaches the server:
// nothing to park).
void RequestParking::watch(ProxyLink& link, std::string_view bytes, bool dropped, Clock::time_point now) {
  LinkRequests& requests = link.requests;
  completed_.clear();
  requests.reader.feed(bytes, completed_);
  remember_names(requests.names_sent, completed_);
  if (dropped || !watch_ || !requests.matcher || requests.fence) return;
  for (const RespCommand& command : completed_)
    if (requests.matcher->advance(command)) return park(link, command, now);
}

void RequestParking::park(ProxyLink& link, const RespCommand& command, Clock::time_point now) const {
  if (watch_->group->claim({watch_->member, command.describe(), now})) {
    link.requests.fence = command.begin;
  } else if (watch_->group->claimed()) {  // another link of the client parked first: hold all of this one
    link.requests.fence = std::min(command.begin, front_offset(link.flows[kClientToServer]));
  }
  // else another client's group took the last park the budget had: this command goes on.
}

// Once any link of the group parked, every connection of this proxy holds
// what it has not forwarded yet (the client's other links, its other connections).
void RequestParking::hold_for_group(std::list<ProxyLink>& links) const {
  if (!watch_ || !watch_->group->claimed()) return;
  for (auto& link : links)
    if (!link.requests.fence) link.requests.fence = front_offset(link.flows[kClientToServer]);
}

// How far a flow may be forwarded: requests stop at a fence; while armed, at
// the start of a request not yet whole (it has not been matched yet).
std::uint64_t RequestParking::send_limit(const ProxyLink& link, std::size_t flow) const {
  if (flow != kClientToServer) return kNoLimit;
  if (link.requests.fence) return *link.requests.fence;
  if (watch_ && !link.flows[flow].eof) return link.requests.reader.settled();
  return kNoLimit;
}

}  // namespace locklab::harness
