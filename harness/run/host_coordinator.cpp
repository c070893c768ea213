#include "run/multihost.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include "support/conditions.h"

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;

// Enter: a new section id, stamped with the oracle's order; one pair per
// holder present; then this client is a holder. Returns the section id.
// KEYS: sections, holders, pairs, max, overlaps, seq; ARGV: holder, section key prefix.
constexpr const char* kEnterScript = R"lua(
local id = redis.call('INCR', KEYS[1])
local at = redis.call('INCR', KEYS[6])
redis.call('HSET', ARGV[2] .. id, 'enter', at)
local others = redis.call('HVALS', KEYS[2])
for _, other in ipairs(others) do redis.call('RPUSH', KEYS[3], other .. ' ' .. id) end
redis.call('HSET', KEYS[2], ARGV[1], id)
local now = #others + 1
if now > tonumber(redis.call('GET', KEYS[4]) or '0') then redis.call('SET', KEYS[4], now) end
if now > 1 then redis.call('INCR', KEYS[5]) end
return id
)lua";

// The read is about to be sent. KEYS: seq, section; ARGV: token ('' = none).
constexpr const char* kReadScript = R"lua(
local at = redis.call('INCR', KEYS[1])
redis.call('HSET', KEYS[2], 'read', at)
if ARGV[1] ~= '' then redis.call('HSET', KEYS[2], 'token', ARGV[1]) end
return at
)lua";

// The write came back (or the resource refused). KEYS: seq, section; ARGV: refused (0/1).
constexpr const char* kWriteScript = R"lua(
local at = redis.call('INCR', KEYS[1])
redis.call('HSET', KEYS[2], 'write', at, 'refused', ARGV[1])
return at
)lua";

// Leave: this client is no longer a holder (only of its own section).
// KEYS: holders; ARGV: holder, section id.
constexpr const char* kLeaveScript = R"lua(
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) end
return 1
)lua";

std::string holder_id(const OracleConfig& config, int client) { return config.host + "/" + std::to_string(client); }

// A reply that is not what the script returns is an oracle error too.
Result<long long> integer_reply(Result<redis::Reply> reply, const char* what) {
  if (!reply) return Error{reply.error().kind, std::string("oracle ") + what + ": " + reply.error().message};
  if (!reply->is_integer()) return Error{ErrorKind::reply, std::string("oracle ") + what + ": " + reply->describe()};
  return reply->integer();
}

// One client's events on the oracle (section_oracle.h).
class RedisSectionOracle : public SectionOracle {
 public:
  RedisSectionOracle(redis::Connection connection, const OracleConfig& config, int client)
      : connection_(std::move(connection)),
        run_id_(config.run_id),
        holder_(holder_id(config, client)),
        enter_script_(kEnterScript),
        read_script_(kReadScript),
        write_script_(kWriteScript),
        leave_script_(kLeaveScript) {}

  Status enter() override {
    section_.reset();
    auto id = integer_reply(enter_script_.run(connection_,
                                              {key("sections"), key("holders"), key("pairs"), key("max"),
                                               key("overlaps"), key("seq")},
                                              {holder_, key("section:")}),
                            "enter");
    if (!id) return id.error();
    section_ = *id;
    return Done{};
  }
  Status observe_read(std::optional<std::uint64_t> token) override {
    if (!section_) return Error{ErrorKind::usage, "oracle read: this section's enter failed"};
    return stamp(read_script_, token ? std::to_string(*token) : std::string(), "read");
  }
  Status observe_write(bool refused) override {
    if (!section_) return Error{ErrorKind::usage, "oracle write: this section's enter failed"};
    return stamp(write_script_, refused ? "1" : "0", "write");
  }
  Status leave() override {
    if (!section_) return Error{ErrorKind::usage, "oracle leave: this section's enter failed"};
    auto left = integer_reply(leave_script_.run(connection_, {key("holders")}, {holder_, std::to_string(*section_)}),
                              "leave");
    section_.reset();
    if (!left) return left.error();
    return Done{};
  }

 private:
  std::string key(const std::string& name) const { return oracle_key(run_id_, name); }
  Status stamp(redis::Script& script, const std::string& arg, const char* what) {
    auto at = integer_reply(script.run(connection_, {key("seq"), key("section:" + std::to_string(*section_))}, {arg}),
                            what);
    if (!at) return at.error();
    return Done{};
  }

  redis::Connection connection_;
  std::string run_id_;
  std::string holder_;
  redis::Script enter_script_, read_script_, write_script_, leave_script_;
  std::optional<long long> section_;  // the open section's id
};

