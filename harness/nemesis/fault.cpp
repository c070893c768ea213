#include "nemesis/fault.h"

#include <algorithm>

namespace locklab::harness {

FaultNeeds& FaultNeeds::operator|=(const FaultNeeds& other) {
  own_servers = own_servers || other.own_servers;
  replica_via_proxy = replica_via_proxy || other.replica_via_proxy;
  client_proxies = client_proxies || other.client_proxies;
  clock_shim = clock_shim || other.clock_shim;
  process_clients = process_clients || other.process_clients;
  lock_key = lock_key || other.lock_key;
  return *this;
}

std::string Fault::why_not_acted() const {
  const nlohmann::json applied = record().value("applied", nlohmann::json::array());
  if (applied.empty() || !applied.back().contains("what")) return "nothing was applied";
  return applied.back()["what"].get<std::string>();
}

Bite Fault::bite(const BiteEvidence&) const {
  return {acted(), acted() ? "acted (this fault has no bite rule of its own: acting counts)" : "did not act"};
}

template <class Call>
void FaultSet::each(Call call) {
  for (auto& fault : faults_) call(*fault);
  for (auto* other : others_) call(*other);
}

std::string FaultSet::name() const {
  std::string names;
  for (const auto& fault : faults_) names.append(names.empty() ? "" : "+").append(fault->name());
  for (const auto* other : others_) {
    const std::string name = other->name();
    if (name.empty()) continue;  // an observer, not a fault (the run's witness): not one of the run's nemeses
    names.append(names.empty() ? "" : "+").append(name);
  }
  return names.empty() ? "none" : names;
}

void FaultSet::before_run(NemesisContext& context) {
  each([&](Nemesis& n) { n.before_run(context); });
}
void FaultSet::holder_entered(NemesisContext& context, int client) {
  each([&](Nemesis& n) { n.holder_entered(context, client); });
}
void FaultSet::tick(NemesisContext& context) {
  each([&](Nemesis& n) { n.tick(context); });
}
// Every member restores what it did, even when an earlier one throws.
void FaultSet::after_run(NemesisContext& context) {
  std::exception_ptr first;
  each([&](Nemesis& n) {
    try {
      n.after_run(context);
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  });
  if (first) std::rethrow_exception(first);
}

StepHook FaultSet::client_step_hook(int client) {
  std::vector<StepHook> hooks;
  each([&](Nemesis& n) {
    if (auto hook = n.client_step_hook(client)) hooks.push_back(std::move(hook));
  });
  if (hooks.empty()) return {};
  if (hooks.size() == 1) return hooks.front();
  return [hooks = std::move(hooks)](std::string_view point) {
    for (const auto& hook : hooks) hook(point);
  };
}

std::shared_ptr<const WallClock> FaultSet::client_clock(int client) {
  std::shared_ptr<const WallClock> clock;
  each([&](Nemesis& n) {
    if (!clock) clock = n.client_clock(client);
  });
  return clock;
}

std::vector<std::string> FaultSet::client_environment(int client) {
  std::vector<std::string> variables;
  each([&](Nemesis& n) {
    for (auto& variable : n.client_environment(client)) variables.push_back(std::move(variable));
  });
  return variables;
}

FaultNeeds FaultSet::needs() const {
  FaultNeeds needs;
  needs.own_servers = false;
  for (const auto& fault : faults_) needs |= fault->needs();
  return needs;
}

nlohmann::json FaultSet::record() const {
  nlohmann::json records = nlohmann::json::array();
  for (const auto& fault : faults_) {
    nlohmann::json record = fault->record();
    record["acted"] = fault->acted();
    if (bites_.size() == faults_.size()) {
      const Bite& bite = bites_[static_cast<std::size_t>(&fault - faults_.data())];
      record["bit"] = bite.bit;
      record["bite"] = bite.what;
      if (bite.refused_not_held) record["refused_not_held"] = true;
      if (bite.schedule_missed) record["schedule_missed"] = true;
    }
    records.push_back(std::move(record));
  }
  return records;
}

bool FaultSet::acted() const {
  return std::all_of(faults_.begin(), faults_.end(), [](const auto& fault) { return fault->acted(); });
}

std::string FaultSet::why_not_acted() const {
  std::string why;
  for (const auto& fault : faults_)
    if (!fault->acted())
      why.append(why.empty() ? "" : "; ").append(fault->record().value("spec", fault->name()) + ": " + fault->why_not_acted());
  return why;
}

void FaultSet::judge_bites(const BiteEvidence& evidence) {
  bites_.clear();
  for (const auto& fault : faults_) bites_.push_back(fault->bite(evidence));
}

bool FaultSet::schedule_missed() const {
  return std::any_of(bites_.begin(), bites_.end(), [](const Bite& bite) { return bite.schedule_missed; });
}

bool FaultSet::bit() const {
  if (bites_.size() != faults_.size()) return false;  // not judged (judge_bites) yet
  return std::all_of(bites_.begin(), bites_.end(), [](const Bite& bite) { return bite.bit; });
}

std::vector<KeyLoss> FaultSet::key_losses() const {
  std::vector<KeyLoss> losses;
  for (const Bite& bite : bites_)
    if (bite.key_lost) losses.push_back(*bite.key_lost);
  return losses;
}

std::string FaultSet::why_not_bit() const {
  std::string why;
  for (std::size_t i = 0; i < bites_.size() && i < faults_.size(); ++i)
    if (!bites_[i].bit)
      why.append(why.empty() ? "" : "; ")
          .append(faults_[i]->record().value("spec", faults_[i]->name()) + ": " + bites_[i].what);
  return why;
}

std::chrono::milliseconds FaultSet::allowance(std::chrono::milliseconds ttl) const {
  std::chrono::milliseconds total{0};
  for (const auto& fault : faults_) total += fault->allowance(ttl);
  return total;
}

}  // namespace locklab::harness
