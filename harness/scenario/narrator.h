// The narrator of a scenario (scenario.h): numbered, timestamped steps -- who
// sent which command and what Redis answered (it watches every request through
// redis::TrafficObserver), plus the story's own lines -- and the critical
// sections; every step recorded as data for the view (story_record.h) and
// printed as the playback says (step_through.h); and the named threads (Actor)
// whose commands it narrates under their names.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "redis/connection.h"
#include "redis/result.h"

#include "scenario/key_ledger.h"
#include "scenario/step_through.h"
#include "scenario/story_record.h"
#include "support/text.h"  // fixed(): numbers as the narration prints them

namespace locklab::harness {

// Names the calling thread for the narrator while in scope.
class ActorName {
 public:
  explicit ActorName(std::string name);
  ~ActorName();
  ActorName(const ActorName&) = delete;
  ActorName& operator=(const ActorName&) = delete;

 private:
  std::string previous_;
};
const std::string& current_actor();  // "" on an unnamed thread (a watchdog timer, a subscriber)

class Narrator final : public redis::TrafficObserver {
 public:
  explicit Narrator(bool print);
  // The narrator of a fork()ed child (ProcessActor): it records and prints
  // nothing, every step goes down `fd` as one line for the parent to relay().
  static std::unique_ptr<Narrator> forwarding_to(int fd);
  ~Narrator() override;  // stops watching
  Narrator(const Narrator&) = delete;
  Narrator& operator=(const Narrator&) = delete;

  // A numbered step by the calling thread's actor (or the narrator's own voice);
  // `detail` adds what the view should know of it (a lease seen from outside).
  void say(std::string text, const StepDetail& detail = StepDetail::narration());
  // The calling actor died at step point `point` (a SimulatedCrash): narrated; it released nothing.
  void crashed(const std::string& point);
  // A server's name on the narrated lines and the view's lanes ("N1" for a Redlock
  // node): its commands are shown as "[N1] SET ...". server_name() is the endpoint when unnamed.
  void name_server(const std::string& endpoint, std::string name);
  std::string server_name(const std::string& endpoint) const;
  // The critical-section bars of the timeline: the calling actor entered / left.
  void enter();
  void leave();

  // Who held the lock when ({clients, labels, sections, overlaps}) and the numbered steps.
  nlohmann::json timeline() const;
  nlohmann::json steps() const;
  // The view's lanes (StoryRecord::view) as of now.
  nlohmann::json view() const;
  // A lock the story made: its key on each server becomes a lane of the view.
  void watch_key(const std::string& key, std::chrono::milliseconds ttl, const std::vector<std::string>& servers);
  // The generation the story is told with: the lanes read its scripts (LockLanes::story_lock).
  void story_lock(std::string generation);
  // How the steps reach the terminal (step_through.h): start before the first
  // step; finish_playback() returns once every step is on the screen.
  void start_playback(Playback playback, std::chrono::milliseconds pace);
  void finish_playback();
  void flush_playback();  // a story that dies: the rest at once
  double now_ms() const;
  // A steady_now_ms() reading (a server event's stamp) as story time.
  double story_ms(double steady_ms) const;
  // The traffic in figures, for stories that measure the mechanism: the
  // requests `who` sent that were answered so far (its round trips), and
  // whether a pub/sub push of `kind` ("message") arrived.
  int round_trips(const std::string& who) const;
  bool saw_push(const std::string& kind) const;

  // The parent's side of a forwarded line: kind 'S' a step, 'E' enter, 'L' leave,
  // 'D' a step with its detail (`text` is {"text", "detail"} as JSON).
  void relay(char kind, const std::string& who, const std::string& text);

  void sent(const redis::Endpoint& to, const redis::Args& request) override;
  void received(const redis::Endpoint& from, const redis::Reply* reply, const Error* error) override;

 private:
  void emit(const std::string& who, const std::string& text,
            const StepDetail& detail = StepDetail::narration());  // callers hold mutex_
  void enter_as(const std::string& who);                         // callers hold mutex_
  void leave_as(const std::string& who);                         // callers hold mutex_
  void forward(char kind, const std::string& who, const std::string& text);
  void forward_detail(const std::string& who, const std::string& text, const StepDetail& detail);
  bool watched() const;
  int lane_of(const std::string& who);  // callers hold mutex_

  bool print_;
  int forward_fd_ = -1;  // >= 0: a child's narrator (forwarding_to)
  std::chrono::steady_clock::time_point start_;
  double start_ms_;  // start_ as steady_now_ms() reads it
  std::thread::id director_;  // the main thread: its unnamed traffic is stagecraft, not story
  mutable std::mutex mutex_;
  StoryRecord record_;   // every step as data
  StepPrinter printer_;  // every step on the terminal
  std::vector<std::string> lanes_;
  std::map<std::string, double> open_sections_;
  nlohmann::json sections_ = nlohmann::json::array();
  // Requests waiting for their reply, per (thread, server): replies come back in order.
  struct PendingRequest {
    std::string text;       // as narrated
    redis::Args request;    // for the ledger
    redis::Args recorded;   // for the view (recorded_args)
    double sent_at_ms;      // steady_now_ms()
  };
  std::map<std::pair<std::thread::id, std::string>, std::deque<PendingRequest>> pending_;
  KeyLedger ledger_;                                // who wrote and deleted which key (key_ledger.h)
  std::map<std::string, std::string> server_names_;  // endpoint -> name (name_server)
  int last_step_ = 0;                                // the number of the last step recorded
  std::map<std::string, int> round_trips_;  // answered requests per actor (who_of)
  std::set<std::string> pushes_;            // the kinds of the pushed messages seen
};

// A named thread. Joined by join() or by the destructor. A SimulatedCrash
// thrown in `body` (a crash_at() step hook) ends it like a crashed process:
// narrated, nothing released.
class Actor {
 public:
  Actor(Narrator& narrator, std::string name, std::function<void()> body);
  ~Actor();
  Actor(const Actor&) = delete;
  Actor& operator=(const Actor&) = delete;
  void join();

 private:
  std::thread thread_;
};

}  // namespace locklab::harness