long long as_number(const std::optional<std::string>& text) {
  if (!text) return 0;
  try {
    return std::stoll(*text);
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

std::string oracle_key(const std::string& run_id, const std::string& name) {
  return "locklab:run:" + run_id + ":" + name;
}

std::string host_label() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) name[0] = '\0';
  return std::string(name[0] != '\0' ? name : "unknown") + ":" + std::to_string(::getpid());
}

// --- the section oracle --------------------------------------------------------

Result<std::unique_ptr<SectionOracle>> RedisSectionOracles::connect(int client) const {
  auto connection = redis::Connection::connect(config_.server);
  if (!connection) return Error{connection.error().kind, "oracle: " + connection.error().message};
  return std::unique_ptr<SectionOracle>(
      std::make_unique<RedisSectionOracle>(std::move(connection).value(), config_, client));
}

Status RedisSectionOracles::client_died(int client) {
  if (!reaper_ || reaper_->broken()) {
    auto connection = redis::Connection::connect(config_.server);
    if (!connection) return Error{connection.error().kind, "oracle: " + connection.error().message};
    reaper_.emplace(std::move(connection).value());
  }
  auto reply = reaper_->command({"HDEL", oracle_key(config_.run_id, "holders"), holder_id(config_, client)});
  if (!reply) return Error{reply.error().kind, "oracle: " + reply.error().message};
  return Done{};
}

// --- one host's coordination --------------------------------------------------------

Result<HostCoordinator> HostCoordinator::join(const OracleConfig& config, int hosts) {
  auto connection = redis::Connection::connect(config.server);
  if (!connection) return Error{connection.error().kind, "oracle: " + connection.error().message};
  return HostCoordinator(std::move(connection).value(), config.run_id, hosts);
}

Result<long long> HostCoordinator::increment(const std::string& name) {
  auto reply = connection_.command({"INCR", oracle_key(run_id_, name)});
  if (!reply) return Error{reply.error().kind, "oracle: " + reply.error().message};
  if (!reply->is_integer()) return Error{ErrorKind::reply, "oracle INCR: " + reply->describe()};
  return reply->integer();
}

Result<bool> HostCoordinator::started_before() {
  auto reply = connection_.command({"MGET", oracle_key(run_id_, "ready"), oracle_key(run_id_, "done")});
  if (!reply) return Error{reply.error().kind, "oracle: " + reply.error().message};
  if (!reply->is_array() || reply->size() != 2) return Error{ErrorKind::reply, "oracle MGET: " + reply->describe()};
  const long long ready = as_number(reply->element(0).string());
  const long long done = as_number(reply->element(1).string());
  return ready >= hosts_ || done > 0;
}

Status HostCoordinator::clear_oracle() {
  // Not `sections` nor `seq`: ids and stamps keep rising, so no section hash is reused.
  auto reply = connection_.command({"DEL", oracle_key(run_id_, "holders"), oracle_key(run_id_, "max"),
                                    oracle_key(run_id_, "overlaps"), oracle_key(run_id_, "pairs"),
                                    oracle_key(run_id_, "ready"), oracle_key(run_id_, "done")});
  if (!reply) return Error{reply.error().kind, "oracle: " + reply.error().message};
  return Done{};
}

Status HostCoordinator::mark_reset() {
  auto reply = connection_.command({"SET", oracle_key(run_id_, "reset"), "1"});
  if (!reply) return Error{reply.error().kind, "oracle: " + reply.error().message};
  return Done{};
}

Status HostCoordinator::wait_for(const std::string& name, long long at_least, std::chrono::milliseconds timeout) {
  std::string last = "no answer";
  const bool reached = wait_until(
      [&] {
        auto reply = connection_.command({"GET", oracle_key(run_id_, name)});
        if (!reply) {
          last = reply.error().message;
          return false;
        }
        const long long now = as_number(reply->string());
        last = std::to_string(now);
        return now >= at_least;
      },
      timeout, 20ms);
  if (reached) return Done{};
  return Error{ErrorKind::timeout, "run " + run_id_ + ": " + name + " reached " + last + " of " +
                                       std::to_string(at_least) + " within " + std::to_string(timeout.count()) + " ms"};
}

Status HostCoordinator::start_barrier(std::chrono::milliseconds timeout) {
  if (auto ready = increment("ready"); !ready) return ready.error();
  return wait_for("ready", hosts_, timeout);
}

Status HostCoordinator::end_barrier(std::chrono::milliseconds timeout) {
  if (auto done = increment("done"); !done) return done.error();
  return wait_for("done", hosts_, timeout);
}

Result<OracleReading> HostCoordinator::reading() {
  auto reply = connection_.command({"MGET", oracle_key(run_id_, "max"), oracle_key(run_id_, "overlaps"),
                                    oracle_key(run_id_, "sections")});
  if (!reply) return Error{reply.error().kind, "oracle: " + reply.error().message};
  if (!reply->is_array() || reply->size() != 3) return Error{ErrorKind::reply, "oracle MGET: " + reply->describe()};
  OracleReading reading{as_number(reply->element(0).string()), as_number(reply->element(1).string()),
                        as_number(reply->element(2).string()), {}};
  auto pairs = judge_pairs();
  if (!pairs) return pairs.error();
  reading.pairs = *pairs;
  return reading;
}

