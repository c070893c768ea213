// Run options: one set of defaults, one set of bounds. validate() (library
// callers) and the CLI's validators refuse the same values with the same line;
// compare() reports what stops it as an error value, not an exit code.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <gtest/gtest.h>

#include "registry.h"

#include "fixtures/locklab_binary.h"
#include "run/run.h"
#include "support/run_id.h"
#include "sweeps/compare.h"

namespace locklab::harness {
namespace {

namespace fs = std::filesystem;

RunOptions valid_options() {
  RunOptions options;
  options.lock = "no-lock";
  return options;
}

struct BoundCase {
  const Bound& bound;
  std::function<void(RunOptions&, double)> set;
};

const std::vector<BoundCase>& bound_cases() {
  static const std::vector<BoundCase> cases = {
      {bounds::clients, [](RunOptions& o, double v) { o.clients = static_cast<int>(v); }},
      {bounds::ops, [](RunOptions& o, double v) { o.ops = static_cast<std::int64_t>(v); }},
      {bounds::duration_s, [](RunOptions& o, double v) { o.duration_s = v; }},
      {bounds::hold_ms, [](RunOptions& o, double v) { o.hold_ms = static_cast<int>(v); }},
      {bounds::ttl_ms, [](RunOptions& o, double v) { o.ttl_ms = static_cast<int>(v); }},
      {bounds::wait_ms, [](RunOptions& o, double v) { o.wait_ms = static_cast<int>(v); }},
      {bounds::retry_ms, [](RunOptions& o, double v) { o.retry_ms = static_cast<int>(v); }},
      {bounds::nodes, [](RunOptions& o, double v) { o.nodes = static_cast<int>(v); }},
      {bounds::stall_ms, [](RunOptions& o, double v) { o.stall_ms = static_cast<int>(v); }},
      {bounds::wait_replicas, [](RunOptions& o, double v) { o.wait_replicas = static_cast<int>(v); }},
      {bounds::wait_replicas_timeout_ms,
       [](RunOptions& o, double v) { o.wait_replicas_timeout_ms = static_cast<int>(v); }},
  };
  return cases;
}

// The values just outside a bound: below its minimum (the minimum itself when
// open) and above its maximum (when it has one).
std::vector<double> outside(const Bound& bound) {
  std::vector<double> values = {bound.min_open ? bound.min : bound.min - 1};
  if (bound.max != bounds::kNone) values.push_back(bound.max + 1);
  return values;
}

std::string text(double value) {
  std::ostringstream out;
  out.precision(15);
  out << value;
  return out.str();
}

TEST(Validate, DefaultsAreValid) {
  EXPECT_EQ(validate(valid_options()), std::nullopt);
  EXPECT_EQ(default_compare_workload(false).duration_s, RunOptions{}.duration_s) << "compare's defaults are run's";
  EXPECT_EQ(default_compare_workload(true).duration_s, kQuickDurationS);
  EXPECT_EQ(default_compare_workload(true).clients, RunOptions{}.clients);
}

TEST(Validate, EachBoundGivesItsOneLineError) {
  for (const auto& c : bound_cases()) {
    const std::string expected = std::string(c.bound.flag) + ": " + bound_rule(c.bound);
    for (double value : outside(c.bound)) {
      RunOptions options = valid_options();
      c.set(options, value);
      const auto problem = validate(options);
      ASSERT_TRUE(problem) << c.bound.flag << " " << value << " was accepted";
      EXPECT_EQ(*problem, expected);
      EXPECT_EQ(problem->find('\n'), std::string::npos);
    }
    // The limits themselves are allowed (an open minimum is not a limit that is allowed).
    for (double value : {c.bound.min_open ? c.bound.min + 0.5 : c.bound.min,
                         c.bound.max == bounds::kNone ? c.bound.min + 1 : c.bound.max}) {
      RunOptions options = valid_options();
      c.set(options, value);
      if (c.bound.flag == bounds::wait_replicas.flag && value > 0) options.lock = "lua-safe-delete";
      EXPECT_EQ(validate(options), std::nullopt) << c.bound.flag << " " << value;
    }
  }
}

TEST(Validate, CrossOptionChecks) {
  RunOptions options = valid_options();
  options.lock = "no-such-lock";
  EXPECT_EQ(validate(options), "--lock: unknown lock 'no-such-lock' (see: locklab list)");
  options = valid_options();
  options.key.clear();
  EXPECT_EQ(validate(options), "--key: must not be empty");
  options = valid_options();
  options.counter_redis = redis::Endpoint{"127.0.0.1", 7000};
  EXPECT_EQ(validate(options), "--counter-redis needs --redis, --sentinel or --cluster");
  options.sentinels = {redis::Endpoint{"127.0.0.1", 26379}};
  EXPECT_EQ(validate(options), std::nullopt) << "the counter apart from the master the sentinels name";
  options.sentinels.clear();
  options = valid_options();
  options.lock = "setnx";
  options.wait_replicas = 1;
  EXPECT_EQ(validate(options), "--wait-replicas applies to lua-safe-delete, reentrant-watchdog, not setnx");
  options = valid_options();
  options.clients = 2;
  options.steps.push_back(*parse_step_action("locklab:cs-enter:crash:5", nullptr));
  EXPECT_EQ(validate(options), "--step locklab:cs-enter: client 5 does not exist (--clients 2)");
  options.steps.front().client = 0;
  options.mode = ClientMode::thread;
  EXPECT_EQ(validate(options), "--step pause/crash need --mode process (a thread cannot stop or die alone)");
}

// One rule for every topology fault: the lock servers must be ours. --redis,
// --sentinel and --cluster each make them someone else's, and --sentinel is
// seen as such before its master is asked for (issue 16 §1: it filled --redis
// too late, and the fault did nothing in a run that read safe).
TEST(Validate, TopologyFaultsNeedServersLocklabStarts) {
  RunOptions options = valid_options();
  options.lock = "lua-safe-delete";
  const auto refusal = [](const std::string& name, const std::string& flag) {
    return "--fault: " + name + " acts on servers locklab starts itself; with " + flag +
           " the lock servers are not ours (client-side faults only)";
  };
  for (const std::string fault : {"node-crash", "node-pause", "clock-jump", "net:mode=cut", "unavailable"}) {
    const std::string name = fault.substr(0, fault.find(':'));
    options.faults = {fault};
    EXPECT_EQ(validate(options), std::nullopt) << fault << " on our own servers";
    options.redis = {redis::Endpoint{"127.0.0.1", 6379}};
    EXPECT_EQ(validate(options), refusal(name, "--redis")) << fault;
    options.redis.clear();
    options.sentinels = {redis::Endpoint{"127.0.0.1", 26379}};
    EXPECT_EQ(validate(options), refusal(name, "--sentinel")) << fault;
    options.sentinels.clear();
  }
  options.sentinels = {redis::Endpoint{"127.0.0.1", 26379}};
  options.faults = {"holder-crash", "slow-holder:ms=10"};
  EXPECT_EQ(validate(options), std::nullopt) << "client-side faults work on servers that are not ours";
}

// --cluster: a lock whose keys live on one master of the cluster, reached by
// slot. What cannot work that way is refused before anything starts.
// Issue 25 §3a: a --step names a point of the run's generation (the registry's
// list) or the workload's own; the list holds every point the catalog names.
TEST(Validate, StepPointsMustBeTheGenerations) {
  for (const auto& generation : generations()) {
    const auto& points = step_points(generation.name);
    for (const auto named : {generation.capabilities.release_window, generation.capabilities.acquire_gap}) {
      if (named.empty()) continue;
      EXPECT_NE(std::find(points.begin(), points.end(), named), points.end()) << generation.name << ": " << named;
    }
  }
  RunOptions options;
  options.lock = "set-nx-px-token";
  options.ops = 10;
  for (const char* spec : {"after-get-before-del:delay=1", "locklab:cs-read:delay=1", "before-release:crash:1"}) {
    options.steps = {*parse_step_action(spec, nullptr)};
    EXPECT_FALSE(validate(options)) << spec;
  }
  options.steps = {*parse_step_action("before-undo:crash", nullptr)};  // lua-safe-delete's, not set-nx-px-token's
  const auto problem = validate(options);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("set-nx-px-token has no step point 'before-undo'"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("after-get-before-del"), std::string::npos) << *problem;
}

TEST(Validate, ClusterChecks) {
  RunOptions options = valid_options();
  options.cluster = true;
  EXPECT_EQ(validate(options), std::nullopt) << "a lock without Redis: only the counter is in the cluster";
  options.lock = "redlock";
  EXPECT_EQ(validate(options),
            "--cluster stores each key on one master; redlock needs independent masters (--redis or --nodes)");
  options.lock = "lua-safe-delete";
  options.sentinels = {redis::Endpoint{"127.0.0.1", 26379}};
  EXPECT_EQ(validate(options), "--cluster and --sentinel exclude each other");
  options.sentinels.clear();
  for (const std::string fault : {"node-crash", "node-pause", "clock-jump", "net:mode=cut", "unavailable"}) {
    options.faults = {fault};
    const std::string name = fault.substr(0, fault.find(':'));
    EXPECT_EQ(validate(options), "--fault: " + name +
                                     " acts on servers locklab starts itself; with --cluster the lock servers are "
                                     "not ours (client-side faults only)")
        << fault;
  }
  options.faults = {"failover"};
  EXPECT_EQ(validate(options), std::nullopt)
      << "--cluster --fault failover starts a cluster of its own whose key's master it fails over";
  options.faults = {"holder-crash", "holder-pause:until=expired", "slow-holder:ms=10", "clock-skew:offset=5", "random"};
  options.steps.push_back(*parse_step_action("locklab:cs-exit:crash:0", nullptr));
  EXPECT_EQ(validate(options), std::nullopt) << "client-side faults and step actions work on a cluster";
  options.faults.clear();
  options.steps.clear();
  options.counter_redis = redis::Endpoint{"127.0.0.1", 7000};
  EXPECT_EQ(validate(options), std::nullopt) << "--counter-redis moves the counter out of a started cluster";
  options.wait_replicas = 1;
  EXPECT_EQ(validate(options), std::nullopt) << "a started cluster gets the replicas to WAIT for";
  options.redis = {redis::Endpoint{"127.0.0.1", 7001}};
  EXPECT_EQ(validate(options), std::nullopt) << "seeds of an existing cluster";
}

class Cli : public ::testing::Test {
 protected:
  // Runs locklab with `args`; returns the exit code and stderr.
  static std::pair<int, std::string> locklab(const std::string& args) {
    const auto outcome = testing::run_locklab(args);
    return {outcome.exit_code, outcome.err};
  }

