// What every scenario main is composed of (scenarios/*.cpp replay the source
// articles' stories, one lesson each):
//
//   Scenario   the command line (--lock, --json, --html, --step-through, --pace,
//              --quiet, --lang, --help), the lesson's expected outcome per
//              generation, the verdict and the exit code
//   messages   (messages.h) every narrated line in English or Chinese (--lang zh),
//              from one catalog: story.say("... {} ...", value)
//   Narrator   numbered, timestamped steps: who sent which command and what
//              Redis answered (it watches every request through
//              redis::TrafficObserver), plus the story's own lines; the
//              critical sections; every step as data (story_record.h) for
//              --json and the --html page (report/story_page.h), and on the
//              terminal at the pace --step-through / --pace ask (step_through.h)
//   Actor      a named thread ("A", "B"): its commands are narrated under its name
//   ProcessActor (process_actor.h) a named fork()ed child, for stories that
//              stop a whole process (SIGSTOP stops its watchdog too)
//
// Waiting is by polled conditions (conditions.h, redis_probe.h) and step gates (step_gate.h),
// never by sleeps, so a story replays the same way on every run.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "redis/connection.h"
#include "redis/result.h"

#include "lock.h"
#include "registry.h"

#include "scenario/messages.h"
#include "scenario/narrator.h"
#include "servers/keyspace_feed.h"
#include "servers/redis_server.h"
#include "support/conditions.h"
#include "support/redis_probe.h"

namespace locklab::harness {

inline constexpr const char* kScenarioSchema = "locklab.scenario/1";

// One generation a story can be told with, and what the lesson expects of it.
struct StoryLock {
  std::string name;           // registry name ("set-nx-px-token")
  bool race_expected = true;  // true: the story's failure must happen; false: the fix must hold
  std::string window;         // the step point where the story parks this generation (if it parks one)
  std::string story = "";     // the story as told with this lock, when it differs from the spec's
};

// A switch of the story (--guard, --delayed-restart): given on the command
// line, it may change what the lesson expects of every lock.
struct StoryFlag {
  std::string name;                   // without the dashes: "guard" is --guard
  std::string help;                   // one line for --help
  std::optional<bool> race_expected;  // set: with the flag, the lesson expects this instead
  std::string story = "";             // what the flag adds to the story told ("then A is SIGSTOPped")
};

// What the header and the verdict call the story's failure and its absence.
// Most stories show a race; a story that shows a mechanism (pubsub_wakeup:
// polling or a wake-up message) names its own outcomes.
struct VerdictWords {
  std::string shown = "race shown";                   // the failure happened, as the lesson expects
  std::string holds = "fix holds";                    // it did not, as the lesson expects
  std::string happened = "the race happened";         // observed, before the spec's race text
  std::string not_happened = "the race did not happen";
  std::string expects = "the race";                   // header: (the lesson expects the race: ...)
  std::string expects_not = "the race not to happen";
};

struct ScenarioSpec {
  std::string name;    // binary name, "check_then_delete_race"
  std::string source;  // where the story is told, by the article's own heading: "seed 004 §6 优化分布式锁_防止误删除"
  std::string story;   // one line: what happens, true with every lock (StoryLock::story tells one lock's)
  std::string race;    // the race, in the articles' terms: "index1 deletes index2's lock (误删)"
  std::vector<StoryLock> locks;  // the first is the default of --lock
  std::vector<StoryFlag> flags = {};  // optional switches of the story
  VerdictWords words = {};
};

// The stage most stories are told on: one redis-server of their own, a probe
// on it for the observer, and the settings every client of the story starts from.
struct SingleServerStage {
  std::unique_ptr<RedisServer> server;
  RedisProbe probe;
  LockConfig config;  // key, ttl and this one server; everything else at LockConfig's defaults
};

// A Redlock story's stage: independent masters, and the settings naming them all.
struct MastersStage {
  ServerList masters;
  LockConfig config;  // key, ttl and every master, in order; everything else at LockConfig's defaults
};

class Scenario {
 public:
  // Parses the command line; --help prints and exits 0, a usage error exits 2.
  Scenario(ScenarioSpec spec, int argc, char** argv);

  const std::string& lock_name() const { return lock_.name; }
  // What the story's generation promises (impls/registry.h): a story asks "does it
  // notify waiters?", never "is it reentrant-watchdog?".
  const Capabilities& capabilities() const;
  // True when the story's generation runs a script of this role (impls/script_shape.h):
  // "is its release one compare-and-delete script?", not "is it lua-safe-delete?".
  bool runs_script(ScriptRole role) const;
  bool race_expected() const { return lock_.race_expected; }
  // True when --<name> was given (a StoryFlag of the spec).
  bool flag(std::string_view name) const;
  const std::string& window() const { return lock_.window; }
  Narrator& narrator() { return *narrator_; }
  // The story as told with this lock and these flags (the header's second line), in the narration's language.
  std::string told_story() const;

