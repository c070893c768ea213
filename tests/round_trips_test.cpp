// Round trips are the cost model (issue 11 §2): every generation's uncontended
// acquire + release does the minimum number of round trips its algorithm
// allows, and sends nothing twice.
//
// The table below is the minimum, argued per generation. A generation that
// starts sending one more command (an EVAL where an EVALSHA would do, a
// SCRIPT LOAD every time, a GET before a SET, Redlock's nodes asked one after
// another) fails here. The first cycle is a warm-up: it connects and loads the
// scripts (one SCRIPT LOAD per script per connection, once), which the
// steady state must not repeat.
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "redis/connection.h"

#include "lock.h"
#include "registry.h"

#include "servers/redis_server.h"

namespace locklab {
namespace {

using namespace std::chrono_literals;

struct Minimum {
  std::uint64_t round_trips;  // waits for replies per acquire + release
  std::uint64_t commands;     // requests sent per acquire + release (a fan-out to 5 sends 5)
  const char* why;
};

constexpr std::size_t kNodes = 5;  // multi-node generations: Redlock's usual 5

// Every registered generation must be in this table (checked below).
const std::map<std::string, Minimum>& minimums() {
  static const std::map<std::string, Minimum> table = {
      {"no-lock", {0, 0, "no server"}},
      {"local-mutex", {0, 0, "no server"}},
      {"setnx", {2, 2, "SETNX; DEL"}},
      {"setnx-expire", {3, 3, "SETNX; EXPIRE (only after SETNX won, so not pipelined); DEL"}},
      {"getset-timestamp", {2, 2, "SETNX wins on a free key; DEL"}},
      {"set-nx-px-token", {3, 3, "SET NX PX; GET, compare in the client, DEL (the race of generation 3)"}},
      {"lua-safe-delete", {2, 2, "SET NX PX; EVALSHA compare-and-delete"}},
      {"reentrant-watchdog", {2, 2, "EVALSHA acquire script; EVALSHA release script (no waiter: no PUBLISH wait)"}},
      {"redlock", {2, 2 * kNodes, "one fan-out of SET NX PX to every node; one fan-out of compare-and-delete"}},
      {"fenced", {2, 2, "EVALSHA SET NX PX + INCR fence; EVALSHA compare-and-delete"}},
      {"fair-queue", {2, 2, "EVALSHA join-or-take; EVALSHA release-and-hand-over"}},
  };
  return table;
}

class RoundTrips : public ::testing::TestWithParam<const Generation*> {
 protected:
  static void SetUpTestSuite() {
    auto started = harness::start_masters(kNodes);
    ASSERT_TRUE(started) << started.error().message;
    servers_ = std::move(started).value();
  }
  static void TearDownTestSuite() { servers_.clear(); }

  const Generation& generation() const { return *GetParam(); }

  LockConfig config() const {
    LockConfig lock_config;
    lock_config.key = "locklab:round-trips:" + generation().name;
    lock_config.ttl = 60s;  // a watchdog renews every ttl/3: kept out of the window
    if (generation().capabilities.uses_redis) {
      const std::size_t nodes = generation().capabilities.multi_node ? kNodes : 1;
      for (std::size_t i = 0; i < nodes; ++i) lock_config.servers.push_back(servers_[i]->connection_options());
    }
    return lock_config;
  }

  static inline harness::ServerList servers_;
};

void cycle(DistributedLock& lock) {
  ASSERT_EQ(lock.try_acquire(0ms), Acquire::acquired) << lock.last_error();
  ASSERT_EQ(lock.release(), Release::released) << lock.last_error();
}

TEST_P(RoundTrips, UncontendedAcquireAndReleaseCostTheAlgorithmsMinimum) {
  const auto known = minimums().find(generation().name);
  ASSERT_NE(known, minimums().end()) << "add " << generation().name << " to the table with its minimum";
  const Minimum& minimum = known->second;
  ASSERT_TRUE(servers_.size() == kNodes);

  auto made = generation().make(config());
  ASSERT_TRUE(made) << made.error().message;
  auto& lock = *made.value();

  const auto before_warm_up = redis::traffic();
  cycle(lock);  // connects, loads its scripts once
  if (::testing::Test::HasFatalFailure()) return;
  const auto warm = redis::traffic();

  constexpr std::uint64_t kCycles = 10;
  for (std::uint64_t i = 0; i < kCycles; ++i) {
    cycle(lock);
    if (::testing::Test::HasFatalFailure()) return;
  }
  const auto after = redis::traffic();

  EXPECT_EQ(after.round_trips - warm.round_trips, kCycles * minimum.round_trips)
      << "round trips per acquire + release; the minimum is " << minimum.why;
  EXPECT_EQ(after.commands - warm.commands, kCycles * minimum.commands)
      << "commands per acquire + release; the minimum is " << minimum.why;
  // The warm-up may add one SCRIPT LOAD per script (lazily, on first use), no more.
  EXPECT_LE(warm.round_trips - before_warm_up.round_trips, minimum.round_trips + 2)
      << "the first cycle: the minimum plus at most one SCRIPT LOAD per script";
}

TEST(RoundTripTable, NamesOnlyRegisteredGenerations) {
  for (const auto& [name, minimum] : minimums())
    EXPECT_NE(find_generation(name), nullptr) << name << " is in the table but not in the registry";
}

std::vector<const Generation*> every_generation() {
  std::vector<const Generation*> all;
  for (const auto& generation : generations()) all.push_back(&generation);
  return all;
}

std::string test_name(const ::testing::TestParamInfo<const Generation*>& info) {
  std::string name = info.param->name;
  for (auto& c : name)
    if (c == '-') c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(EveryGeneration, RoundTrips, ::testing::ValuesIn(every_generation()), test_name);

}  // namespace
}  // namespace locklab