Result<std::vector<std::pair<long long, long long>>> HostCoordinator::read_pairs() {
  auto reply = connection_.command({"LRANGE", oracle_key(run_id_, "pairs"), "0", "-1"});
  if (!reply) return Error{reply.error().kind, "oracle: " + reply.error().message};
  if (!reply->is_array()) return Error{ErrorKind::reply, "oracle LRANGE: " + reply->describe()};
  std::vector<std::pair<long long, long long>> pairs;
  pairs.reserve(reply->size());
  for (std::size_t i = 0; i < reply->size(); ++i) {
    const std::string text = reply->element(i).string().value_or("");
    const auto space = text.find(' ');
    if (space == std::string::npos) return Error{ErrorKind::reply, "oracle pair '" + text + "'"};
    pairs.emplace_back(as_number(text.substr(0, space)), as_number(text.substr(space + 1)));
  }
  return pairs;
}

// What each section did at the resource, in the oracle's order (`seq`): its
// read start (its entry when it never read: the earliest it could have) and
// its write end (open when it never wrote).
Result<std::map<long long, ResourceAccess>> HostCoordinator::read_accesses(const std::set<long long>& sections) {
  std::map<long long, ResourceAccess> accesses;
  std::vector<long long> batch;
  auto flush = [&]() -> Status {
    for (long long id : batch)
      connection_.append({"HMGET", oracle_key(run_id_, "section:" + std::to_string(id)), "enter", "read", "write",
                          "refused", "token"});
    auto replies = connection_.read_pending();
    if (!replies) return Error{replies.error().kind, "oracle: " + replies.error().message};
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const redis::Reply& fields = (*replies)[i];
      if (!fields.is_array() || fields.size() != 5) return Error{ErrorKind::reply, "oracle HMGET: " + fields.describe()};
      ResourceAccess access;
      const auto read = fields.element(1).string();
      access.read_start = as_number(read ? read : fields.element(0).string());
      if (const auto write = fields.element(2).string()) access.write_end = as_number(write);
      access.refused = fields.element(3).string().value_or("0") == "1";
      if (const auto token = fields.element(4).string()) {
        access.has_token = true;
        access.token = static_cast<std::uint64_t>(as_number(token));
      }
      accesses[batch[i]] = access;
    }
    batch.clear();
    return Done{};
  };
  for (long long id : sections) {
    batch.push_back(id);
    if (batch.size() == 1000)
      if (auto flushed = flush(); !flushed) return flushed.error();
  }
  if (!batch.empty())
    if (auto flushed = flush(); !flushed) return flushed.error();
  return accesses;
}

// Every pair the oracle saw, by the one rule (classify_overlap).
Result<OraclePairs> HostCoordinator::judge_pairs() {
  auto pairs = read_pairs();
  if (!pairs) return pairs.error();
  std::set<long long> sections;
  for (const auto& [a, b] : *pairs) sections.insert({a, b});
  auto accesses = read_accesses(sections);
  if (!accesses) return accesses.error();
  OraclePairs judged;
  for (const auto& [a, b] : *pairs) {
    switch (classify_overlap(accesses->at(a), accesses->at(b))) {
      case OverlapKind::violation: ++judged.violations; break;
      case OverlapKind::fenced_off: ++judged.fenced_off; break;
      case OverlapKind::serialized_by_fence: ++judged.serialized; break;
    }
  }
  return judged;
}

// --- merge ------------------------------------------------------------------------