  // The story's means: a failure here is no lesson, it exits 1 with one line,
  // "WHAT: ERROR" in the narration's language (`what` a catalog key, its {} filled
  // with `args`; the error through translated_error()).
  template <class T, class... Args>
  T must(Result<T> result, std::string_view what, const Args&... args) {
    if (!result) die("{}: {}", text(what, args...), translated_error(result.error().message));
    return std::move(result).value();
  }
  // Starts the story's redis-server and its probe (a failure exits 1, as must()).
  SingleServerStage single_server(std::chrono::milliseconds ttl, std::string key = "lock");
  MastersStage masters(std::size_t count, std::chrono::milliseconds ttl, std::string key = "lock");
  std::unique_ptr<DistributedLock> make_lock(const LockConfig& config);
  std::unique_ptr<DistributedLock> make_lock(const std::string& name, const LockConfig& config);
  // Waits for `condition`, narrating what was awaited and for how long; exits 1
  // if it never holds within `timeout` (the story could not be told).
  void wait_for(const std::string& what, const Condition& condition,
                std::chrono::milliseconds timeout = std::chrono::seconds{10});
  // A numbered step in the calling actor's name: `english` from the message
  // catalog in the narration's language, its {} filled with `args` (messages.h).
  template <class... Args>
  void say(std::string_view english, const Args&... args) {
    narrator_->say(text(english, args...));
  }
  // A step whose text claims an order, a time against a lease or a death:
  // `claims` says which, as data (claims.h), for the narration test.
  template <class... Args>
  void say_claiming(const std::vector<nlohmann::json>& claims, std::string_view english, const Args&... args) {
    narrator_->say(text(english, args...), StepDetail::claiming(nlohmann::json(claims)));
  }
  // The server's own record of the lock key so far, in the order the server
  // ran it (the witness's keyspace feed, servers/keyspace_feed.h), as story
  // time: {"node", "complete", "items": [{"t_ms", "key", "event"}]}; null for a
  // story without a single server. The feed stops at the first call: ask only
  // once the traffic to be ordered is over (finish() asks for the document).
  const nlohmann::json& server_log();
  // Releases `lock` and narrates the outcome with `line` ("releases: {}"); a
  // release whose reply counts the holds left (Capabilities::release_reply,
  // generation 5's) also says so, once a story: the reverse of seed 004 §8's.
  Release release(DistributedLock& lock, std::string_view line = "releases: {}");
  // Runs `look` under the actor name "observer": a probe's reads (PTTL, HGETALL)
  // are narrated like a client's commands, so the reader sees what Redis holds.
  template <class Look>
  auto observe(Look&& look) {
    ActorName as("observer");
    return look();
  }
  // A named thread running `body` (see Actor).
  std::unique_ptr<Actor> actor(std::string name, std::function<void()> body) {
    return std::make_unique<Actor>(*narrator_, std::move(name), std::move(body));
  }

  // `who` tries `lock` once (no wait) as a named actor, joined at once; true
  // when it got the lock, its critical section then open on the timeline.
  // `after_try` runs in the actor right after the attempt (to narrate it).
  bool tries_once(std::string who, DistributedLock& lock, const std::function<void()>& after_try = {});
  // `who` tries `lock` (waiting up to `wait`) as a named actor, joined at once, and says
  // what it was told: `line` filled with the outcome, the lock's error after it if it gave
  // one; acquired, its critical section opens. took_ms: from the try to its answer.
  struct Attempt {
    Acquire outcome = Acquire::error;
    double took_ms = 0;
  };
  Attempt attempt(std::string who, DistributedLock& lock, std::chrono::milliseconds wait = {},
                  std::string_view line = "try_acquire => {}");

  // Writes --json and --html, prints the verdict once every step is on the
  // screen, returns the exit code: 0 when the race happened exactly when expected.
  int finish(bool race_happened, const std::string& detail);

  // The story could not be told: the steps so far, then "NAME: WHY" on stderr,
  // exit 1. `why` is a catalog key (messages.cpp), its {} filled with `args`, so
  // a --lang zh student reads it in Chinese (tests/story_errors_test.py finds a
  // key the catalog lacks).
  template <class... Args>
  [[noreturn]] void die(std::string_view why, const Args&... args) {
    die_told(text(why, args...));
  }

 private:
  [[noreturn]] void die_told(const std::string& why);

  void print_header(bool stepped) const;

  ScenarioSpec spec_;
  StoryLock lock_;
  std::string json_path_;
  std::string html_path_;
  bool quiet_ = false;
  bool reply_convention_told_ = false;  // release()'s note on generation 5's replies
  std::vector<std::string> flags_given_;
  std::unique_ptr<Narrator> narrator_;  // made once --quiet is known
  std::unique_ptr<KeyspaceFeed> feed_;  // single_server(): the lock key as the server saw it
  nlohmann::json server_log_;           // what feed_ saw, once it stopped

  void write_outputs(const nlohmann::json& document);
};

// A holder whose work is short says when its release begins, `asked_ms` (story
// time) being when it asked for the lock: well within `lease` (a claim the
// narration test checks) when the story is on time; on a machine so loaded
// that half the lease went by, how late it is instead, so the line stays true.
void say_release_begins(Scenario& story, const std::string& who, double asked_ms, std::chrono::milliseconds lease);

// The second act of a crashed-holder story: B tries the lock for `patience`
// (entering, leaving and releasing if it gets in; narrating `gives_up` if not),
// then the observer probes the key's PTTL. A key with a TTL that still kept B
// out is no lesson: the story exits 1.
struct SecondTry {
  bool got_in = false;
  long long waited_ms = 0;  // how long B waited
};
// `gives_up`: B's line when it gives up, already in the narration's language (text()).
SecondTry b_tries_after_crash(Scenario& story, DistributedLock& b_lock, std::chrono::milliseconds patience,
                              RedisProbe& probe, const std::string& key, const std::string& gives_up);

}  // namespace locklab::harness
