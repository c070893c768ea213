// The contract every registered generation keeps, checked against real
// redis-server processes. The suite is instantiated over generations(): a
// generation registered later is tested without editing this file. What a
// generation promises comes from its Capabilities (impls/registry.h), never
// from its name; each test states which capability it checks and skips, with
// the reason, where a generation promises nothing.
//
// Outcomes are the ones lock.h documents; bounds on time are derived from the
// configured timeouts (generous, for a loaded 2-core machine), never a speed.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "redis/connection.h"
#include "redis/sha1.h"

#include "registry.h"

#include "servers/redis_cluster.h"
#include "servers/redis_server.h"
#include "support/conditions.h"

namespace locklab {
// Readable gtest output: outcome names, and the generation by name (ctest test names too).
void PrintTo(Acquire outcome, std::ostream* out) { *out << to_string(outcome); }
void PrintTo(Release outcome, std::ostream* out) { *out << to_string(outcome); }
void PrintTo(const Generation* generation, std::ostream* out) { *out << generation->name; }
}  // namespace locklab

namespace locklab::testing {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr std::size_t kMasters = 3;  // a multi-node generation gets N independent masters

// Short client timeouts for the failure tests, and the bound every failure must
// come back within: a few connects and commands per node, plus slack for a
// loaded machine. Derived from the configuration, not a speed claim.
constexpr milliseconds kConnectTimeout{300};
constexpr milliseconds kCommandTimeout{500};
milliseconds failure_bound(std::size_t nodes) {
  return 3 * (kConnectTimeout + kCommandTimeout) * static_cast<long>(std::max<std::size_t>(nodes, 1)) + 3s;
}

std::string test_name(const ::testing::TestParamInfo<const Generation*>& info) {
  std::string name = info.param->name;
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

[[maybe_unused]] std::vector<const Generation*> every_generation() {
  std::vector<const Generation*> all;
  for (const auto& generation : generations()) all.push_back(&generation);
  return all;
}

// The cluster instantiation's parameters: copies of every generation that locks
// on one Redis (not multi-node, not serverless). A copy's address says "run me
// against the cluster" (Conformance::in_cluster()); its name is the generation's.
const std::vector<Generation>& single_key_copies() {
  static const std::vector<Generation> copies = [] {
    std::vector<Generation> single;
    for (const auto& generation : generations())
      if (generation.capabilities.uses_redis && !generation.capabilities.multi_node) single.push_back(generation);
    return single;
  }();
  return copies;
}
[[maybe_unused]] std::vector<const Generation*> every_single_key_generation_in_cluster() {
  std::vector<const Generation*> all;
  for (const auto& generation : single_key_copies()) all.push_back(&generation);
  return all;
}
bool is_cluster_param(const Generation* generation) {
  const auto& copies = single_key_copies();
  return !copies.empty() && generation >= &copies.front() && generation <= &copies.back();
}

// Tests that stop, hang or secure servers: they need the single-node servers.
// In the cluster the contract is checked for what cluster mode changes (every
// command routed by key, every script's keys in one slot), not for faults.
bool needs_single_node_servers(std::string_view test) {
  for (std::string_view fault : {"MultiNodeSurvivesAMinorityOfNodesDown", "HungServerGivesUnknownOrTimedOutWithinTheBound",
                                 "ReleaseAgainstAHungServerIsAnErrorWithinTheBound",
                                 "ReleaseWhenTheServerIsGoneIsAnErrorWithinTheBound", "RefusedAuthIsAnError"})
    if (test.starts_with(fault)) return true;
  return false;
}

// Polls `condition` until it holds or `bound` passes: an observable condition, not a sleep.
bool eventually(const std::function<bool()>& condition, milliseconds bound = 10s) {
  const auto deadline = steady_clock::now() + bound;
  while (steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return condition();
}

// A loopback port that refuses connections for as long as this object lives:
// bound (so nobody else gets it) but not listening.
class RefusingPort {
 public:
  RefusingPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0)
      port_ = ntohs(address.sin_port);
  }
  RefusingPort(const RefusingPort&) = delete;
  RefusingPort& operator=(const RefusingPort&) = delete;
  ~RefusingPort() {
    if (fd_ >= 0) ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// One integer field ("name:value") of an INFO section.
std::optional<long long> info_field(std::string_view info, std::string_view name) {
  std::istringstream lines{std::string(info)};
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with(name) || line.size() <= name.size() || line[name.size()] != ':') continue;
    long long value = 0;
    const char* first = line.data() + name.size() + 1;
    if (std::from_chars(first, line.data() + line.size(), value).ec != std::errc{}) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

// A waiter on another thread. It releases on that same thread: a reentrant
// lock's owner is the thread (Redisson's UUID:threadId), not the object.
std::future<std::pair<Acquire, Release>> acquire_then_release(DistributedLock& lock, milliseconds wait) {
  return std::async(std::launch::async, [&lock, wait] {
    const Acquire acquired = lock.try_acquire(wait);
    const Release released = acquired == Acquire::acquired ? lock.release() : Release::not_owner;
    return std::pair{acquired, released};
  });
}

class Conformance : public ::testing::TestWithParam<const Generation*> {
 protected:
  const Generation& generation() const { return *GetParam(); }
  const Capabilities& can() const { return generation().capabilities; }
  std::size_t nodes() const { return !can().uses_redis ? 0 : can().multi_node ? kMasters : 1; }
  bool in_cluster() const { return is_cluster_param(GetParam()); }

  // Servers live for the test binary's process (ctest runs each test in its
  // own); every test starts with them running, resumed and empty.
  void SetUp() override {
    if (in_cluster()) {
      set_up_cluster();
      return;
    }
    while (servers_.size() < nodes()) {
      auto started = harness::RedisServer::start();
      ASSERT_TRUE(started) << started.error().message;
      servers_.push_back(std::move(started).value());
    }
    for (std::size_t i = 0; i < nodes(); ++i) {
      auto& server = *servers_[i];
      if (!server.running()) {
        ASSERT_TRUE(server.restart());
      }
      server.resume();
      auto connection = redis::Connection::connect(server.connection_options());
      ASSERT_TRUE(connection) << connection.error().message;
      admins_.push_back(std::move(connection).value());
      ASSERT_TRUE(admin(i).command({"FLUSHALL"}));
    }
  }
  // A failed assertion must not leave a server stopped for the next test.
  void TearDown() override {
    for (auto& server : servers_) server->resume();
  }
  static void TearDownTestSuite() {
    servers_.clear();
    cluster_.reset();
  }

  // One 3-master cluster for the whole process (the cluster suite runs as one
  // ctest), flushed before every test; an admin connection to every master.
  void set_up_cluster() {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    if (needs_single_node_servers(test)) GTEST_SKIP() << "a fault test: run against single nodes (EveryGeneration)";
    if (!cluster_) {
      auto started = harness::RedisCluster::start();
      ASSERT_TRUE(started) << started.error().message;
      cluster_ = std::move(started).value();
    }
    ASSERT_TRUE(cluster_->flush_all());
    for (const auto& master : cluster_->masters()) {
      auto connection = redis::Connection::connect(master->connection_options());
      ASSERT_TRUE(connection) << connection.error().message;
      admins_.push_back(std::move(connection).value());
    }
  }

  redis::Connection& admin(std::size_t node) { return admins_.at(node); }
  harness::RedisServer& server(std::size_t node) { return *servers_.at(node); }

  LockConfig config(milliseconds ttl = 10s) const {
    LockConfig lock_config;
    // A key per test: process-local state (local-mutex) outlives a test that
    // ends while holding, as a crashed client's lock outlives the client.
    lock_config.key = std::string("locklab:conformance:") +
                      ::testing::UnitTest::GetInstance()->current_test_info()->name();
    lock_config.ttl = ttl;
    lock_config.retry_interval = 5ms;
    if (in_cluster()) {
      lock_config.servers = {cluster_->seed()};  // any node: the lock routes by its key
      return lock_config;
    }
    for (std::size_t i = 0; i < nodes(); ++i) lock_config.servers.push_back(servers_[i]->connection_options());
    return lock_config;
  }

  // A short fixed lease that really runs out under a live holder: no watchdog
  // (which would keep renewing it), and a per-node timeout (Redlock) that a
  // loaded machine does not trip, where the one scaled from a short ttl would.
  LockConfig short_lease() const {
    LockConfig lock_config = config(500ms);
    lock_config.watchdog = false;
    lock_config.node_timeout = 100ms;
    return lock_config;
  }

  // Timeouts short enough for the failure tests to finish quickly.
  LockConfig failing_fast(LockConfig lock_config) const {
    for (auto& server : lock_config.servers) {
      server.connect_timeout = kConnectTimeout;
      server.command_timeout = kCommandTimeout;
    }
    return lock_config;
  }

  std::unique_ptr<DistributedLock> make(const LockConfig& lock_config) const {
    auto lock = make_lock(generation().name, lock_config);
    if (!lock) {
      ADD_FAILURE() << generation().name << ": " << lock.error().message;
      return nullptr;
    }
    return std::move(lock).value();
  }

  // The lock key on some node (the key is where every Redis generation keeps its
  // lock). In the cluster, the masters that do not own it answer MOVED: not 1.
  bool key_anywhere(const std::string& key) {
    for (std::size_t i = 0; i < admins_.size(); ++i) {
      auto reply = admin(i).command({"EXISTS", key});
      EXPECT_TRUE(reply) << reply.error().message;
      if (reply && reply->integer() == 1) return true;
    }
    return false;
  }

  void pause_all() {
    for (std::size_t i = 0; i < nodes(); ++i) server(i).pause();
  }
  void resume_all() {
    for (std::size_t i = 0; i < nodes(); ++i) server(i).resume();
  }

  // How a config that cannot work fails: at make_lock (some generations connect
  // eagerly) or at the first try_acquire. A usage error would be a wrong answer.
  struct Failure {
    std::optional<Acquire> outcome;  // nullopt: make_lock refused
    std::string message;
  };
  Failure first_failure(const LockConfig& lock_config) const {
    auto made = make_lock(generation().name, lock_config);
    if (!made) {
      EXPECT_NE(made.error().kind, ErrorKind::usage) << "the config is valid: " << made.error().message;
      return {std::nullopt, made.error().message};
    }
    const Acquire outcome = (*made)->try_acquire(0ms);
    return {outcome, (*made)->last_error()};
  }

 private:
  static inline harness::ServerList servers_;
  static inline std::unique_ptr<harness::RedisCluster> cluster_;
  std::vector<redis::Connection> admins_;
};

// ---------------------------------------------------------------------------
// Acquire, release, exclusion.

TEST_P(Conformance, AcquireReleaseRoundTrip) {
  auto lock = make(config());
  ASSERT_TRUE(lock);
  EXPECT_EQ(lock->try_acquire(0ms), Acquire::acquired) << lock->last_error();
  EXPECT_EQ(lock->release(), Release::released) << lock->last_error();
  if (can().uses_redis) {
    EXPECT_FALSE(key_anywhere(config().key)) << "release must remove the lock key";
  }
  EXPECT_EQ(lock->try_acquire(0ms), Acquire::acquired) << "acquirable again after release: " << lock->last_error();
  EXPECT_EQ(lock->release(), Release::released) << lock->last_error();
  EXPECT_TRUE(lock->last_error().empty());
}

// Every EVAL and EVALSHA a lock sends, from any thread (its watchdog's too).
class ScriptCalls : public redis::TrafficObserver {
 public:
  void sent(const redis::Endpoint&, const redis::Args& request) override {
    if (request.size() < 3 || (request[0] != "EVAL" && request[0] != "EVALSHA")) return;
    std::lock_guard lock(mutex_);
    calls_.push_back(request);
  }
  void received(const redis::Endpoint&, const redis::Reply*, const Error*) override {}
  std::vector<redis::Args> calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<redis::Args> calls_;
};

// What reads a story's traffic (harness/scenario/lock_lanes.h) knows a script
// only by the generation's own list (registry.h, scripts()): every script the
// lock sends is listed, called with its listed KEYS and ARGV counts, and each
// listed SHA-1 is the one Redis gives its source.
TEST_P(Conformance, EveryScriptItSendsIsOneItLists) {
  const auto& listed = scripts(generation().name);
  for (const auto& script : listed) {
    auto loaded = admin(0).command({"SCRIPT", "LOAD", script.source});
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_EQ(loaded->text(), script.sha1) << generation().name;
    EXPECT_EQ(find_script(generation().name, script.sha1), &script) << generation().name;
  }
  ScriptCalls log;
  redis::set_traffic_observer(&log);
  auto holder = make(config());
  auto other = make(config());
  ASSERT_TRUE(holder && other);
  EXPECT_EQ(holder->try_acquire(0ms), Acquire::acquired) << holder->last_error();
  (void)other->try_acquire(0ms);  // refused, or in when the lock excludes nobody
  (void)holder->release();
  (void)other->release();
  if (can().auto_extends) {  // its watchdog's renewal: a short lease, renewed every third of it
    auto renewed = make(config(300ms));
    ASSERT_TRUE(renewed);
    EXPECT_EQ(renewed->try_acquire(0ms), Acquire::acquired) << renewed->last_error();
    const auto renewals = [&] {
      for (const auto& call : log.calls())
        if (const auto* script = find_script(generation().name, call[1]); script && script->role == ScriptRole::renew)
          return true;
      return false;
    };
    EXPECT_TRUE(harness::wait_until(renewals, 10s)) << "no renewal script seen";
    (void)renewed->release();
  }
  redis::set_traffic_observer(nullptr);
  const auto calls = log.calls();
  EXPECT_EQ(calls.empty(), listed.empty()) << generation().name << " sent " << calls.size() << " script calls";
  for (const auto& call : calls) {
    const ScriptShape* script = find_script(generation().name, call[1]);
    ASSERT_NE(script, nullptr) << generation().name << ": " << call[0] << " of a script it does not list";
    EXPECT_EQ(call[2], std::to_string(script->keys)) << generation().name;
    EXPECT_EQ(call.size(), static_cast<std::size_t>(3 + script->keys + script->args)) << generation().name;
  }
}

// SHA-1 as FIPS 180-4's examples give it (one block, two blocks, none).
TEST(Registry, Sha1IsTheStandardOne) {
  EXPECT_EQ(redis::sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(redis::sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(redis::sha1_hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
}

// A script is found by its SHA-1 or its whole source, and only among its own generation's.
TEST(Registry, AScriptIsFoundByItsShaOrItsSource) {
  for (const auto& generation : generations())
    for (const auto& script : scripts(generation.name)) {
      EXPECT_EQ(find_script(generation.name, script.source), &script) << generation.name;
      EXPECT_EQ(find_script(generation.name, redis::sha1_hex(script.source)), &script) << generation.name;
      EXPECT_EQ(find_script(generation.name, script.source.substr(0, 61) + "..."), nullptr) << generation.name;
    }
  EXPECT_EQ(find_script("lua-safe-delete", ""), nullptr);
  EXPECT_EQ(find_script("setnx", scripts("lua-safe-delete").front().sha1), nullptr);
  EXPECT_EQ(find_script("reentrant-watchdog+redisson", scripts("reentrant-watchdog").front().sha1),
            &scripts("reentrant-watchdog").front());
}

TEST_P(Conformance, SecondObjectIsRefusedWhileTheFirstHolds) {
  auto first = make(config());
  auto second = make(config());
  ASSERT_TRUE(first && second);
  ASSERT_EQ(first->try_acquire(0ms), Acquire::acquired) << first->last_error();

  if (can().exclusion == Exclusion::none) {
    EXPECT_EQ(second->try_acquire(0ms), Acquire::acquired) << "excludes nobody: both are inside at once";
    return;
  }
  EXPECT_EQ(second->try_acquire(0ms), Acquire::timed_out) << second->last_error();
  const auto start = steady_clock::now();
  EXPECT_EQ(second->try_acquire(60ms), Acquire::timed_out) << second->last_error();
  const auto waited = steady_clock::now() - start;
  EXPECT_GE(waited, 60ms) << "a bounded wait must be honoured, not cut short";
  EXPECT_LT(waited, failure_bound(nodes())) << "and must end";

  ASSERT_EQ(first->release(), Release::released) << first->last_error();
  EXPECT_EQ(second->try_acquire(0ms), Acquire::acquired) << second->last_error();
  EXPECT_EQ(second->release(), Release::released) << second->last_error();
}

// Exclusion::within_process is the local mutex's lesson (seed 004 §11: "58 of
// 101"): another process is inside at the same time. across_processes must refuse it.
TEST_P(Conformance, AnotherProcessIsRefusedOnlyWhenExclusionCrossesProcesses) {
  int child_says[2], parent_says[2];
  ASSERT_EQ(::pipe(child_says), 0);
  ASSERT_EQ(::pipe(parent_says), 0);
  const LockConfig lock_config = config();

  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // No gtest in the child: one byte says whether it holds the lock.
    auto made = make_lock(generation().name, lock_config);
    const bool holds = made && (*made)->try_acquire(0ms) == Acquire::acquired;
    const char report = holds ? 'H' : 'F';
    (void)!::write(child_says[1], &report, 1);
    char done = 0;
    (void)!::read(parent_says[0], &done, 1);  // hold until the parent has tried
    if (holds) (*made)->release();
    ::_exit(0);
  }

  pollfd ready{child_says[0], POLLIN, 0};
  const bool reported = ::poll(&ready, 1, static_cast<int>(failure_bound(nodes()).count())) == 1;
  char child_state = 0;
  if (reported) {
    EXPECT_EQ(::read(child_says[0], &child_state, 1), 1);
  }

  std::optional<Acquire> here;
  if (child_state == 'H') {
    auto lock = make(lock_config);
    if (lock) {
      here = lock->try_acquire(0ms);
      if (*here == Acquire::acquired) lock->release();
    }
  }
  (void)!::write(parent_says[1], "x", 1);
  int status = 0;
  EXPECT_EQ(::waitpid(child, &status, 0), child);
  for (int fd : {child_says[0], child_says[1], parent_says[0], parent_says[1]}) ::close(fd);

  ASSERT_TRUE(reported) << "the child never reported";
  ASSERT_EQ(child_state, 'H') << "the child process could not acquire";
  ASSERT_TRUE(here);
  if (can().exclusion == Exclusion::across_processes)
    EXPECT_EQ(*here, Acquire::timed_out) << "another process holds the lock";
  else
    EXPECT_EQ(*here, Acquire::acquired) << "exclusion stops at the process: both are inside at once";
}

TEST_P(Conformance, WaiterGetsTheLockWhenTheHolderReleases) {
  if (can().exclusion == Exclusion::none) GTEST_SKIP() << "excludes nobody: nobody ever waits";
  auto holder = make(config());
  auto waiter = make(config());
  ASSERT_TRUE(holder && waiter);
  ASSERT_EQ(holder->try_acquire(0ms), Acquire::acquired) << holder->last_error();
  auto waited = acquire_then_release(*waiter, 10s);
  ASSERT_EQ(waited.wait_for(50ms), std::future_status::timeout) << "acquired while the holder holds";
  ASSERT_EQ(holder->release(), Release::released) << holder->last_error();
  const auto [acquired, released] = waited.get();
  EXPECT_EQ(acquired, Acquire::acquired);
  EXPECT_EQ(released, Release::released);
}

// notifies_waiters: the release wakes the waiter; it does not wait for its next
// poll. The retry interval is made far longer than the bound, so a waiter that
// only polls cannot pass. (If the waiter's first attempt came after the
// release it acquires at once: the verdict holds either way.)
TEST_P(Conformance, ReleaseWakesAWaiterWhenItNotifiesWaiters) {
  if (!can().notifies_waiters) GTEST_SKIP() << "does not promise to notify waiters (they poll)";
  LockConfig lock_config = config(60s);
  lock_config.retry_interval = 30s;
  auto holder = make(lock_config);
  auto waiter = make(lock_config);
  ASSERT_TRUE(holder && waiter);
  ASSERT_EQ(holder->try_acquire(0ms), Acquire::acquired) << holder->last_error();
  auto waited = acquire_then_release(*waiter, 50s);
  ASSERT_EQ(waited.wait_for(100ms), std::future_status::timeout) << "acquired while the holder holds";

  ASSERT_EQ(holder->release(), Release::released) << holder->last_error();
  ASSERT_EQ(waited.wait_for(15s), std::future_status::ready) << "the waiter was not woken by the release";
  const auto [acquired, released] = waited.get();
  EXPECT_EQ(acquired, Acquire::acquired);
  EXPECT_EQ(released, Release::released);
}

TEST_P(Conformance, ReentrancyIsWhatTheCapabilitySays) {
  if (can().exclusion == Exclusion::none) GTEST_SKIP() << "excludes nobody: re-entry means nothing";
  auto lock = make(config());
  auto other = make(config());
  ASSERT_TRUE(lock && other);
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired) << lock->last_error();
  if (can().reentrant) {
    ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired) << "reentrant: the holder enters again";
    EXPECT_EQ(lock->release(), Release::still_held) << "one level released, one still held";
    EXPECT_EQ(other->try_acquire(0ms), Acquire::timed_out);
  } else {
    EXPECT_NE(lock->try_acquire(0ms), Acquire::acquired) << "not reentrant: the holder is refused too";
  }
  EXPECT_EQ(lock->release(), Release::released) << lock->last_error();
  EXPECT_EQ(other->try_acquire(0ms), Acquire::acquired) << "the last release frees the lock";
  EXPECT_EQ(other->release(), Release::released);
}

TEST_P(Conformance, FencingTokensIncreaseFromHolderToHolder) {
  auto first = make(config());
  auto second = make(config());
  ASSERT_TRUE(first && second);
  ASSERT_EQ(first->try_acquire(0ms), Acquire::acquired) << first->last_error();
  const auto first_token = first->fencing_token();
  if (!can().fencing) {
    EXPECT_FALSE(first_token) << "a generation without fencing hands out no token";
    EXPECT_EQ(first->release(), Release::released);
    return;
  }
  ASSERT_TRUE(first_token) << "fencing: a holder carries a token";
  ASSERT_EQ(first->release(), Release::released);
  ASSERT_EQ(second->try_acquire(0ms), Acquire::acquired) << second->last_error();
  ASSERT_TRUE(second->fencing_token());
  EXPECT_GT(*second->fencing_token(), *first_token) << "the next holder's token is larger";
}

TEST_P(Conformance, MultiNodeSurvivesAMinorityOfNodesDown) {
  if (!can().multi_node) GTEST_SKIP() << "single node (or none): no quorum to survive with";
  server(0).crash();
  auto lock = make(config());
  ASSERT_TRUE(lock);
  EXPECT_EQ(lock->try_acquire(2s), Acquire::acquired) << lock->last_error();
  EXPECT_EQ(lock->release(), Release::released) << lock->last_error();
}

// ---------------------------------------------------------------------------
// Release: by a non-owner, and after the lease expired.

TEST_P(Conformance, ReleaseByANonOwnerLeavesTheHolderInPlace) {
  if (can().exclusion == Exclusion::none) GTEST_SKIP() << "excludes nobody: there is no holder to protect";
  auto holder = make(config());
  auto intruder = make(config());
  auto third = make(config());
  ASSERT_TRUE(holder && intruder && third);
  ASSERT_EQ(holder->try_acquire(0ms), Acquire::acquired) << holder->last_error();
  // Blind releases (DEL) refuse here too: the object knows it never acquired.
  EXPECT_EQ(intruder->release(), Release::not_owner) << intruder->last_error();
  EXPECT_EQ(third->try_acquire(0ms), Acquire::timed_out) << "the holder still holds";
  EXPECT_EQ(holder->release(), Release::released) << holder->last_error();
}

// A holder whose lease ran out releases after a second client took the lock.
// owner-checked: not_owner, the second keeps it. Blind (DEL, generations 1b
// and 2): the late DEL frees the second client's lock — their documented race.
TEST_P(Conformance, ReleaseAfterTheLeaseExpiredAndWasTakenOver) {
  if (!can().expires) GTEST_SKIP() << "no lease: a holder's lock never expires";
  auto first = make(short_lease());
  auto second = make(short_lease());
  auto third = make(short_lease());
  ASSERT_TRUE(first && second && third);
  ASSERT_EQ(first->try_acquire(2s), Acquire::acquired) << first->last_error();
  ASSERT_EQ(second->try_acquire(10s), Acquire::acquired) << "the lease never lapsed: " << second->last_error();

  const Release late = first->release();
  if (can().owner_checked_release) {
    EXPECT_EQ(late, Release::not_owner) << first->last_error();
    EXPECT_EQ(third->try_acquire(0ms), Acquire::timed_out) << "the second holder keeps its lock";
    EXPECT_EQ(second->release(), Release::released) << second->last_error();
  } else {
    EXPECT_EQ(late, Release::released) << first->last_error();
    EXPECT_EQ(third->try_acquire(0ms), Acquire::acquired) << "the blind release freed the second holder's lock";
  }
}

TEST_P(Conformance, ReleaseAfterTheLeaseExpiredIsAlreadyExpired) {
  if (!can().expires) GTEST_SKIP() << "no lease: a holder's lock never expires";
  if (!can().owner_checked_release) GTEST_SKIP() << "blind release: it cannot tell an expired lease from a live one";
  auto lock = make(short_lease());
  ASSERT_TRUE(lock);
  ASSERT_EQ(lock->try_acquire(2s), Acquire::acquired) << lock->last_error();
  ASSERT_TRUE(eventually([&] { return !key_anywhere(short_lease().key); })) << "the lease never ran out";
  EXPECT_EQ(lock->release(), Release::already_expired) << lock->last_error();
}

// auto_extends: a live holder keeps its lock well past one lease (its watchdog
// renews it); without it, another client takes the lock once the TTL ran out.
TEST_P(Conformance, AutoExtendedLeaseOutlivesItsTtlWhileTheHolderRuns) {
  if (!can().expires) GTEST_SKIP() << "no lease: nothing to extend";
  LockConfig lease = config(300ms);
  lease.node_timeout = 100ms;  // Redlock: not the one scaled from a short ttl (see short_lease())
  auto holder = make(lease);
  auto other = make(lease);
  ASSERT_TRUE(holder && other);
  ASSERT_EQ(holder->try_acquire(2s), Acquire::acquired) << holder->last_error();
  if (!can().auto_extends) {  // another takes it once the lease ran out (getset-timestamp: by takeover)
    EXPECT_TRUE(eventually([&] { return other->try_acquire(0ms) == Acquire::acquired; }))
        << "a lease that is not extended runs out";
    return;
  }
  const auto past_three_leases = steady_clock::now() + 3 * lease.ttl;
  while (steady_clock::now() < past_three_leases) {
    ASSERT_TRUE(key_anywhere(lease.key)) << "the watchdog let the lease lapse under a live holder";
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(other->try_acquire(0ms), Acquire::timed_out) << "still the holder's after three leases";
  EXPECT_EQ(holder->release(), Release::released) << holder->last_error();
}

// ---------------------------------------------------------------------------
// Bounded failures.

TEST_P(Conformance, InvalidConfigIsAUsageError) {
  auto empty_key = config();
  empty_key.key = "";
  auto made = make_lock(generation().name, empty_key);
  ASSERT_FALSE(made) << "empty key accepted";
  EXPECT_EQ(made.error().kind, ErrorKind::usage);
  EXPECT_NE(made.error().message.find("lock key must not be empty"), std::string::npos) << made.error().message;

  for (const milliseconds bad_ttl : {0ms, -5ms}) {
    made = make_lock(generation().name, config(bad_ttl));
    ASSERT_FALSE(made) << "ttl " << bad_ttl.count() << " accepted";
    EXPECT_EQ(made.error().kind, ErrorKind::usage);
    EXPECT_NE(made.error().message.find("ttl must be > 0"), std::string::npos) << made.error().message;
  }

  if (!can().uses_redis) return;
  auto no_server = config();
  no_server.servers.clear();
  made = make_lock(generation().name, no_server);
  ASSERT_FALSE(made) << "no server accepted";
  EXPECT_EQ(made.error().kind, ErrorKind::usage);
  EXPECT_NE(made.error().message.find("Redis server"), std::string::npos) << made.error().message;
}

TEST_P(Conformance, UnreachableServerIsAnErrorWithinTheBound) {
  if (!can().uses_redis) GTEST_SKIP() << "uses no server";
  std::vector<std::unique_ptr<RefusingPort>> ports;
  LockConfig unreachable = failing_fast(config());
  for (auto& server : unreachable.servers) {
    ports.push_back(std::make_unique<RefusingPort>());
    ASSERT_GT(ports.back()->port(), 0);
    server.endpoint = {"127.0.0.1", ports.back()->port()};
  }
  const auto start = steady_clock::now();
  const Failure failure = first_failure(unreachable);
  EXPECT_LE(steady_clock::now() - start, failure_bound(nodes()));
  if (failure.outcome) {
    EXPECT_EQ(*failure.outcome, Acquire::error) << failure.message;
  }
  EXPECT_NE(failure.message.find("127.0.0.1:" + std::to_string(ports.front()->port())), std::string::npos)
      << "the error names the server: " << failure.message;
}

// SIGSTOP: the server accepts the request and never answers. The acquiring
// request may have been applied, so the answer is unknown (or timed_out), never
// error and never a hang.
TEST_P(Conformance, HungServerGivesUnknownOrTimedOutWithinTheBound) {
  if (!can().uses_redis) GTEST_SKIP() << "uses no server";
  auto lock = make(failing_fast(config()));
  ASSERT_TRUE(lock);
  ASSERT_EQ(lock->try_acquire(2s), Acquire::acquired) << lock->last_error();  // connected, scripts loaded
  ASSERT_EQ(lock->release(), Release::released) << lock->last_error();

  pause_all();
  const auto start = steady_clock::now();
  const Acquire outcome = lock->try_acquire(0ms);
  const auto took = steady_clock::now() - start;
  resume_all();
  EXPECT_TRUE(outcome == Acquire::unknown || outcome == Acquire::timed_out)
      << to_string(outcome) << ": " << lock->last_error();
  EXPECT_LE(took, failure_bound(nodes()));
}

TEST_P(Conformance, ReleaseAgainstAHungServerIsAnErrorWithinTheBound) {
  if (!can().uses_redis) GTEST_SKIP() << "uses no server";
  auto lock = make(failing_fast(config()));
  ASSERT_TRUE(lock);
  ASSERT_EQ(lock->try_acquire(2s), Acquire::acquired) << lock->last_error();
  pause_all();
  const auto start = steady_clock::now();
  const Release outcome = lock->release();
  const auto took = steady_clock::now() - start;
  resume_all();
  EXPECT_EQ(outcome, Release::error) << to_string(outcome);
  EXPECT_FALSE(lock->last_error().empty());
  EXPECT_LE(took, failure_bound(nodes()));
}

TEST_P(Conformance, ReleaseWhenTheServerIsGoneIsAnErrorWithinTheBound) {
  if (!can().uses_redis) GTEST_SKIP() << "uses no server";
  auto lock = make(failing_fast(config()));
  ASSERT_TRUE(lock);
  ASSERT_EQ(lock->try_acquire(2s), Acquire::acquired) << lock->last_error();
  for (std::size_t i = 0; i < nodes(); ++i) server(i).crash();
  const auto start = steady_clock::now();
  EXPECT_EQ(lock->release(), Release::error);
  EXPECT_FALSE(lock->last_error().empty());
  EXPECT_LE(steady_clock::now() - start, failure_bound(nodes()));
}

TEST_P(Conformance, RefusedAuthIsAnError) {
  if (!can().uses_redis) GTEST_SKIP() << "uses no server";
  harness::ServerOptions options;
  options.password = "s3cret";
  auto secured = harness::start_masters(nodes(), options);
  ASSERT_TRUE(secured) << secured.error().message;

  LockConfig wrong = failing_fast(config());
  wrong.servers.clear();
  for (const auto& server : *secured) wrong.servers.push_back(server->connection_options());
  for (auto& server : wrong.servers) server.password = "wrong";
  auto failure = first_failure(wrong);
  if (failure.outcome) {
    EXPECT_EQ(*failure.outcome, Acquire::error) << failure.message;
  }
  EXPECT_NE(failure.message.find("AUTH"), std::string::npos) << failure.message;

  LockConfig missing = wrong;
  for (auto& server : missing.servers) server.password.clear();
  failure = first_failure(missing);
  if (failure.outcome) {
    EXPECT_EQ(*failure.outcome, Acquire::error) << failure.message;
  }
  EXPECT_NE(failure.message.find("NOAUTH"), std::string::npos) << failure.message;

  LockConfig right = wrong;
  for (auto& server : right.servers) server.password = "s3cret";
  auto lock = make(right);
  ASSERT_TRUE(lock);
  EXPECT_EQ(lock->try_acquire(2s), Acquire::acquired) << lock->last_error();
}

// ---------------------------------------------------------------------------
// Cost: what the client counts (redis::traffic(), the harness's "round trips"
// and "commands per acquisition") is what the servers saw.
//
// - Exchanges vs INFO stats total_writes_processed: uncontended, every
//   exchange is answered by one reply write on its node (a pipeline's replies
//   leave in one write). A round trip is one wait: a fan-out to N nodes is one
//   round trip and N exchanges. Our own INFO adds one write (its reply leaves after its snapshot).
// - Commands vs MONITOR: the lines a node logs for commands that arrived over
//   the network. Lines from "lua" are calls a script made: the server runs
//   them, the client never sent them (INFO commandstats counts both, which is
//   why the harness's "server commands" is larger than the client's count for
//   Lua generations). MONITOR does not log AUTH: the lock connects (and
//   authenticates) in a warm-up cycle before counting starts.

constexpr int kCycles = 5;

class CostConformance : public Conformance {
 protected:
  // Watchdog renewals come every ttl/3; a long ttl keeps them out of the window.
  LockConfig cost_config() const { return config(60s); }

  void cycles(DistributedLock& lock) {
    for (int i = 0; i < kCycles; ++i) {
      ASSERT_EQ(lock.try_acquire(0ms), Acquire::acquired) << lock.last_error();
      ASSERT_EQ(lock.release(), Release::released) << lock.last_error();
    }
  }

  long long replies_written() {
    long long total = 0;
    for (std::size_t i = 0; i < nodes(); ++i) {
      auto info = admin(i).command({"INFO", "stats"});
      EXPECT_TRUE(info) << info.error().message;
      const auto writes = info ? info_field(info->text(), "total_writes_processed") : std::nullopt;
      EXPECT_TRUE(writes) << "no total_writes_processed in INFO stats";
      total += writes.value_or(0);
    }
    return total;
  }
};

TEST_P(CostConformance, RoundTripsAgreeWithTheRepliesTheServersWrote) {
  if (!can().uses_redis) GTEST_SKIP() << "uses no server: no round trips";
  auto lock = make(cost_config());
  ASSERT_TRUE(lock);
  cycles(*lock);  // warm-up: connect, load scripts

  const long long written_before = replies_written();
  const auto before = redis::traffic();
  cycles(*lock);
  const auto after = redis::traffic();
  const long long written = replies_written() - written_before - static_cast<long long>(nodes());

  EXPECT_EQ(static_cast<long long>(after.exchanges - before.exchanges), written);
  EXPECT_GE(after.round_trips - before.round_trips, static_cast<std::uint64_t>(2 * kCycles))
      << "an acquisition and a release are at least one round trip each";
  // A fan-out to N nodes is one round trip (one wait) and N exchanges; on one
  // node every exchange is a wait of its own.
  if (nodes() == 1)
    EXPECT_EQ(after.round_trips - before.round_trips, after.exchanges - before.exchanges);
  else
    EXPECT_LT(after.round_trips - before.round_trips, after.exchanges - before.exchanges);
}

TEST_P(CostConformance, CommandsAgreeWithWhatTheServersReceived) {
  if (!can().uses_redis) GTEST_SKIP() << "uses no server: no commands";
  auto lock = make(cost_config());
  ASSERT_TRUE(lock);
  cycles(*lock);  // warm-up: connect, load scripts

  std::vector<redis::Connection> monitors;
  for (std::size_t i = 0; i < nodes(); ++i) {
    auto monitor = redis::Connection::connect(server(i).connection_options());
    ASSERT_TRUE(monitor) << monitor.error().message;
    ASSERT_TRUE(monitor->send({"MONITOR"}));
    auto ok = monitor->read_until(steady_clock::now() + 5s);
    ASSERT_TRUE(ok && ok->is_status("OK"));
    monitors.push_back(std::move(monitor).value());
  }

  const auto before = redis::traffic();
  cycles(*lock);
  const auto after = redis::traffic();

  const std::string marker = "locklab:conformance:end-of-count";
  std::uint64_t received = 0, from_scripts = 0;
  for (std::size_t i = 0; i < nodes(); ++i) {
    ASSERT_TRUE(admin(i).command({"ECHO", marker}));
    const auto deadline = steady_clock::now() + 10s;
    for (;;) {
      auto line = monitors[i].read_until(deadline);
      ASSERT_TRUE(line) << "MONITOR never showed the marker: " << line.error().message;
      const std::string_view text = line->text();
      if (text.find(marker) != std::string_view::npos) break;
      if (text.find("[0 lua]") != std::string_view::npos) ++from_scripts;
      else ++received;
    }
  }
  EXPECT_EQ(after.commands - before.commands, received) << "plus " << from_scripts << " calls made by scripts";
}

// conformance_test: every generation on single nodes, one ctest per test.
// conformance_cluster_test (the same file, LOCKLAB_CONFORMANCE_IN_CLUSTER): every
// single-key generation against one 3-master Redis Cluster, one ctest for all.
#ifndef LOCKLAB_CONFORMANCE_IN_CLUSTER
INSTANTIATE_TEST_SUITE_P(EveryGeneration, Conformance, ::testing::ValuesIn(every_generation()), test_name);
INSTANTIATE_TEST_SUITE_P(EveryGeneration, CostConformance, ::testing::ValuesIn(every_generation()), test_name);
#else
INSTANTIATE_TEST_SUITE_P(InCluster, Conformance, ::testing::ValuesIn(every_single_key_generation_in_cluster()),
                         test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CostConformance);
#endif

// The suite is only as good as the registry it reads.
TEST(Registry, EveryGenerationIsDescribedAndFindable) {
  ASSERT_FALSE(generations().empty());
  for (const auto& generation : generations()) {
    EXPECT_EQ(find_generation(generation.name), &generation) << generation.name;
    EXPECT_FALSE(generation.number.empty()) << generation.name;
    EXPECT_FALSE(generation.summary.empty()) << generation.name;
    EXPECT_FALSE(generation.race.empty()) << generation.name;
    EXPECT_TRUE(generation.make) << generation.name;
    const Capabilities& can = generation.capabilities;
    EXPECT_TRUE(can.uses_redis || !can.multi_node) << generation.name << ": multi-node without Redis";
    EXPECT_TRUE(can.uses_redis || can.exclusion != Exclusion::across_processes)
        << generation.name << ": nothing shared between processes, so nothing excludes across them";
  }
  auto unknown = make_lock("no-such-lock", LockConfig{});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().kind, ErrorKind::usage);
}

}  // namespace
}  // namespace locklab::testing
