// The faults that act on client processes (docs/faults.md, "Process and client faults"):
//   holder-crash  the holder dies at a step point, like SIGKILL: its whole process group at
//                 once (exit_with_group: watchdog, adapter and all), no release, no destructors
//   holder-pause  the holder's whole process is SIGSTOPped by the coordinator, then SIGCONTed
//                 after MS or once a condition holds (the GC pause)
//   slow-holder   one critical section lasts MS, the process alive (its watchdog keeps renewing)
//   clock-skew    one client's wall clock (LockConfig::clock) is off by MS
//
// A fault that acts inside a client at a step point needs state the client and
// the coordinator share after fork(): SharedCells (an anonymous MAP_SHARED
// mapping made before the clients start).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/redis_probe.h"
#include "nemesis/fault.h"
#include "nemesis/fault_spec.h"
#include "support/process_control.h"

namespace locklab::harness {

// Atomic cells in memory every forked client shares with the coordinator.
class SharedCells {
 public:
  explicit SharedCells(std::size_t count);  // throws std::bad_alloc when mmap fails
  ~SharedCells();
  SharedCells(const SharedCells&) = delete;
  SharedCells& operator=(const SharedCells&) = delete;
  std::atomic<std::int64_t>& operator[](std::size_t i) const { return cells_[i]; }

 private:
  std::atomic<std::int64_t>* cells_;
  std::size_t bytes_;
};

inline constexpr int kMaxFaultClients = 256;  // bounds::clients' maximum

// What a fault did, when (monotonic ns), for its record.
struct AppliedEvent {
  std::int64_t ns = 0;
  std::string what;
};
nlohmann::json applied_json(const std::vector<AppliedEvent>& events, std::int64_t go_ns);

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
  };
  enum State : std::int64_t { kFree = 0, kParked = 1 };

  void stop(const NemesisContext& context, int client);
  struct Resume {
    std::string why;
    bool exercised = true;
  };
  std::optional<Resume> why_resume(const NemesisContext& context, int client, const Stopped& stopped);
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


// "no client <did>" (client -1: any) or "client N never <did>": why a fault did not act.
std::string nobody_did(int client, const std::string& did);

// holder-crash:at=POINT:client=N:times=K
class CrashHolderFault final : public Fault {
 public:
  CrashHolderFault(FaultSpec spec, std::string at, int client, int times);
  std::string name() const override { return "holder-crash"; }
  FaultNeeds needs() const override;
  StepHook client_step_hook(int client) override;
  void tick(NemesisContext& context) override;
  void after_run(NemesisContext& context) override;
  nlohmann::json record() const override;
  bool acted() const override { return !events_.empty(); }  // a client was killed
  std::string why_not_acted() const override;
  Bite bite(const BiteEvidence& evidence) const override;

 private:
  FaultSpec spec_;
  std::string at_;
  int client_, times_;
  std::shared_ptr<SharedCells> cells_;  // [0]: claims; [1 + client]: when it died
  // Outside the section (the SETNX/EXPIRE gap): per dead client, the key it
  // left with no TTL ("" none), read as soon as the coordinator saw it die.
  std::map<int, std::string> keys_without_ttl_;
  std::vector<AppliedEvent> events_;
  std::int64_t go_ns_ = 0;
};

// holder-pause:(ms=MS|until=expired|other-acquired[:max=MS]):at=POINT:client=N
class PauseHolderFault final : public Fault {
 public:
  PauseHolderFault(FaultSpec spec, std::string at, int client, PauseRule rule);
  std::string name() const override { return "holder-pause"; }
  FaultNeeds needs() const override;
  StepHook client_step_hook(int client) override;
  void tick(NemesisContext& context) override { parking_->tick(context); }
  void after_run(NemesisContext& context) override;
  nlohmann::json record() const override;
  bool acted() const override { return parking_->exercised() > 0; }  // a process was stopped, and it counted
  std::string why_not_acted() const override;
  std::chrono::milliseconds allowance(std::chrono::milliseconds ttl) const override;
  Bite bite(const BiteEvidence& evidence) const override { return pause_bite(evidence, parking_->spans()); }

