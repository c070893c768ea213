// Every narrated step of a story as data, for --json and the --html view
// (report/story_page.h): its number, time, who, kind and text; for a command,
// the request, the reply and the server; when it concerns a lock key, what it
// did there and who owned the key after it (lock_lanes.h); and at every step
// the state of the story: who is inside the critical section, and each lock
// key's owner and lease as the server holds them.
//
// The Narrator owns one and calls it under its own mutex; nothing here talks
// to Redis: it only reads what the narrator saw go by.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "redis/connection.h"
#include "redis/reply.h"

#include "scenario/lock_lanes.h"

namespace locklab::harness {

// What a step is beyond its line of text.
struct StepDetail {
  // "command" (a request and its reply: one step), "push" (a message Redis
  // pushed), "narration" (the story's own line), "enter" / "leave" (the
  // critical section).
  std::string kind = "narration";
  redis::Args command;     // the request, each argument cut to kArgRecorded characters
  nlohmann::json reply;    // the reply as data (reply_data())
  std::string reply_text;  // as printed
  std::string server;      // "host:port" it went to
  double sent_at_ms = -1;  // steady clock (ms since its epoch) when the request left; -1 unknown
  // EVAL or EVALSHA: the script's SHA-1 (an EVAL's from its whole body, which `command` holds cut
  // short), so that the lanes know the script exactly (impls/registry.h, find_script).
  std::string script;
  // A lease seen from outside (lease_watch's PTTL polls): the key and its PTTL.
  std::string observed_key;
  long long observed_pttl = 0;
  // What the step's text claims, as data the narration test checks against
  // the recorded events (tests/narration_claims_test.py; claims.h says the
  // vocabulary): [{"dead": "A"}, {"before": [REF, REF]}, ...]. Empty: none.
  nlohmann::json claims = nlohmann::json::array();

  static StepDetail narration() { return {}; }
  static StepDetail of_kind(std::string kind);
  static StepDetail observed(std::string key, long long pttl);
  static StepDetail claiming(nlohmann::json claims);
  // A forked ProcessActor's narrator sends its steps up a pipe, one line each.
  nlohmann::json to_json() const;
  static StepDetail from_json(const nlohmann::json& data);
};

inline constexpr std::size_t kArgRecorded = 64;  // tokens and owner fields fit; script bodies are cut
redis::Args recorded_args(const redis::Args& request);
// A reply as data: null (nil), a number, a string, {"status": s}, {"error": e}, or an array of those.
nlohmann::json reply_data(const redis::Reply& reply);
double steady_now_ms();

class StoryRecord {
 public:
  // The lock a story made (Scenario::make_lock): its key on each of its servers becomes a lane.
  void watch_key(const std::string& key, double ttl_ms, const std::vector<std::string>& servers);
  void name_server(const std::string& endpoint, const std::string& name) { lanes_.name_server(endpoint, name); }
  void story_lock(std::string generation) { lanes_.story_lock(std::move(generation)); }

  // Records one step at story time t_ms (started_at_ms: the story's start on
  // the steady clock, to place a request's send time); returns its number.
  int record(double t_ms, double started_at_ms, const std::string& who, const std::string& text,
             const StepDetail& detail);

  // Every step so far, each lock key named by its lane's label as it is now.
  nlohmann::json steps() const;
  // The lanes of the view at the story's end: clients (critical sections,
  // overlaps) and lock keys (owners, leases, events).
  nlohmann::json view(double end_ms) const;

 private:
  nlohmann::json state_now(double t_ms) const;
  void track_section(const std::string& who, const std::string& kind, double t_ms);

  nlohmann::json steps_ = nlohmann::json::array();
  LockLanes lanes_;
  std::vector<std::string> clients_;         // every actor, in order of appearance
  std::map<std::string, double> inside_;     // who is in the critical section, since when
  nlohmann::json sections_ = nlohmann::json::array();  // [{who, from, to}]
};

}  // namespace locklab::harness