  testing::ScratchDir scratch_{"locklab-options"};
};

// The CLI refuses each out-of-bounds value before anything starts, with exit 2
// and exactly validate()'s line.
TEST_F(Cli, EachBoundIsAUsageErrorWithValidatesMessage) {
  for (const auto& c : bound_cases()) {
    for (double value : outside(c.bound)) {
      RunOptions options = valid_options();
      c.set(options, value);
      const auto expected = validate(options);
      ASSERT_TRUE(expected);
      const std::string compare = "compare --lock no-lock --out " + scratch_.path("cmp");
      for (const std::string& command : {std::string("run --lock no-lock"), compare}) {
        const std::string args = command + " " + std::string(c.bound.flag) + " " + text(value);
        const auto [code, err] = locklab(args);
        EXPECT_EQ(code, 2) << args << ": " << err;
        EXPECT_EQ(err, "locklab: " + *expected + "\n") << args;
      }
    }
  }
  EXPECT_FALSE(fs::exists(scratch_.path("cmp"))) << "nothing ran";
}

TEST_F(Cli, OtherChecksGiveValidatesMessage) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"run --lock no-such-lock", "--lock: unknown lock 'no-such-lock' (see: locklab list)"},
      {"compare --lock no-such-lock", "--lock: unknown lock 'no-such-lock' (see: locklab list)"},
      {"run --lock no-lock --key ''", "--key: must not be empty"},
      {"run --lock no-lock --counter-redis 127.0.0.1:7000", "--counter-redis needs --redis, --sentinel or --cluster"},
      {"run --lock setnx --wait-replicas 1",
       "--wait-replicas applies to lua-safe-delete, reentrant-watchdog, not setnx"},
      {"run --lock setnx --clients 2 --step locklab:cs-enter:crash:5",
       "--step locklab:cs-enter: client 5 does not exist (--clients 2)"},
  };
  for (const auto& [args, message] : cases) {
    const auto [code, err] = locklab(args);
    EXPECT_EQ(code, 2) << args << ": " << err;
    EXPECT_EQ(err, "locklab: " + message + "\n") << args;
  }
}

