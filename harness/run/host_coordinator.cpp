#include "run/host_coordinator.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "support/conditions.h"

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;

long long as_number(const std::optional<std::string>& text) {
  if (!text) return 0;
  try {
    return std::stoll(*text);
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

std::string host_label() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) name[0] = '\0';
  return std::string(name[0] != '\0' ? name : "unknown") + ":" + std::to_string(::getpid());
}

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

}  // namespace locklab::harness
