// A fault: a Nemesis that can say what it needs provisioned and what it did.
//
// measure() builds one Fault per `--fault SPEC` (nemesis/fault_registry.h's registry), asks
// each what it needs (its own servers, proxies, a replica, the clock shim)
// before the servers start, runs them all through one FaultSet, and writes
// each one's record() into the run document's "faults" array.
//
// Every fault says whether it acted (acted(): it changed what it is for -- a
// client killed, stopped or slowed, a clock skewed and used, servers killed,
// stopped or jumped, links faulted, a failover done). A run whose asked-for
// fault did not act proves nothing about that fault: measure() makes its
// verdict `error` (docs/harness.md, "Faults that did not act").
//
// Acting is not biting: every fault also says whether the race it is there
// for had its chance (bite(), nemesis/bite.h). A run whose fault acted but did
// not bite cannot read `safe`; a matrix cell whose fault did not bite is
// `error` ("not exercised").
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nemesis/bite.h"
#include "nemesis/nemesis.h"

namespace locklab::harness {

// What measure() must provision before the clients start.
struct FaultNeeds {
  bool own_servers = true;          // refuses --redis (cannot act on servers we do not own)
  bool replica_via_proxy = false;   // failover topology
  bool client_proxies = false;      // every client -> every lock server through its own TcpProxy
  bool clock_shim = false;          // lock servers under the clock shim
  bool process_clients = false;     // stops or kills a client: --mode process only
  // Reads the lock's key on its servers (until=expired, the holder's nodes,
  // whether an acquire took the lock): refused for a lock whose key is unknown.
  bool lock_key = false;

  FaultNeeds& operator|=(const FaultNeeds& other);
};

class Fault : public Nemesis {
 public:
  virtual FaultNeeds needs() const { return {}; }
  // What was applied, when (ms since the barrier), for the run document's
  // "faults" array: {"spec": TEXT, "applied": [{"t_ms": .., "what": ..}], ...}.
  virtual nlohmann::json record() const = 0;
  // Whether it acted in this run; read after after_run(). No default: each
  // fault states what acting means for it (docs/faults.md, each fault's "acted").
  virtual bool acted() const = 0;
  // Why it did not act, in its own words (for the verdict's reason). The
  // default: the last thing it recorded, or "nothing was applied".
  virtual std::string why_not_acted() const;
  // Whether the race this fault is for had its chance in this run, from the
  // evidence read after after_run() (nemesis/bite.h). The default, for a fault
  // with no rule of its own: acting counts, and the text says so.
  virtual Bite bite(const BiteEvidence& evidence) const;
  // The longest this fault may stretch the run (a pause's bound, a slow
  // section); measure() adds it to the workload's hard deadline.
  virtual std::chrono::milliseconds allowance(std::chrono::milliseconds /*ttl*/) const { return {}; }
};

// Several faults (and at most a few plain nemeses, e.g. --step actions) in one
// run: every call is forwarded to each, in the order they were added. Step
// hooks run one after another in the client; the first fault with a clock for
// a client gives it.
class FaultSet final : public Fault {
 public:
  void add(std::unique_ptr<Fault> fault) { faults_.push_back(std::move(fault)); }
  void also(Nemesis& nemesis) { others_.push_back(&nemesis); }  // not owned, not recorded
  bool empty() const { return faults_.empty() && others_.empty(); }
  const std::vector<std::unique_ptr<Fault>>& faults() const { return faults_; }

  std::string name() const override;
  void before_run(NemesisContext& context) override;
  void holder_entered(NemesisContext& context, int client) override;
  void tick(NemesisContext& context) override;
  void after_run(NemesisContext& context) override;
  StepHook client_step_hook(int client) override;
  std::shared_ptr<const WallClock> client_clock(int client) override;
  std::vector<std::string> client_environment(int client) override;  // every fault's, in order
  FaultNeeds needs() const override;
  // An array: one record per fault, each with "acted", and "bit" and "bite" once judge_bites() ran.
  nlohmann::json record() const override;
  bool acted() const override;             // every fault of the set acted
  std::string why_not_acted() const override;
  // Asks every fault whether it bit (after after_run()); kept for record() and bit().
  void judge_bites(const BiteEvidence& evidence);
  bool bit() const;  // judged, and every fault of the set bit (true when none was asked for)
  bool schedule_missed() const;  // a fault's own schedule missed (Bite::schedule_missed)
  std::string why_not_bit() const;        // "SPEC: what its bite saw", for each fault that did not bite
  std::vector<KeyLoss> key_losses() const;  // every judged bite's KeyLoss, in order
  std::chrono::milliseconds allowance(std::chrono::milliseconds ttl) const override;  // the sum

 private:
  template <class Call>
  void each(Call call);

  std::vector<std::unique_ptr<Fault>> faults_;
  std::vector<Nemesis*> others_;
  std::vector<Bite> bites_;  // one per fault, in order, once judged
};

}  // namespace locklab::harness
