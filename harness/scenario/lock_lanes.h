// What each lock key held on its server, step by step, rebuilt from the
// commands the narrator saw and their replies: who owns it (whose value it
// holds), its lease (set by SET ... PX, EXPIRE, a script's PEXPIRE; renewed by
// a watchdog; seen by PTTL), and when that lease ran out. Nothing is asked of
// Redis for it: a read would be traffic the story does not have.
//
// Plain commands are read for what Redis documents them to do (SET NX PX,
// SETNX, EXPIRE, PEXPIRE, GETSET, DEL, GET, EXISTS, PTTL, TTL, HGETALL).
// Scripts are known by the story's generation: impls/registry.h's find_script
// names the script a SHA-1 is (EVALSHA's argument, or an EVAL's whole body
// hashed by the narrator: StepDetail::script), its role and how many KEYS and
// ARGV it takes (impls/script_shape.h says each role's reply).
// A script that is not the generation's, or called with other counts than its
// own, leaves the key's state unknown until the next read, as does anything
// else on a lock key the view does not read.
// Every read (GET, PTTL, EXISTS, HGETALL, a lease_watch observation) is also a
// check: where it contradicts the rebuilt state the lane counts a mismatch
// (and takes what was read), so a test can hold the rebuilding to the truth.
// A server that restarts empty (redlock_restart_without_persistence) is one
// such contradiction: nothing narrated says its keys are gone.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "redis/connection.h"

namespace locklab::harness {

class LockLanes {
 public:
  void watch(const std::string& key, double ttl_ms, const std::vector<std::string>& servers);
  void name_server(const std::string& endpoint, const std::string& name);
  // The generation the story is told with (its registry name): whose scripts the lanes read.
  void story_lock(std::string generation) { generation_ = std::move(generation); }

  // A command's effect on a lock key at story time t; nullopt when it touched none.
  // The result: {lane (its index), key (the lane's label so far), effect, held, owner (after),
  // lease_left_ms (after; null: no TTL), lease_kind}.
  // `sent`: when the request left (story ms; -1 unknown). Redis acted somewhere between
  // `sent` and `t`: a lease it set runs out from `sent` on, give or take that window.
  // `script`: an EVAL's or EVALSHA's SHA-1 (StepDetail::script); "": EVALSHA's own argument.
  std::optional<nlohmann::json> apply_command(double t, int step, const std::string& who, const redis::Args& command,
                                              const nlohmann::json& reply, const std::string& server,
                                              double sent = -1, const std::string& script = "");
  // A PTTL seen from outside the traffic (lease_watch).
  std::optional<nlohmann::json> apply_observed_pttl(double t, int step, const std::string& key, long long pttl);

  // Every lane at time t, in lane order: {lane, key, held, known, owner, lease_left_ms, lease_kind}.
  nlohmann::json state(double t) const;
  // A lane's label as the story ends ("lock", or "lock @ node 2" once the key is on several
  // servers): steps recorded before the second server appeared are relabelled with it.
  std::string label(std::size_t lane) const { return lane < lanes_.size() ? label_of(lanes_[lane]) : ""; }
  // Every lane's history up to `end`: {key, server, label, owners, leases, events, mismatches}.
  nlohmann::json history(double end) const;

 private:
  struct Lane {
    std::string key, server;
    double ttl_ms = 0;
    bool held = false;
    bool known = true;   // false: a command we cannot read changed it
    std::string owner;   // who wrote the value it holds ("?" unknown)
    std::optional<double> lease_until;  // story ms; nullopt: no TTL
    std::string lease_kind;             // "ttl" (Redis counts it), "stamp" (a timestamp in the value), "unknown"
    std::string lease_event;            // what started the current lease: "set", "renewed", "seen"
    int lease_step = -1;
    double lease_window = 0;            // the current lease's start is known to within this many ms
    bool lease_open = false;
    double owner_from = 0, lease_from = 0;
    int mismatches = 0;
    nlohmann::json owners = nlohmann::json::array();  // [{from, to, who}]
    nlohmann::json leases = nlohmann::json::array();  // [{from, until, kind, step}]
    nlohmann::json events = nlohmann::json::array();  // [{t, step, what}]
  };
  struct Effect {
    std::string what;  // "acquired", "refused", "renewed", "released", "deleted index3's lock", ...
  };

  Lane* lane_for(const std::string& key, const std::string& server);
  std::string label_of(const Lane& lane) const;
  std::size_t index_of(const Lane& lane) const;
  std::string owner_of(const std::string& value) const;
  static std::string refused_by(const Lane& lane);  // "refused: held by X" (or "the key exists")
  // What a lane does, step by step (static: history() plays a copy to the end).
  static void advance(Lane& lane, double t);  // a TTL that ran out before t: the key expired
  static void hold(Lane& lane, double t, const std::string& owner);
  static void vacate(Lane& lane, double t, int step, const std::string& what, double uncertain = 0);  // the key is gone
  void set_lease(Lane& lane, double t, int step, std::optional<double> until, const std::string& kind,
                 const std::string& event) const;
  static void close_lease(Lane& lane, double t);
  static bool just_expired(const Lane& lane, double t);
  void unknown(Lane& lane, double t, int step, const std::string& what) const;
  // A read or a reply that tells whether the key exists. `counts`: a contradiction is a
  // mismatch. A client's own refusal does not count: replies to concurrent clients are
  // narrated in the order they arrive, which need not be the order Redis ran them in.
  void seen(Lane& lane, double t, int step, bool held, const std::string& owner, bool counts = true) const;
  void seen_pttl(Lane& lane, double t, int step, long long pttl, bool counts = true) const;
  // When the command being applied reached Redis, at the earliest: its send time.
  double began(double t) const { return sent_ >= 0 && sent_ < t ? sent_ : t; }
  void lease_from_value(Lane& lane, double t, int step, const std::string& value) const;

  Effect apply_plain(Lane& lane, double t, int step, const std::string& who, const std::string& name,
                     const redis::Args& command, const nlohmann::json& reply);
  Effect apply_set(Lane& lane, double t, int step, const std::string& who, const redis::Args& command,
                   const nlohmann::json& reply);
  Effect apply_delete(Lane& lane, double t, int step, const std::string& who, const nlohmann::json& reply);
  Effect apply_read(Lane& lane, double t, int step, const std::string& name, const nlohmann::json& reply);
  Effect apply_script(Lane& lane, double t, int step, const std::string& who, const std::string& sha1,
                      const redis::Args& keys, const redis::Args& args, const nlohmann::json& reply);
  Effect apply_compare_and_delete(Lane& lane, double t, int step, const nlohmann::json& reply);
  Effect apply_scripted_acquire(Lane& lane, double t, int step, const std::string& who, bool fenced,
                                const redis::Args& args, const nlohmann::json& reply);
  Effect apply_reentrant_release(Lane& lane, double t, int step, const std::string& who, const redis::Args& args,
                                 const nlohmann::json& reply);
  nlohmann::json effect_json(const Lane& lane, double t, const Effect& effect) const;

  std::deque<Lane> lanes_;  // a deque: a Lane* stays valid while lanes are added
  std::map<std::string, double> watched_;       // lock key -> its lease as configured (ms)
  std::map<std::string, std::string> names_;    // endpoint -> the story's name for it
  std::map<std::string, std::string> holders_;  // a value written (token, owner field, stamp) -> who wrote it
  double sent_ = -1;                            // the send time of the command being applied
  std::string generation_;                      // story_lock()
};

}  // namespace locklab::harness