 private:
  FaultSpec spec_;
  std::string at_;
  int client_;
  std::shared_ptr<SharedCells> claimed_;  // [0]: the one pause was taken
  std::shared_ptr<ClientParking> parking_;
  std::int64_t go_ns_ = 0;
};

// slow-holder:ms=MS:client=N
class SlowHolderFault final : public Fault {
 public:
  SlowHolderFault(FaultSpec spec, int client, std::chrono::milliseconds ms);
  std::string name() const override { return "slow-holder"; }
  FaultNeeds needs() const override;
  StepHook client_step_hook(int client) override;
  void after_run(NemesisContext& context) override;
  nlohmann::json record() const override;
  bool acted() const override { return !events_.empty(); }  // a section was made slow
  std::string why_not_acted() const override;
  std::chrono::milliseconds allowance(std::chrono::milliseconds) const override { return ms_; }
  Bite bite(const BiteEvidence& evidence) const override;

 private:
  FaultSpec spec_;
  int client_;
  std::chrono::milliseconds ms_;
  std::shared_ptr<SharedCells> cells_;  // [0]: claimed by client+1; [1]: when it began
  std::vector<AppliedEvent> events_;
  std::int64_t go_ns_ = 0;
};

// clock-skew:client=N:offset=MS
// The skewed client is held stopped from the barrier until another client
// holds the lock (process mode), so it always meets a live lock with its wrong
// clock: the steal, where the generation allows one, happens on every run, not
// only when the scheduler lets the other client win first. Released after
// 10 x ttl at the latest (one client, or nobody else gets in).
//
// A generation reads the client's LockConfig::clock; an adapter (a library in
// another process) reads its own process's CLOCK_REALTIME. So the skewed
// client's process also gets the clock shim in LD_PRELOAD with an offset file
// of this fault's own (client_environment): the adapter it starts inherits
// both, and its Date.now() or time.time() runs MS off too.
class ClockSkewFault final : public Fault {
 public:
  ClockSkewFault(FaultSpec spec, int client, std::chrono::milliseconds offset);
  ~ClockSkewFault() override;
  ClockSkewFault(const ClockSkewFault&) = delete;
  ClockSkewFault& operator=(const ClockSkewFault&) = delete;
  std::string name() const override { return "clock-skew"; }
  FaultNeeds needs() const override;
  std::shared_ptr<const WallClock> client_clock(int client) override;
  std::vector<std::string> client_environment(int client) override;
  void before_run(NemesisContext& context) override;
  void holder_entered(NemesisContext& context, int holder) override;
  void tick(NemesisContext& context) override;
  void after_run(NemesisContext& context) override;
  std::chrono::milliseconds allowance(std::chrono::milliseconds ttl) const override { return 10 * ttl; }
  nlohmann::json record() const override;
  Bite bite(const BiteEvidence& evidence) const override;
  // The skewed client made an acquire attempt with its skewed clock (whether
  // the lock reads that clock is the generation's matter, not the fault's);
  // and when it runs an adapter, that adapter runs under the shim.
  bool acted() const override { return skewed_attempts_ > 0 && adapter_clock_ != AdapterClock::not_skewed; }
  std::string why_not_acted() const override;

 private:
  enum class AdapterClock { none, skewed, not_skewed };  // the skewed client's adapter, if it has one
  void start_skewed_client(const std::string& why);
  void check_adapter_clock(pid_t client_pid);
  std::string offset_file();  // made on first use; "" when it could not be written

  FaultSpec spec_;
  int client_;
  std::chrono::milliseconds offset_;
  std::optional<PausedProcess> held_back_;
  std::chrono::steady_clock::time_point release_by_{};
  std::int64_t skewed_attempts_ = 0;  // the skewed client's acquire attempts, read in after_run
  std::int64_t go_ns_ = 0;
  std::vector<AppliedEvent> events_;
  std::string offset_dir_;  // a temporary folder of its own, removed with the fault
  std::string offset_problem_;
  AdapterClock adapter_clock_ = AdapterClock::none;
  std::string adapter_note_;  // what check_adapter_clock found
};

}  // namespace locklab::harness
