#include "nemesis/nemesis.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <thread>

namespace locklab::harness {
namespace {

std::vector<std::string_view> split(std::string_view text, char by) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const auto end = text.find(by, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

bool parse_int(std::string_view text, int& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

}  // namespace

const std::string& lock_key_of(const NemesisContext& context, int client) {
  const auto index = static_cast<std::size_t>(client);
  return client >= 0 && index < context.client_keys.size() ? context.client_keys[index] : context.key;
}

std::vector<std::string> lock_keys(const NemesisContext& context) {
  if (context.client_keys.empty()) return {context.key};
  std::vector<std::string> keys;
  for (const auto& key : context.client_keys)
    if (!key.empty() && std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  return keys;
}

std::optional<PauseRule::Until> parse_pause_until(std::string_view word) {
  if (word == "expired") return PauseRule::Until::expired;
  if (word == "other-acquired") return PauseRule::Until::other_acquired;
  if (word == "other-inside") return PauseRule::Until::other_inside;
  return std::nullopt;
}

const char* pause_until_name(PauseRule::Until until) {
  switch (until) {
    case PauseRule::Until::time: return "time";
    case PauseRule::Until::expired: return "expired";
    case PauseRule::Until::other_acquired: return "other-acquired";
    case PauseRule::Until::other_inside: return "other-inside";
  }
  return "time";
}

std::optional<StepAction> parse_step_action(std::string_view spec, std::string* why) {
  auto fail = [&](std::string message) -> std::optional<StepAction> {
    if (why) *why = "bad step action '" + std::string(spec) + "': " + message;
    return std::nullopt;
  };
  const auto parts = split(spec, ':');
  // The workload's own points contain a ':' ("locklab:cs-enter"): rejoin them.
  std::vector<std::string_view> fields;
  std::string point;
  std::size_t next = 0;
  if (parts.size() >= 2 && parts[0] == "locklab") {
    point = "locklab:" + std::string(parts[1]);
    next = 2;
  } else if (!parts.empty()) {
    point = std::string(parts[0]);
    next = 1;
  }
  if (point.empty()) return fail("no step point");
  if (next >= parts.size()) return fail("no action (pause=MS | pause-until=expired|other-acquired|other-inside | crash | delay=MS)");
  StepAction action;
  action.point = point;
  action.spec = std::string(spec);
  const std::string_view kind = parts[next];
  if (kind == "pause") {
    // A bare pause used to stop the client with nothing to resume it.
    return fail("pause needs a length or a condition: pause=MS or pause-until=expired|other-acquired|other-inside");
  } else if (kind.starts_with("pause=")) {
    int ms = 0;
    if (!parse_int(kind.substr(6), ms) || ms < 0) return fail("pause needs a number of ms >= 0");
    action.kind = StepAction::Kind::pause;
    action.pause.ms = std::chrono::milliseconds{ms};
  } else if (kind.starts_with("pause-until=")) {
    const auto until = parse_pause_until(kind.substr(12));
    if (!until) return fail("pause-until takes expired, other-acquired or other-inside");
    action.kind = StepAction::Kind::pause;
    action.pause.until = *until;
  } else if (kind == "crash") {
    action.kind = StepAction::Kind::crash;
  } else if (kind.starts_with("delay=")) {
    int ms = 0;
    if (!parse_int(kind.substr(6), ms) || ms < 0) return fail("delay needs a number of ms >= 0");
    action.kind = StepAction::Kind::delay;
    action.delay = std::chrono::milliseconds{ms};
  } else {
    return fail("unknown action '" + std::string(kind) + "'");
  }
  if (next + 1 < parts.size() && !parse_int(parts[next + 1], action.client)) return fail("client must be a number");
  if (next + 2 < parts.size() && (!parse_int(parts[next + 2], action.times) || action.times < 0))
    return fail("times must be a number >= 0");
  if (next + 3 < parts.size()) return fail("too many fields");
  return action;
}

}  // namespace locklab::harness
