// Where a client stops for a pause fault (holder-pause, a protocol step
// point's pause, a step action's pause) and how it is let go: the rules that
// end a pause, and the record of every pause (nemesis/bite.h reads its spans).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nemesis/bite.h"
#include "nemesis/fault.h"
#include "nemesis/fault_record.h"
#include "nemesis/shared_cells.h"
#include "support/process_control.h"
#include "support/redis_probe.h"

namespace locklab::harness {

// Clients that must stop at a step point park here: the client says so in
// shared memory and waits; the coordinator (tick) SIGSTOPs its whole process
// and confirms it stopped, then SIGCONTs it when its PauseRule holds. Nothing
// stays stopped: resume_all() (after_run, and the destructor) continues every
// process it stopped. A client that waits elsewhere -- its request parked at
// the fault proxy (nemesis/protocol_faults.h) -- is stopped by stop_waiting()
// and resumed by the same rules.
class ClientParking {
 public:
  struct Rule {
    PauseRule pause;
    std::string at;  // the step point, for the record
  };
  explicit ClientParking(std::vector<Rule> rules);
  ~ClientParking() { resume_all_quietly(); }

  // In the client: stop here under rule `rule`; returns once resumed.
  void park(int client, int rule) const;

  // In the coordinator.
  void tick(const NemesisContext& context);
  // Stop `client`, which has been waiting since `since_ns` somewhere other
  // than park(), under rule `rule`. False when it could not be stopped (an
  // event says why).
  bool stop_waiting(const NemesisContext& context, int client, int rule, std::int64_t since_ns);
  // Called with a client just before tick() or resume_all() continue it (the
  // destructor's last-resort SIGCONT does not): a parked request goes on first.
  void before_continue(std::function<void(int client)> hook) { before_continue_ = std::move(hook); }
  void resume_all(const NemesisContext& context);
  const std::vector<AppliedEvent>& events() const { return events_; }
  int stops() const { return stops_; }  // processes it really stopped (SIGSTOP confirmed)
  // Every pause that ended: who, where, from the stop to the SIGCONT (nemesis/bite.h).
  const std::vector<PauseSpan>& spans() const { return spans_; }
  // Pauses that were exercised: they lasted their length, reached their
  // condition, ran to their bound or to the end of the run, or kept out a
  // client that tried meanwhile. A pause that ended because no other client
  // was left, none of them having tried while it lasted, was not: nobody
  // could exploit it (a pause fault acts only through these).
  int exercised() const { return exercised_; }
  bool reads_lock_key() const;          // a rule waits until=expired: it reads the lock's key
  std::chrono::milliseconds longest_pause(std::chrono::milliseconds ttl) const;  // for the run's deadline

 private:
  struct Stopped {
    PausedProcess guard;
    int rule = 0;
    std::int64_t since_ns = 0;
    std::vector<std::int64_t> records_then;  // every client's record count when it stopped
    std::int64_t others_attempts_then = 0;   // the other clients' acquire attempts when it stopped
    bool inside = false;                     // stopped inside its section (not in its release)
    bool key_seen_gone = false;              // until=expired: its lock's key was read gone since
  };
  enum State : std::int64_t { kFree = 0, kParked = 1 };

  void stop(const NemesisContext& context, int client);
  struct Resume {
    std::string why;
    bool exercised = true;
  };
  std::optional<Resume> why_resume(const NemesisContext& context, int client, Stopped& stopped);
  bool lease_over(const NemesisContext& context, int client, Stopped& stopped, std::int64_t waited);
  bool key_expired(const NemesisContext& context, int client);
  bool other_acquired(const NemesisContext& context, int client, const Stopped& stopped) const;
  bool other_inside(const NemesisContext& context, int client, const Stopped& stopped) const;
  bool others_gone(const NemesisContext& context, int client) const;
  static std::int64_t others_attempts(const NemesisContext& context, int client);
  void resume(int client, const std::string& why, bool exercised = true);
  void resume_all_quietly();

  std::vector<Rule> rules_;
  std::shared_ptr<SharedCells> cells_;  // [3 * client]: state, rule, parked ns
  std::map<int, Stopped> stopped_;
  std::vector<RedisProbe> probes_;
  std::vector<AppliedEvent> events_;
  std::vector<PauseSpan> spans_;
  int stops_ = 0;
  int exercised_ = 0;
  std::function<void(int client)> before_continue_;
};

}  // namespace locklab::harness