namespace {

// The single-run order of verdicts: a run that could not measure overrules its findings.
int verdict_rank(const std::string& verdict) {
  if (verdict == "error") return 3;
  if (verdict == "violation") return 2;
  if (verdict == "deadlock") return 1;
  return 0;  // safe
}

void at_least(std::string& verdict, const std::string& candidate) {
  if (verdict_rank(candidate) > verdict_rank(verdict)) verdict = candidate;
}

// What the hosts' documents add up to.
struct MergedHosts {
  std::set<std::string> run_ids, locks, labels;
  std::vector<std::string> duplicates;
  nlohmann::json hosts = nlohmann::json::array();
  std::int64_t acquired = 0, confirmed = 0, unconfirmed = 0;
  long long counter_final = -1, max_occupancy = 0, overlapped = 0, violating_pairs = 0;
  std::string worst = "safe";
  std::vector<std::string> reasons;
};

void add_host(MergedHosts& merged, const nlohmann::json& run) {
  const auto& mh = run["multihost"];
  merged.run_ids.insert(mh["run_id"].get<std::string>());
  merged.locks.insert(run["lock"].get<std::string>());
  const std::string host = mh["host"].get<std::string>();
  if (!merged.labels.insert(host).second) merged.duplicates.push_back(host);
  merged.acquired += run["totals"]["acquired"].get<std::int64_t>();
  merged.confirmed += run["counter"]["expected"].get<std::int64_t>();
  merged.unconfirmed += run["counter"]["unconfirmed_writes"].get<std::int64_t>();
  if (mh["counter_final"].is_number())
    merged.counter_final = std::max(merged.counter_final, mh["counter_final"].get<long long>());
  merged.max_occupancy = std::max(merged.max_occupancy, mh["max_occupancy"].get<long long>());
  merged.overlapped = std::max(merged.overlapped, mh["overlapped_entries"].get<long long>());
  merged.violating_pairs = std::max(merged.violating_pairs, mh.value("violating_pairs", 0LL));
  const std::string verdict = run["verdict"];
  at_least(merged.worst, verdict);
  if (verdict != "safe") merged.reasons.push_back("host " + host + ": " + verdict);
  merged.hosts.push_back({{"host", host}, {"verdict", verdict}, {"acquired", run["totals"]["acquired"]},
                          {"confirmed_increments", run["counter"]["expected"]}});
}

// The shared counter against every host's writes, and the oracle's pairs.
void judge_merged(MergedHosts& m, std::string& verdict) {
  if (m.violating_pairs > 0) {
    at_least(verdict, "violation");
    m.reasons.push_back("the oracle saw " + std::to_string(m.violating_pairs) +
                        " pair(s) of sections inside at once that the resource did not serialise (at most " +
                        std::to_string(m.max_occupancy) + " holders at once)");
  }
  if (m.counter_final < 0) {
    at_least(verdict, "error");
    m.reasons.push_back("no host could read the final counter");
  } else if (m.counter_final < m.confirmed) {
    at_least(verdict, "violation");
    m.reasons.push_back(std::to_string(m.confirmed - m.counter_final) + " lost counter updates (final " +
                        std::to_string(m.counter_final) + ", confirmed " + std::to_string(m.confirmed) + ")");
  } else if (m.counter_final > m.confirmed + m.unconfirmed) {
    at_least(verdict, "violation");
    m.reasons.push_back("the counter grew by " + std::to_string(m.counter_final - m.confirmed - m.unconfirmed) +
                        " more than every recorded write");
  }
}

}  // namespace

Result<nlohmann::json> merge_runs(const std::vector<nlohmann::json>& runs) {
  using nlohmann::json;
  if (runs.empty()) return Error{ErrorKind::usage, "merge: no run documents"};
  MergedHosts m;
  for (const auto& run : runs) {
    if (!run.contains("multihost") || !run["multihost"].is_object())
      return Error{ErrorKind::usage, "merge: a document without \"multihost\" (not a --run-id run)"};
    add_host(m, run);
  }
  if (m.run_ids.size() != 1) return Error{ErrorKind::usage, "merge: the documents come from different run ids"};
  if (m.locks.size() != 1) return Error{ErrorKind::usage, "merge: the documents ran different locks"};

  std::string verdict = m.worst;
  // The counter is every host's: with a host missing or one counted twice the
  // sums judge nothing. Said first: it overrules what follows.
  std::vector<std::string> unmergeable;
  if (!m.duplicates.empty())
    unmergeable.push_back("host " + m.duplicates.front() + " given more than once: its share would count twice");
  const int expected_hosts = runs.front()["multihost"]["hosts"].get<int>();
  if (static_cast<int>(m.labels.size()) != expected_hosts)
    unmergeable.push_back(std::to_string(m.labels.size()) + " host document(s) for a run of " +
                          std::to_string(expected_hosts) + " hosts: the shared counter cannot be judged");
  if (!unmergeable.empty()) {
    verdict = "error";
    m.reasons.insert(m.reasons.begin(), unmergeable.begin(), unmergeable.end());
  } else {
    judge_merged(m, verdict);
  }
  return json{{"schema", "locklab.merged/1"},
              {"run_id", *m.run_ids.begin()},
              {"lock", *m.locks.begin()},
              {"hosts", m.hosts},
              {"acquired", m.acquired},
              {"counter", {{"final", m.counter_final}, {"confirmed", m.confirmed}, {"unconfirmed_writes", m.unconfirmed}}},
              {"oracle", {{"max_occupancy", m.max_occupancy}, {"overlapped_entries", m.overlapped},
                          {"violating_pairs", m.violating_pairs}}},
              {"verdict", verdict},
              {"verdict_reasons", m.reasons}};
}

}  // namespace locklab::harness
