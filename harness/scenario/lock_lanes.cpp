#include "scenario/lock_lanes.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>

#include "registry.h"

namespace locklab::harness {
namespace {

using nlohmann::json;

// A reply reaches the client after Redis acted: a read this close to a
// predicted expiry agrees with it either way.
constexpr double kSlackMs = 15.0;
// A value that is a wall-clock timestamp in ms (generation 2's expiry) is within a day of now.
constexpr long long kStampWindowMs = 24LL * 3600 * 1000;

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

std::optional<long long> long_arg(const std::string& text) {
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<long long> integer_of(const json& reply) {
  if (reply.is_number_integer()) return reply.get<long long>();
  return std::nullopt;
}

bool is_ok(const json& reply) { return reply.is_object() && reply.value("status", "") == "OK"; }
bool failed(const json& reply) { return reply.is_object() && reply.contains("failed"); }
bool error_reply(const json& reply) { return reply.is_object() && reply.contains("error"); }

long long wall_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

json step_or_null(int step) { return step > 0 ? json(step) : json(nullptr); }
json ms_left(double until, double t) { return std::round((until - t) * 1000.0) / 1000.0; }

}  // namespace

void LockLanes::watch(const std::string& key, double ttl_ms, const std::vector<std::string>& servers) {
  watched_[key] = ttl_ms;
  for (const auto& server : servers) lane_for(key, server);
}

void LockLanes::name_server(const std::string& endpoint, const std::string& name) { names_[endpoint] = name; }

LockLanes::Lane* LockLanes::lane_for(const std::string& key, const std::string& server) {
  const auto watched = watched_.find(key);
  if (watched == watched_.end()) return nullptr;
  for (auto& lane : lanes_)
    if (lane.key == key && lane.server == server) return &lane;
  Lane lane;
  lane.key = key;
  lane.server = server;
  lane.ttl_ms = watched->second;
  lanes_.push_back(std::move(lane));
  return &lanes_.back();
}

std::string LockLanes::label_of(const Lane& lane) const {
  const auto same_key = std::count_if(lanes_.begin(), lanes_.end(), [&](const Lane& l) { return l.key == lane.key; });
  if (same_key <= 1) return lane.key;
  const auto name = names_.find(lane.server);
  return lane.key + " @ " + (name == names_.end() ? lane.server : name->second);
}

std::size_t LockLanes::index_of(const Lane& lane) const {
  for (std::size_t i = 0; i < lanes_.size(); ++i)
    if (&lanes_[i] == &lane) return i;
  return lanes_.size();
}

std::string LockLanes::refused_by(const Lane& lane) {
  return lane.held && lane.owner != "?" ? "refused: held by " + lane.owner : "refused: the key exists";
}

std::string LockLanes::owner_of(const std::string& value) const {
  const auto holder = holders_.find(value);
  return holder == holders_.end() ? "?" : holder->second;
}

// ---- what a lane does ----

void LockLanes::close_lease(Lane& lane, double t) {
  if (!lane.lease_open) return;
  lane.leases.push_back({{"from", lane.lease_from},
                         {"to", t},
                         {"until", lane.lease_until ? json(*lane.lease_until) : json(nullptr)},
                         {"kind", lane.lease_kind},
                         {"event", lane.lease_event},
                         {"step", step_or_null(lane.lease_step)}});
  lane.lease_open = false;
}

void LockLanes::set_lease(Lane& lane, double t, int step, std::optional<double> until, const std::string& kind,
                          const std::string& event) const {
  close_lease(lane, t);
  lane.lease_window = t - began(t);
  lane.lease_open = true;
  lane.lease_from = t;
  if (until) until = std::round(*until * 1000.0) / 1000.0;  // story times to the microsecond
  lane.lease_until = until;
  lane.lease_kind = kind;
  lane.lease_event = event;
  lane.lease_step = step;
}

void LockLanes::hold(Lane& lane, double t, const std::string& owner) {
  if (lane.held && lane.owner == owner) return;
  if (lane.held) lane.owners.push_back({{"from", lane.owner_from}, {"to", t}, {"who", lane.owner}});
  lane.held = true;
  lane.owner = owner;
  lane.owner_from = t;
}

void LockLanes::vacate(Lane& lane, double t, int step, const std::string& what, double uncertain) {
  if (lane.held) lane.owners.push_back({{"from", lane.owner_from}, {"to", t}, {"who", lane.owner}});
  close_lease(lane, t);
  lane.held = false;
  lane.known = true;
  lane.owner.clear();
  lane.lease_until.reset();
  lane.lease_kind.clear();
  json event = {{"t", t}, {"step", step_or_null(step)}, {"what", what}};
  if (uncertain > 0) event["uncertain_ms"] = std::round(uncertain * 1000.0) / 1000.0;  // it happened up to this much later
  lane.events.push_back(std::move(event));
}

// The earliest moment the lease can have run out: Redis may have set it later,
// by up to the lease's window, so the expiry is "at until, or up to window after".
void LockLanes::advance(Lane& lane, double t) {
  if (lane.held && lane.lease_kind == "ttl" && lane.lease_until && *lane.lease_until <= t)
    vacate(lane, *lane.lease_until, -1, "the lease ran out: the key expired", lane.lease_window);
}

void LockLanes::unknown(Lane& lane, double t, int step, const std::string& what) const {
  lane.known = false;
  set_lease(lane, t, step, std::nullopt, "unknown", "unknown");
  lane.events.push_back({{"t", t}, {"step", step_or_null(step)}, {"what", what}});
}

// Expired by the rebuilt lease a moment ago, within that lease's window: a reply
// saying the key was still there was answered just before Redis expired it.
bool LockLanes::just_expired(const Lane& lane, double t) {
  if (lane.events.empty()) return false;
  const json& last = lane.events.back();
  return last.value("what", "") == "the lease ran out: the key expired" &&
         last.value("t", -1e18) >= t - kSlackMs - last.value("uncertain_ms", 0.0);
}

// A read: what Redis holds wins over what was rebuilt; a contradiction counts.
void LockLanes::seen(Lane& lane, double t, int step, bool held, const std::string& owner, bool counts) const {
  if (held && !lane.held) {
    if (just_expired(lane, t) && lane.known) return;
    if (lane.known && counts) ++lane.mismatches;
    hold(lane, t, owner);
    lane.known = owner != "?";
    set_lease(lane, t, step, std::nullopt, "unknown", "seen");
    return;
  }
  if (!held && lane.held) {
    const bool due = lane.lease_kind == "ttl" && lane.lease_until && *lane.lease_until <= t + kSlackMs;
    if (lane.known && counts && !due) ++lane.mismatches;
    vacate(lane, t, step, due ? "the lease ran out: the key expired" : "seen gone");
  } else if (held && owner != "?" && owner != lane.owner) {
    if (lane.known && counts) ++lane.mismatches;
    hold(lane, t, owner);
    lane.known = true;
  }
}

void LockLanes::seen_pttl(Lane& lane, double t, int step, long long pttl, bool counts) const {
  if (pttl == -2) return seen(lane, t, step, false, "", counts);
  seen(lane, t, step, true, lane.held ? lane.owner : "?", counts);
  if (pttl == -1) {
    if (lane.lease_kind != "stamp" && (lane.lease_kind != "ttl" || lane.lease_until))
      set_lease(lane, t, step, std::nullopt, "ttl", "seen");
    return;
  }
  const double until = began(t) + static_cast<double>(pttl);
  const double tolerance = kSlackMs + lane.lease_window + (t - began(t));
  const bool agrees = lane.lease_kind == "ttl" && lane.lease_until && std::abs(*lane.lease_until - until) <= tolerance;
  if (agrees) {
    lane.lease_until = std::min(*lane.lease_until, until);  // the later reading is the tighter bound
    return;
  }
  const bool renewed = lane.lease_kind == "ttl" && lane.lease_until && until > *lane.lease_until;
  set_lease(lane, t, step, until, "ttl", renewed ? "renewed" : "seen");
}

// Generation 2 writes its expiry into the value, as the client's wall clock reads it.
void LockLanes::lease_from_value(Lane& lane, double t, int step, const std::string& value) const {
  const auto stamp = long_arg(value);
  const long long now = wall_now_ms();
  if (stamp && std::llabs(*stamp - now) < kStampWindowMs)
    return set_lease(lane, t, step, t + static_cast<double>(*stamp - now), "stamp", "set");
  set_lease(lane, t, step, std::nullopt, "ttl", "set");  // no TTL: only a DEL frees it
}

// ---- commands ----

std::optional<json> LockLanes::apply_command(double t, int step, const std::string& who, const redis::Args& command,
                                             const json& reply, const std::string& server, double sent,
                                             const std::string& script_sha1) {
  if (command.size() < 2) return std::nullopt;
  const std::string name = upper(command[0]);
  const bool script = name == "EVAL" || name == "EVALSHA";
  redis::Args keys{command[1]}, args;
  if (script) {
    const auto count = command.size() >= 3 ? long_arg(command[2]) : std::nullopt;
    if (!count || *count < 1 || static_cast<std::size_t>(3 + *count) > command.size()) return std::nullopt;
    keys.assign(command.begin() + 3, command.begin() + 3 + *count);
    args.assign(command.begin() + 3 + *count, command.end());
  }
  Lane* lane = lane_for(keys.front(), server);
  if (lane == nullptr) return std::nullopt;
  advance(*lane, t);
  sent_ = sent;
  Effect effect;
  if (failed(reply)) {
    unknown(*lane, t, step, "no reply: whether it acted is unknown");
    effect.what = "no reply: outcome unknown";
  } else if (error_reply(reply)) {
    effect.what = "error reply: nothing changed";
  } else {
    const std::string& sha1 = script_sha1.empty() ? command[1] : script_sha1;
    effect = script ? apply_script(*lane, t, step, who, sha1, keys, args, reply)
                    : apply_plain(*lane, t, step, who, name, command, reply);
  }
  sent_ = -1;
  return effect_json(*lane, t, effect);
}

std::optional<json> LockLanes::apply_observed_pttl(double t, int step, const std::string& key, long long pttl) {
  Lane* only = nullptr;
  for (auto& lane : lanes_)
    if (lane.key == key) {
      if (only != nullptr) return std::nullopt;  // on several servers: which one was read is not said
      only = &lane;
    }
  if (only == nullptr) return std::nullopt;
  advance(*only, t);
  seen_pttl(*only, t, step, pttl);
  return effect_json(*only, t, {pttl == -2 ? "seen gone" : "lease seen: PTTL " + std::to_string(pttl) + " ms"});
}

LockLanes::Effect LockLanes::apply_plain(Lane& lane, double t, int step, const std::string& who,
                                         const std::string& name, const redis::Args& command, const json& reply) {
  const std::string value = command.size() > 2 ? command[2] : "";
  if (name == "SET") return apply_set(lane, t, step, who, command, reply);
  if (name == "DEL" || name == "UNLINK") return apply_delete(lane, t, step, who, reply);
  if (name == "SETNX" && integer_of(reply) == 1) {
    holders_.emplace(value, who);
    hold(lane, t, who);
    lease_from_value(lane, t, step, value);
    return {"acquired"};
  }
  if (name == "SETNX") {
    seen(lane, t, step, true, "?", false);
    return {"refused: the key exists"};
  }
  if (name == "GETSET") {
    const std::string before = reply.is_string() ? owner_of(reply.get<std::string>()) : "";
    holders_.emplace(value, who);
    hold(lane, t, who);
    lease_from_value(lane, t, step, value);
    return {"wrote " + who + "'s stamp over " + (before.empty() ? "nothing" : before + "'s")};
  }
  if (name == "EXPIRE" || name == "PEXPIRE") {
    const auto amount = command.size() > 2 ? long_arg(command[2]) : std::nullopt;
    if (integer_of(reply) != 1 || !amount) {
      seen(lane, t, step, false, "");
      return {"no key to expire"};
    }
    const bool renewal = lane.lease_kind == "ttl" && lane.lease_until.has_value();
    const double ms = static_cast<double>(*amount) * (name == "EXPIRE" ? 1000.0 : 1.0);
    set_lease(lane, t, step, began(t) + ms, "ttl", renewal ? "renewed" : "set");
    return {renewal ? "lease renewed" : "lease set"};
  }
  if (name == "GET" || name == "EXISTS" || name == "PTTL" || name == "TTL" || name == "HGETALL")
    return apply_read(lane, t, step, name, reply);
  unknown(lane, t, step, name + ": not read by the view");
  return {"changed in a way the view does not read"};
}

LockLanes::Effect LockLanes::apply_set(Lane& lane, double t, int step, const std::string& who,
                                       const redis::Args& command, const json& reply) {
  if (command.size() < 3) return {"?"};
  bool nx = false, keep_ttl = false;
  std::optional<double> lease_ms;
  for (std::size_t i = 3; i < command.size(); ++i) {
    const std::string option = upper(command[i]);
    if (option == "NX") nx = true;
    if (option == "KEEPTTL") keep_ttl = true;
    if ((option == "PX" || option == "EX") && i + 1 < command.size())
      if (const auto amount = long_arg(command[i + 1]))
        lease_ms = static_cast<double>(*amount) * (option == "EX" ? 1000.0 : 1.0);
  }
  if (!is_ok(reply)) {
    seen(lane, t, step, true, "?", false);
    return {refused_by(lane)};
  }
  if (nx && lane.held && lane.known) {  // NX succeeded: the key was gone although it looked held
    ++lane.mismatches;
    vacate(lane, t, step, "the key was gone (lost by its server, or deleted unseen)");
  }
  holders_.emplace(command[2], who);
  hold(lane, t, who);
  if (lease_ms) set_lease(lane, t, step, began(t) + *lease_ms, "ttl", "set");
  else if (!keep_ttl) lease_from_value(lane, t, step, command[2]);
  return {nx ? "acquired" : "set"};
}

LockLanes::Effect LockLanes::apply_delete(Lane& lane, double t, int step, const std::string& who,
                                          const json& reply) {
  if (integer_of(reply) != 1) {
    seen(lane, t, step, false, "");
    return {"nothing to delete"};
  }
  if (!lane.held) {
    if (lane.known && !just_expired(lane, t)) ++lane.mismatches;
    vacate(lane, t, step, "deleted a key the view had as free");
    return {"deleted"};
  }
  const std::string owner = lane.owner;
  const bool someone_else = owner != who && owner != "?";
  const std::string what = someone_else ? "deleted " + owner + "'s lock" : "released";
  vacate(lane, t, step, what);
  return {what};
}

LockLanes::Effect LockLanes::apply_read(Lane& lane, double t, int step, const std::string& name, const json& reply) {
  if (name == "PTTL" || name == "TTL") {
    const auto left = integer_of(reply);
    if (!left) return {"read"};
    const long long pttl = name == "TTL" && *left >= 0 ? *left * 1000 : *left;
    if (name == "TTL" && *left >= 0) seen(lane, t, step, true, lane.held ? lane.owner : "?");
    else seen_pttl(lane, t, step, pttl);
    return {*left == -2 ? "read: no key" : *left == -1 ? "read: no TTL" : "read: lease left"};
  }
  bool held = false;
  std::string owner = "?";
  if (name == "GET" && reply.is_string()) {
    held = true;
    owner = owner_of(reply.get<std::string>());
  } else if (name == "EXISTS") {
    held = integer_of(reply).value_or(0) > 0;
  } else if (name == "HGETALL" && reply.is_array() && !reply.empty()) {
    held = true;
    if (reply[0].is_string()) owner = owner_of(reply[0].get<std::string>());
  }
  seen(lane, t, step, held, owner);
  return {held ? "read: held by " + (lane.held ? lane.owner : owner) : "read: no key"};
}

// A script the story's generation ran, read by its role (impls/script_shape.h).
LockLanes::Effect LockLanes::apply_script(Lane& lane, double t, int step, const std::string& who,
                                          const std::string& sha1, const redis::Args& keys,
                                          const redis::Args& args, const json& reply) {
  const ScriptShape* script = find_script(generation_, sha1);
  const bool readable = script != nullptr && keys.size() == static_cast<std::size_t>(script->keys) &&
                        args.size() == static_cast<std::size_t>(script->args);
  const auto unread = [&]() -> Effect {
    unknown(lane, t, step, "a script the view does not read");
    return {"changed by a script the view does not read"};
  };
  if (!readable) return unread();
  const auto code = integer_of(reply);
  const auto ttl = args.size() > 1 ? long_arg(args[1]) : std::nullopt;
  switch (script->role) {
    case ScriptRole::compare_and_delete: return apply_compare_and_delete(lane, t, step, reply);
    case ScriptRole::renew:
      if (!ttl) break;
      if (code != 1) return {"renewal refused: the lock is not its own any more"};
      hold(lane, t, owner_of(args[0]) == "?" ? who : owner_of(args[0]));
      set_lease(lane, t, step, began(t) + static_cast<double>(*ttl), "ttl", "renewed");
      return {"lease renewed"};
    case ScriptRole::fenced_acquire:
    case ScriptRole::reentrant_acquire:
      if (!ttl) break;
      return apply_scripted_acquire(lane, t, step, who, script->role == ScriptRole::fenced_acquire, args, reply);
    case ScriptRole::reentrant_release: return apply_reentrant_release(lane, t, step, who, args, reply);
    case ScriptRole::force_unlock:
      if (code == 1) vacate(lane, t, step, "force-unlocked");
      return {code == 1 ? "force-unlocked" : "nothing to unlock"};
    case ScriptRole::leave_queue: return {"left the wait queue"};
    case ScriptRole::fair_acquire:  // generation 8's queue: no story reads it yet
    case ScriptRole::fair_release:
    case ScriptRole::fair_leave: break;
  }
  return unread();
}

LockLanes::Effect LockLanes::apply_compare_and_delete(Lane& lane, double t, int step, const json& reply) {
  const auto code = integer_of(reply);
  if (code == 1) {
    vacate(lane, t, step, "released");
    return {"released"};
  }
  if (code == -1) {
    seen(lane, t, step, false, "");
    return {"nothing to release: the key is gone"};
  }
  seen(lane, t, step, true, "?", false);
  return {"refused: the key holds " + (lane.owner.empty() ? std::string("someone else") : lane.owner) + "'s token"};
}

// Generation 7's acquire answers its fencing token (0 busy); generation 5's nil (or the holder's PTTL).
LockLanes::Effect LockLanes::apply_scripted_acquire(Lane& lane, double t, int step, const std::string& who,
                                                    bool fenced, const redis::Args& args, const json& reply) {
  const auto code = integer_of(reply);
  const bool acquired = fenced ? code.value_or(0) > 0 : reply.is_null();
  if (!acquired) {
    if (!fenced && code) seen_pttl(lane, t, step, *code, false);
    else seen(lane, t, step, true, "?", false);
    return {refused_by(lane)};
  }
  holders_.emplace(args[0], who);
  const std::string owner = owner_of(args[0]);
  const bool again = lane.held && lane.owner == owner;
  hold(lane, t, owner);
  set_lease(lane, t, step, began(t) + static_cast<double>(*long_arg(args[1])), "ttl", "set");
  if (fenced) return {"acquired, fencing token " + std::to_string(code.value_or(0))};
  return {again ? "entered again (hold count + 1)" : "acquired"};
}

LockLanes::Effect LockLanes::apply_reentrant_release(Lane& lane, double t, int step, const std::string& who,
                                                     const redis::Args& args, const json& reply) {
  const auto code = integer_of(reply);
  if (!code) return {"?"};
  if (*code > 0) {
    const auto ttl = long_arg(args[1]);
    hold(lane, t, owner_of(args[0]) == "?" ? who : owner_of(args[0]));
    if (ttl) set_lease(lane, t, step, began(t) + static_cast<double>(*ttl), "ttl", "renewed");
    return {"still held: " + std::to_string(*code) + " hold(s) left"};
  }
  if (*code == 0) {
    vacate(lane, t, step, "released");
    return {"released"};
  }
  if (*code == -1) {
    seen(lane, t, step, false, "");
    return {"nothing to release: the key is gone"};
  }
  seen(lane, t, step, true, "?", false);
  return {"refused: someone else's lock"};
}

// ---- what the view reads ----

json LockLanes::effect_json(const Lane& lane, double t, const Effect& effect) const {
  json lease = nullptr;
  if (lane.held && lane.lease_until) lease = ms_left(*lane.lease_until, t);
  return {{"lane", index_of(lane)},
          {"key", label_of(lane)},
          {"effect", effect.what},
          {"held", lane.held},
          {"owner", lane.held ? lane.owner : ""},
          {"lease_left_ms", lease},
          {"lease_kind", lane.held ? lane.lease_kind : ""}};
}

json LockLanes::state(double t) const {
  json lanes = json::array();
  for (const auto& lane : lanes_) {
    Lane now = lane;
    advance(now, t);
    json lease = nullptr;
    if (now.held && now.lease_until) lease = ms_left(*now.lease_until, t);
    lanes.push_back({{"lane", index_of(lane)},
                     {"key", label_of(lane)},
                     {"held", now.held},
                     {"known", now.known},
                     {"owner", now.held ? now.owner : ""},
                     {"lease_left_ms", lease},
                     {"lease_kind", now.held ? now.lease_kind : ""}});
  }
  return lanes;
}

json LockLanes::history(double end) const {
  json lanes = json::array();
  for (const auto& lane : lanes_) {
    Lane played = lane;
    advance(played, end);
    if (played.held) played.owners.push_back({{"from", played.owner_from}, {"to", end}, {"who", played.owner}});
    close_lease(played, end);
    lanes.push_back({{"key", lane.key},
                     {"server", lane.server},
                     {"label", label_of(lane)},
                     {"ttl_ms", lane.ttl_ms},
                     {"owners", played.owners},
                     {"leases", played.leases},
                     {"events", played.events},
                     {"mismatches", played.mismatches}});
  }
  return lanes;
}

}  // namespace locklab::harness
