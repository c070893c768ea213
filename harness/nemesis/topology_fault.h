// What every topology fault shares (nemesis/node_faults.h: failover and the node
// faults; nemesis/network_faults.h: net and unavailable): its spec and its record, the
// topology, and the watch over a holder parked at a gate -- over once another
// client acquired (the story happened) or the fault's patience ran out.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "redis/result.h"

#include "nemesis/cross_process_gate.h"
#include "nemesis/fault.h"
#include "nemesis/fault_env.h"
#include "nemesis/fault_record.h"
#include "nemesis/fault_spec.h"
#include "servers/lock_server_layout.h"

namespace locklab::harness {

// Acquisitions by every client but `except`, so far.
std::int64_t acquisitions_by_others(const NemesisContext& context, int except);
std::string ms_text(std::chrono::milliseconds ms);  // "300 ms"

// How long a parked holder may wait for a contender: less than its own lease,
// so what shows is the fault's doing, not a pause longer than the TTL.
std::chrono::milliseconds short_patience(std::chrono::milliseconds ttl);
// Long enough for the holder's key to expire and a contender to take it.
std::chrono::milliseconds long_patience(std::chrono::milliseconds ttl);

// How many lock servers the fault acts on; a usage error if the run's lock uses no Redis.
Result<std::size_t> servers_to_act_on(const FaultSpec& spec, const FaultEnv& options);

class TopologyFault : public Fault {
 public:
  explicit TopologyFault(FaultSpec spec) : spec_(std::move(spec)) {}
  std::string name() const override { return spec_.name; }
  nlohmann::json record() const override { return {{"spec", spec_.text}, {"applied", applied_json(events_, go_ns_)}}; }
  // Set by note_acted() where the fault really changed the servers or the
  // links; a "nothing done" note is not acting. Why not: its last note.
  bool acted() const override { return acted_; }

 protected:
  void note(const NemesisContext& context, std::string what);
  void note_acted(const NemesisContext& context, std::string what) {
    acted_ = true;
    note(context, std::move(what));
  }
  static LockServerLayout* topology(const NemesisContext& context) { return context.topology; }

  // The watch over `holder`, parked at `gate`: begin_watch() once the fault
  // has acted; watch_over() on each tick notes how it ended and lets the gate
  // go once another client acquired (`overtaken`) or `patience` ran out ("no
  // other client acquired within <patience>" + `waited_tail`). True once over.
  void begin_watch(const NemesisContext& context, int holder);
  bool watch_over(const NemesisContext& context, int holder, std::chrono::milliseconds patience,
                  CrossProcessGate& gate, const std::string& overtaken, const std::string& waited_tail = "");
  static std::string overtaken_note(int holder);  // "another client acquired while client H still holds"
  // Another client got in since begin_watch (HeldContenderFault: and reached its write).
  virtual bool overtaken(const NemesisContext& context, int holder) const;

  FaultSpec spec_;
  std::chrono::steady_clock::time_point since_{};  // when the fault's current episode began
  std::int64_t others_before_ = 0;                 // acquisitions_by_others() as the watch began

 private:
  std::vector<AppliedEvent> events_;
  std::int64_t go_ns_ = 0;
  bool acted_ = false;
};

// A topology fault that parks a client at a gate. At the end of the run the
// fault undoes its own doing; what lets a parked client go is the fault's
// tick, and at worst the gate's own bound (cross_process_gate.cpp, kGateLimit).
class GatedFault : public TopologyFault {
 public:
  GatedFault(FaultSpec spec, std::string point, int client)
      : TopologyFault(std::move(spec)), gate_(std::move(point), client) {}
  StepHook client_step_hook(int client) override { return gate_.hook(client); }
  // A gate armed that nobody reached: the fault waited for a holder that never came.
  std::string why_not_acted() const override {
    if (warm_up_.waiting)
      return "only " + std::to_string(warm_up_.seen) + " of the " + std::to_string(warm_up_.sections) +
             " acquisitions its warm-up waits for happened: no holder was parked";
    if (gate_.ever_armed() && gate_.parked() < 0)
      return "no client reached step point " + gate_.point() + ", where the fault waits for a holder";
    return TopologyFault::why_not_acted();
  }
  void after_run(NemesisContext& context) final {
    let_all_go();
    undo(context);
  }

 protected:
  virtual void undo(NemesisContext&) {}
  virtual void let_all_go() { gate_.release(); }

  // warm-up=N: the gate is armed only once N acquisitions were made, any
  // client's, so the holder it parks is not among the run's first (the N-th
  // acquirer itself, if it reaches the gate after the arming): a lock
  // whose state counts its acquisitions (a fencing token) has counted at
  // least N by then. start_warm_up() from before_run, warm_up_over() on every
  // tick; `arm` runs once, at the first call that sees the N (at once for 0).
  void start_warm_up(const NemesisContext& context, std::int64_t sections, const std::function<void()>& arm);
  void warm_up_over(const NemesisContext& context, const std::function<void()>& arm);

  CrossProcessGate gate_;

 private:
  struct WarmUp {
    std::int64_t sections = 0;
    std::int64_t seen = 0;  // acquisitions at the last look
    bool waiting = false;
  } warm_up_;
};

}  // namespace locklab::harness
