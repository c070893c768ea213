#include "nemesis/fault_registry.h"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <random>

#include "nemesis/clock_skew_fault.h"
#include "nemesis/holder_faults.h"
#include "nemesis/network_faults.h"
#include "nemesis/node_faults.h"
#include "nemesis/protocol_faults.h"

namespace locklab::harness {
namespace {

using std::chrono::milliseconds;

// client=N: -1 (the first to get there) when absent.
Result<int> client_param(const FaultSpec& spec, const FaultEnv& options) {
  auto client = param_int(spec, "client", -1, 0, options.clients - 1);
  if (!client && spec.has("client"))
    return fault_error(spec, "client must be between 0 and " + std::to_string(options.clients - 1) +
                                 " (--clients " + std::to_string(options.clients) + ")");
  if (!client) return client.error();
  return static_cast<int>(*client);
}

Status needs_processes(const FaultSpec& spec, const FaultEnv& options) {
  if (options.thread_clients)
    return fault_error(spec, "needs --mode process (a thread cannot stop or die alone)");
  return Done{};
}

constexpr long long kMaxMs = 86'400'000;

Result<std::unique_ptr<Fault>> make_crash_holder(const FaultSpec& spec, const FaultEnv& options) {
  if (auto ok = needs_processes(spec, options); !ok) return ok.error();
  auto client = client_param(spec, options);
  if (!client) return client.error();
  auto times = param_int(spec, "times", 1, 1, options.clients);
  if (!times) return times.error();
  const std::string at = spec.has("at") ? spec.params.at("at") : std::string(kCsEnter);
  if (is_protocol_point(at)) return make_protocol_crash(spec, options, at, *client, static_cast<int>(*times));
  if (spec.has("when")) return fault_error(spec, "when= goes with at=resp:PATTERN");
  return std::unique_ptr<Fault>(std::make_unique<CrashHolderFault>(spec, at, *client, static_cast<int>(*times)));
}

Result<std::unique_ptr<Fault>> make_pause_holder(const FaultSpec& spec, const FaultEnv& options) {
  if (auto ok = needs_processes(spec, options); !ok) return ok.error();
  if (spec.has("ms") == spec.has("until")) return fault_error(spec, "give either ms=MS or until=expired|other-acquired|other-inside");
  auto client = client_param(spec, options);
  if (!client) return client.error();
  PauseRule rule;
  if (spec.has("ms")) {
    auto ms = param_int(spec, "ms", 0, 0, kMaxMs);
    if (!ms) return ms.error();
    rule.ms = milliseconds{*ms};
    if (spec.has("max")) return fault_error(spec, "max bounds until=, not ms=");
  } else {
    const auto until = parse_pause_until(spec.params.at("until"));
    if (!until) return fault_error(spec, "until must be expired, other-acquired or other-inside");
    rule.until = *until;
    auto max = param_int(spec, "max", 10LL * options.ttl_ms, 1, kMaxMs);
    if (!max) return max.error();
    rule.max = milliseconds{*max};
  }
  const std::string at = spec.has("at") ? spec.params.at("at") : std::string(kCsEnter);
  if (is_protocol_point(at)) return make_protocol_pause(spec, options, at, *client, rule);
  if (spec.has("when")) return fault_error(spec, "when= goes with at=resp:PATTERN");
  return std::unique_ptr<Fault>(std::make_unique<PauseHolderFault>(spec, at, *client, rule));
}

Result<std::unique_ptr<Fault>> make_slow_holder(const FaultSpec& spec, const FaultEnv& options) {
  if (!spec.has("ms")) return fault_error(spec, "needs ms=MS (how long the one slow section lasts)");
  auto ms = param_int(spec, "ms", 0, 0, kMaxMs);
  if (!ms) return ms.error();
  auto client = client_param(spec, options);
  if (!client) return client.error();
  return std::unique_ptr<Fault>(std::make_unique<SlowHolderFault>(spec, *client, milliseconds{*ms}));
}

Result<std::unique_ptr<Fault>> make_clock_skew(const FaultSpec& spec, const FaultEnv& options) {
  if (!spec.has("offset")) return fault_error(spec, "needs offset=MS (+ ahead, - behind)");
  auto offset = param_int(spec, "offset", 0, -kMaxMs, kMaxMs);
  if (!offset) return offset.error();
  auto client = client_param(spec, options);
  if (!client) return client.error();
  return std::unique_ptr<Fault>(std::make_unique<ClockSkewFault>(spec, *client < 0 ? 0 : *client, milliseconds{*offset}));
}

// random:count=K -- K process faults with clients and timings drawn from --seed.
// Each draw is judged on its own: the whole acted when any draw acted, and bit
// when any draw bit (Jepsen's random nemesis: a draw that found nothing to act
// on voids nothing that the others showed). Every draw's own acted, bit and
// bite are in the record.
class RandomFault final : public Fault {
 public:
  RandomFault(FaultSpec spec, std::uint64_t seed, std::vector<std::string> schedule, std::unique_ptr<FaultSet> set)
      : spec_(std::move(spec)), seed_(seed), schedule_(std::move(schedule)), set_(std::move(set)) {}
  std::string name() const override { return "random"; }
  FaultNeeds needs() const override { return set_->needs(); }
  void before_run(NemesisContext& c) override { set_->before_run(c); }
  void holder_entered(NemesisContext& c, int client) override { set_->holder_entered(c, client); }
  void tick(NemesisContext& c) override { set_->tick(c); }
  void after_run(NemesisContext& c) override { set_->after_run(c); }
  StepHook client_step_hook(int client) override { return set_->client_step_hook(client); }
  std::shared_ptr<const WallClock> client_clock(int client) override { return set_->client_clock(client); }
  std::vector<std::string> client_environment(int client) override { return set_->client_environment(client); }
  std::chrono::milliseconds allowance(std::chrono::milliseconds ttl) const override { return set_->allowance(ttl); }
  bool acted() const override {
    return std::any_of(set_->faults().begin(), set_->faults().end(), [](const auto& f) { return f->acted(); });
  }
  std::string why_not_acted() const override { return "no drawn fault acted: " + set_->why_not_acted(); }
  Bite bite(const BiteEvidence& evidence) const override {
    set_->judge_bites(evidence);
    if (set_->bit()) return {true, "every drawn fault bit"};
    std::string bit;
    for (const auto& draw : set_->record())
      if (draw.value("bit", false)) bit += (bit.empty() ? "" : "; ") + draw.value("spec", std::string()) + ": " + draw.value("bite", std::string());
    if (bit.empty()) return {false, "no drawn fault bit: " + set_->why_not_bit()};
    return {true, bit};
  }
  nlohmann::json record() const override {
    const nlohmann::json draws = set_->record();
    nlohmann::json applied = nlohmann::json::array();
    for (const auto& member : draws)
      for (const auto& event : member["applied"]) applied.push_back({{"t_ms", event["t_ms"]}, {"what", member["spec"].get<std::string>() + ": " + event["what"].get<std::string>()}});
    std::sort(applied.begin(), applied.end(), [](const auto& a, const auto& b) { return a["t_ms"] < b["t_ms"]; });
    nlohmann::json drawn_acted = nlohmann::json::array(), drawn_bit = nlohmann::json::array();
    for (const auto& member : draws) {
      drawn_acted.push_back(member.value("acted", false));
      if (member.contains("bit")) drawn_bit.push_back(member["bit"]);
    }
    nlohmann::json out = {{"spec", spec_.text}, {"seed", seed_}, {"schedule", schedule_}, {"schedule_acted", drawn_acted},
                          {"applied", applied}, {"draws", draws}};
    if (drawn_bit.size() == draws.size()) out["schedule_bit"] = drawn_bit;
    return out;
  }