// Each refusal of --cluster is exit 2 and one line, before any server starts
// (the seeds below answer nothing: a run would fail with exit 1 instead).
TEST_F(Cli, ClusterRefusalsAreUsageErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"run --lock redlock --cluster",
       "--cluster stores each key on one master; redlock needs independent masters (--redis or --nodes)"},
      {"run --lock redlock --cluster 127.0.0.1:1",
       "--cluster stores each key on one master; redlock needs independent masters (--redis or --nodes)"},
      {"run --lock setnx --cluster --sentinel 127.0.0.1:1", "--cluster and --sentinel exclude each other"},
      {"run --lock setnx --cluster --fault node-crash",
       "--fault: node-crash acts on servers locklab starts itself; with --cluster the lock servers are not ours "
       "(client-side faults only)"},
      {"run --lock lua-safe-delete --cluster --redis 127.0.0.1:1 --fault failover",
       "--fault: failover acts on servers locklab starts itself; with --cluster the lock servers are not ours "
       "(client-side faults only)"},
      {"run --lock setnx --cluster 127.0.0.1:1 --redis 127.0.0.1:2", "--cluster HOST:PORT and --redis: give the seeds once"},
      {"run --lock setnx --cluster bad", "--cluster: bad Redis address 'bad' (expected HOST:PORT)"},
  };
  for (const auto& [args, message] : cases) {
    const auto [code, err] = locklab(args);
    EXPECT_EQ(code, 2) << args << ": " << err;
    EXPECT_EQ(err, "locklab: " + message + "\n") << args;
  }
}

