// Run options: one set of defaults, one set of bounds. validate() (library
// callers) and the CLI's validators refuse the same values with the same line;
// compare() reports what stops it as an error value, not an exit code.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "compare.h"
#include "run.h"
#include "support/locklab_binary.h"

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
  EXPECT_EQ(validate(options), "--counter-redis needs --redis");
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
      {"run --lock no-lock --counter-redis 127.0.0.1:7000", "--counter-redis needs --redis"},
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

}  // namespace
}  // namespace locklab::harness