 private:
  FaultSpec spec_;
  std::uint64_t seed_;
  std::vector<std::string> schedule_;
  std::unique_ptr<FaultSet> set_;
};

Result<std::unique_ptr<Fault>> make_random(const FaultSpec& spec, const FaultEnv& options) {
  if (auto ok = needs_processes(spec, options); !ok) return ok.error();
  auto count = param_int(spec, "count", std::min(3, options.clients), 1, options.clients);
  if (!count) return count.error();
  auto schedule = random_schedule(options.seed, static_cast<int>(*count), options);
  auto set = std::make_unique<FaultSet>();
  for (const auto& text : schedule) {
    auto drawn = parse_fault_spec(text);
    if (!drawn) return drawn.error();
    auto fault = make_fault(*drawn, options);
    if (!fault) return fault.error();
    set->add(std::move(fault).value());
  }
  return std::unique_ptr<Fault>(std::make_unique<RandomFault>(spec, options.seed, std::move(schedule), std::move(set)));
}

}  // namespace

std::vector<std::string> random_schedule(std::uint64_t seed, int count, const FaultEnv& options) {
  std::mt19937_64 draw(seed);
  // One fault per client (the first on whoever holds first), each at that
  // client's first section. Every pause and slow section lasts longer
  // than a lease (so it can bite) and ends on time alone: a draw that waited
  // for another client to get in could wait on a draw that stops that client
  // (two pauses, each until the other acquired: neither ends until its bound).
  std::vector<int> clients(static_cast<std::size_t>(options.clients));
  std::iota(clients.begin(), clients.end(), 0);
  for (std::size_t i = clients.size(); i > 1; --i)  // Fisher-Yates by hand: std::shuffle's draws are unspecified
    std::swap(clients[i - 1], clients[static_cast<std::size_t>(draw() % i)]);
  const auto ttl = static_cast<std::uint64_t>(options.ttl_ms);
  auto past_ttl = [&] { return std::to_string(ttl + ttl / 4 + draw() % (ttl + 1)); };  // [1.25 ttl, 2.25 ttl]
  std::vector<std::string> schedule;
  for (int i = 0; i < count; ++i) {
    // The first draw strikes whoever holds first, so at least one acts even
    // where an unfair lock starves the drawn clients of their first section.
    const std::string client = i == 0 ? "" : ":client=" + std::to_string(clients[static_cast<std::size_t>(i)]);
    switch (draw() % 3) {
      case 0: schedule.push_back("holder-crash" + client); break;
      case 1: schedule.push_back("holder-pause:ms=" + past_ttl() + client); break;
      default: schedule.push_back("slow-holder:ms=" + past_ttl() + client); break;
    }
  }
  return schedule;
}

const std::vector<FaultEntry>& fault_table() {
  // One line per fault. Topology faults (failover, node-crash, node-pause,
  // clock-jump, net, unavailable) are registered here too, from their own files.
  static const std::vector<FaultEntry> table = {
      {"holder-crash", {"at", "client", "times", "when"},
       "the holder dies (like SIGKILL, its adapter with it) at a step point, default locklab:cs-enter; "
       "at=resp:PATTERN: once the fault proxy parks its matching request (e.g. resp:SETNX>EXPIRE), dropped "
       "[at=POINT client=N times=K when=start|holder]",
       make_crash_holder, {"crash-holder"}},
      {"holder-pause", {"ms", "until", "max", "at", "client", "when"},
       "SIGSTOP the holder's whole process group (watchdog and adapter too), SIGCONT after ms= or "
       "until=expired|other-acquired|other-inside; at=resp:PATTERN: once the fault proxy parks its matching request (e.g. "
       "resp:GET>DEL), sent on before SIGCONT [max=MS at=POINT client=N when=start|holder]",
       make_pause_holder, {"pause-holder"}},
      {"slow-holder", {"ms", "client"},
       "one critical section lasts ms=MS, the process alive (a watchdog keeps renewing) [client=N]",
       make_slow_holder},
      {"clock-skew", {"client", "offset"},
       "client N's wall clock runs offset=MS off (+ ahead; an adapter's process under the clock shim); matters to getset-timestamp [client=N, default 0]",
       make_clock_skew},
      {"random", {"count"},
       "count=K (3) of holder-crash, holder-pause:ms and slow-holder on distinct clients, times past the ttl "
       "drawn from --seed; each draw judged on its own (acted, bit), the schedule recorded",
       make_random},
      {"failover", {"after", "patience", "catch", "warm-up", "park"},
       "master + replica (replication through a proxy): the first holder's lock is not replicated, the master dies, "
       "the replica is promoted; with --cluster, the key's master of a cluster the run starts, only its replication "
       "link held [after=acquire patience=MS (ttl/2): the parked holder's wait for a contender; catch=PATTERN: each "
       "waiter's next matching request is on its way as the master goes, and never answered; warm-up=N: the first "
       "holder after N acquisitions; park=read: the holder parks after its accepted read, let go at a contender's]",
       make_failover_fault},
      {"node-crash", {"nodes", "restart", "when", "holder-nodes", "patience", "catch", "split", "warm-up", "park"},
       "SIGKILL nodes=K (1) lock servers, the holder's first; restart=never|now|after-ttl (never) "
       "[when=start|holder holder-nodes=M patience=MS (ttl/2) catch=PATTERN: each waiter's next matching "
       "request is on its way as the node dies, and never answered; split=PATTERN (when=start, 2 clients): "
       "each live node answers one contender's first matching request before the other's; warm-up=N park=read "
       "(when=holder): as failover's]",
       make_node_crash_fault},
      {"node-pause", {"nodes", "ms"}, "SIGSTOP nodes=K (1) lock servers from the start; SIGCONT after ms=MS (0: at the end)",
       make_node_pause_fault},
      {"clock-jump", {"node", "offset", "when", "holder-nodes", "patience"},
       "lock server node=I (0)'s wall clock jumps by offset=MS (30000) while a holder is inside [holder-nodes=M "
       "patience=MS (ttl/2)]",
       make_clock_jump_fault},
      {"net", {"mode", "ms", "dir", "client", "target", "at", "point"},
       "mode=cut|delay|hold|drop on one client's links [ms=MS dir=up|down|both client=N|target=holder "
       "at=acquire|held|release point=STEP]",
       make_net_fault},
      {"unavailable", {"at", "mode", "client", "until"},
       "Redis refuses (mode=refuse) or applies and loses the reply (mode=drop-reply) at=acquire|release [client=N "
       "until=release-returned|other-acquired]",
       make_unavailable_fault},
  };
  return table;
}

std::vector<std::string> fault_names() {
  std::vector<std::string> lines;
  for (const auto& entry : fault_table()) {
    std::string name = entry.name;
    name.resize(std::max<std::size_t>(name.size() + 1, 14), ' ');
    std::string also;
    for (const auto& alias : entry.aliases) also += (also.empty() ? " (also " : ", ") + alias;
    lines.push_back(name + entry.help + (also.empty() ? "" : also + ")"));
  }
  return lines;
}

namespace {

const FaultEntry* find_fault(const std::string& name) {
  for (const auto& entry : fault_table())
    if (entry.name == name || std::find(entry.aliases.begin(), entry.aliases.end(), name) != entry.aliases.end())
      return &entry;
  return nullptr;
}

std::optional<std::string> name_and_keys_problem(const FaultSpec& spec, const FaultEntry* entry) {
  if (entry == nullptr) {
    std::string known;
    for (const auto& e : fault_table()) known.append(known.empty() ? "" : ", ").append(e.name);
    return fault_error(spec, "unknown fault '" + spec.name + "' (known: " + known + ")").message;
  }
  for (const auto& [key, value] : spec.params)
    if (std::find(entry->keys.begin(), entry->keys.end(), key) == entry->keys.end()) {
      std::string keys;
      for (const auto& k : entry->keys) keys.append(keys.empty() ? "" : ", ").append(k);
      return fault_error(spec, spec.name + " takes no key '" + key + "' (keys: " + (keys.empty() ? "none" : keys) + ")")
          .message;
    }
  return std::nullopt;
}

// A link has one protocol watch (servers/tcp_proxy.h, arm_watch): a second
// at=resp: fault on the same client's links, or a catch= (node-crash, failover:
// every contender's links), would replace the first one's watch, and a release
// or drop of either would end both. Refused, one line.
std::optional<Error> second_watch(const FaultSpec& spec, std::vector<int>& watched) {
  // catch= (node-crash, failover) watches every contender's links (nemesis/caught_waiters.h),
  // split= (node-crash) both contenders' (nemesis/split_votes.h).
  const bool catches = spec.has("catch") || spec.has("split");
  if (!catches && (!spec.has("at") || !is_protocol_point(spec.params.at("at")))) return std::nullopt;
  int client = -1;
  if (!catches && spec.has("client")) {
    const std::string& text = spec.params.at("client");
    std::from_chars(text.data(), text.data() + text.size(), client);
  }
  for (const int other : watched)
    if (other < 0 || client < 0 || other == client)
      return fault_error(spec, "a second protocol step point on " +
                                   (client < 0 ? std::string("every client") : "client " + std::to_string(client)) +
                                   "'s links (a link has one watch: one at=resp: fault, catch= or split= per client)");
  watched.push_back(client);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> fault_spec_problem(const std::string& text) {
  auto spec = parse_fault_spec(text);
  if (!spec) return spec.error().message;
  return name_and_keys_problem(*spec, find_fault(spec->name));
}

Result<std::unique_ptr<Fault>> make_fault(const FaultSpec& spec, const FaultEnv& options) {
  const FaultEntry* entry = find_fault(spec.name);
  if (auto problem = name_and_keys_problem(spec, entry)) return Error{ErrorKind::usage, *problem};
  // Every fault of the table stages a race between a holder and a contender
  // (a pause, a crash, a skewed clock, a cut link or a lost server shows only
  // when another client takes the lock meanwhile, or waits for it): with one
  // client nobody can exploit it, and the run would read safe for nothing.
  if (options.clients * options.hosts < 2)
    return fault_error(spec, spec.name + " needs a contender: --clients " + std::to_string(options.clients) +
                                 " leaves nobody to take or wait for the lock (give --clients 2 or more)");
  return entry->make(spec, options);
}

Result<std::unique_ptr<FaultSet>> make_faults(const std::vector<std::string>& specs, const FaultEnv& options) {
  auto set = std::make_unique<FaultSet>();
  std::vector<int> watched;  // the clients whose links a protocol step point watches (-1: every client)
  for (const auto& text : specs) {
    auto spec = parse_fault_spec(text);
    if (!spec) return spec.error();
    auto fault = make_fault(*spec, options);
    if (!fault) return fault.error();
    if (auto second = second_watch(*spec, watched)) return *second;  // the client= is checked by now
    set->add(std::move(fault).value());
  }
  return set;
}

}  // namespace locklab::harness
