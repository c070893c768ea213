#include "multihost.h"

#include <unistd.h>

#include <algorithm>
#include <set>

#include "conditions.h"

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;

// INCR occupancy; keep the high-water mark; count an entry that found someone inside.
constexpr const char* kEnterScript = R"lua(
local now = redis.call('INCR', KEYS[1])
if now > tonumber(redis.call('GET', KEYS[2]) or '0') then redis.call('SET', KEYS[2], now) end
if now > 1 then redis.call('INCR', KEYS[3]) end
return now
)lua";

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

// --- the occupancy oracle ---------------------------------------------------------

OccupancyOracle::OccupancyOracle(redis::Connection connection, std::string run_id)
    : connection_(std::move(connection)), run_id_(std::move(run_id)), enter_script_(kEnterScript) {}

Result<OccupancyOracle> OccupancyOracle::connect(const OracleConfig& config) {
  auto connection = redis::Connection::connect(config.server);
  if (!connection) return Error{connection.error().kind, "oracle: " + connection.error().message};
  return OccupancyOracle(std::move(connection).value(), config.run_id);
}

Result<long long> OccupancyOracle::enter() {
  auto reply = enter_script_.run(connection_,
                                 {oracle_key(run_id_, "occupancy"), oracle_key(run_id_, "max"),
                                  oracle_key(run_id_, "overlaps")},
                                 {});
  if (!reply) return reply.error();
  return reply->integer();
}

Status OccupancyOracle::leave() {
  auto reply = connection_.command({"DECR", oracle_key(run_id_, "occupancy")});
  if (!reply) return reply.error();
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

Status HostCoordinator::clear_oracle() {
  auto reply = connection_.command({"DEL", oracle_key(run_id_, "occupancy"), oracle_key(run_id_, "max"),
                                    oracle_key(run_id_, "overlaps"), oracle_key(run_id_, "ready"),
                                    oracle_key(run_id_, "done")});
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
  auto reply = connection_.command({"MGET", oracle_key(run_id_, "max"), oracle_key(run_id_, "overlaps")});
  if (!reply) return Error{reply.error().kind, "oracle: " + reply.error().message};
  if (!reply->is_array() || reply->size() != 2) return Error{ErrorKind::reply, "oracle MGET: " + reply->describe()};
  return OracleReading{as_number(reply->element(0).string()), as_number(reply->element(1).string())};
}

// --- merge ------------------------------------------------------------------------

Result<nlohmann::json> merge_runs(const std::vector<nlohmann::json>& runs) {
  using nlohmann::json;
  if (runs.empty()) return Error{ErrorKind::usage, "merge: no run documents"};
  std::set<std::string> run_ids, locks;
  json hosts = json::array();
  std::int64_t acquired = 0, confirmed = 0, unconfirmed = 0;
  long long counter_final = -1, max_occupancy = 0, overlapped = 0;
  std::vector<std::string> reasons;
  bool any_violation = false, any_error = false;
  for (const auto& run : runs) {
    if (!run.contains("multihost") || !run["multihost"].is_object())
      return Error{ErrorKind::usage, "merge: a document without \"multihost\" (not a --run-id run)"};
    const auto& mh = run["multihost"];
    run_ids.insert(mh["run_id"].get<std::string>());
    locks.insert(run["lock"].get<std::string>());
    acquired += run["totals"]["acquired"].get<std::int64_t>();
    confirmed += run["counter"]["expected"].get<std::int64_t>();
    unconfirmed += run["counter"]["unconfirmed_writes"].get<std::int64_t>();
    if (mh["counter_final"].is_number()) counter_final = std::max(counter_final, mh["counter_final"].get<long long>());
    max_occupancy = std::max(max_occupancy, mh["max_occupancy"].get<long long>());
    overlapped = std::max(overlapped, mh["overlapped_entries"].get<long long>());
    const std::string verdict = run["verdict"];
    any_violation = any_violation || verdict == "violation";
    any_error = any_error || verdict == "error";
    if (verdict != "safe") reasons.push_back("host " + mh["host"].get<std::string>() + ": " + verdict);
    hosts.push_back({{"host", mh["host"]}, {"verdict", verdict}, {"acquired", run["totals"]["acquired"]},
                     {"confirmed_increments", run["counter"]["expected"]}});
  }
  if (run_ids.size() != 1) return Error{ErrorKind::usage, "merge: the documents come from different run ids"};
  if (locks.size() != 1) return Error{ErrorKind::usage, "merge: the documents ran different locks"};
  const int expected_hosts = runs.front()["multihost"]["hosts"].get<int>();
  if (static_cast<int>(runs.size()) != expected_hosts)
    reasons.push_back(std::to_string(runs.size()) + " documents for a run of " + std::to_string(expected_hosts) +
                      " hosts");

  std::string verdict = "safe";
  if (max_occupancy > 1) {
    verdict = "violation";
    reasons.push_back("the oracle saw " + std::to_string(max_occupancy) + " holders at once (" +
                      std::to_string(overlapped) + " entries found another holder inside)");
  }
  if (counter_final < 0) {
    any_error = true;
    reasons.push_back("no host could read the final counter");
  } else if (counter_final < confirmed) {
    verdict = "violation";
    reasons.push_back(std::to_string(confirmed - counter_final) + " lost counter updates (final " +
                      std::to_string(counter_final) + ", confirmed " + std::to_string(confirmed) + ")");
  } else if (counter_final > confirmed + unconfirmed) {
    verdict = "violation";
    reasons.push_back("the counter grew by " + std::to_string(counter_final - confirmed - unconfirmed) +
                      " more than every recorded write");
  }
  if (any_violation) verdict = "violation";
  if (any_error && verdict == "safe") verdict = "error";
  return json{{"schema", "locklab.merged/1"},
              {"run_id", *run_ids.begin()},
              {"lock", *locks.begin()},
              {"hosts", hosts},
              {"acquired", acquired},
              {"counter", {{"final", counter_final}, {"confirmed", confirmed}, {"unconfirmed_writes", unconfirmed}}},
              {"oracle", {{"max_occupancy", max_occupancy}, {"overlapped_entries", overlapped}}},
              {"verdict", verdict},
              {"verdict_reasons", reasons}};
}

}  // namespace locklab::harness