TEST(Compare, ReturnsErrorsAsValues) {
  CompareOptions options;
  options.locks = {"no-lock", "no-such-lock"};
  auto unknown = compare(options);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().kind, ErrorKind::usage);
  EXPECT_EQ(unknown.error().message, "--lock: unknown lock 'no-such-lock' (see: locklab list)");

  options.locks = {"no-lock"};
  options.base.clients = 0;
  auto invalid = compare(options);
  ASSERT_FALSE(invalid);
  EXPECT_EQ(invalid.error().kind, ErrorKind::usage);
  EXPECT_EQ(invalid.error().message, *out_of_bounds(bounds::clients, 0));

  // A failure that is not the caller's wording: the output directory cannot be made.
  const testing::ScratchDir dir("locklab-compare");
  std::ofstream(dir.path("file")) << "x";
  options.base = default_compare_workload(true);
  options.out = dir.path("file") + "/out";
  auto unwritable = compare(options);
  ASSERT_FALSE(unwritable);
  EXPECT_NE(unwritable.error().kind, ErrorKind::usage);
  EXPECT_NE(unwritable.error().message.find("cannot create"), std::string::npos) << unwritable.error().message;
}

// Every sweep's --out: the directory given, or a new timestamped one under its
// results/<kind>/, created either way; one that cannot be made is an io Error.
TEST(ResultDir, GivenOrNewAndCreated) {
  const testing::ScratchDir dir("locklab-result-dir");
  auto given = result_dir(dir.path("a/b"), dir.path("unused"));
  ASSERT_TRUE(given) << given.error().message;
  EXPECT_EQ(*given, dir.path("a/b"));
  EXPECT_TRUE(fs::is_directory(*given));
  EXPECT_FALSE(fs::exists(dir.path("unused")));

  auto first = result_dir("", dir.path("results"));
  auto second = result_dir("", dir.path("results"));
  ASSERT_TRUE(first && second);
  EXPECT_EQ(fs::path(*first).parent_path(), fs::path(dir.path("results")));
  EXPECT_NE(*first, *second);  // the second in the same second gets a suffix
  EXPECT_TRUE(fs::is_directory(*first) && fs::is_directory(*second));

  std::ofstream(dir.path("file")) << "x";
  auto blocked = result_dir(dir.path("file") + "/out", "");
  ASSERT_FALSE(blocked);
  EXPECT_EQ(blocked.error().kind, ErrorKind::io);
  EXPECT_EQ(blocked.error().message.rfind("cannot create " + dir.path("file") + "/out: ", 0), 0u) << blocked.error().message;
}

}  // namespace
}  // namespace locklab::harness
