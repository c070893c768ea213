// Generation 7, the fenced lock: tokens that increase across holders, and the
// pause interleavings (Kleppmann's K1) in which a lease lock loses an update
// and the fenced resource refuses the stale write instead.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>

#include "g7_fenced.h"
#include "registry.h"

#include "fixtures/redis_fixture.h"
#include "nemesis/nemesis.h"
#include "resource/counter_resource.h"
#include "run/run.h"
#include "scenario/step_gate.h"
#include "support/conditions.h"

namespace locklab::testing {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

constexpr const char* kCriticalSection = "after-read-before-write";

class FencedTest : public RedisTest {
 protected:
  std::unique_ptr<FencedLock> make(milliseconds ttl = 10s) {
    auto made = FencedLock::create(config(ttl));
    EXPECT_TRUE(made) << made.error().message;
    if (!made) return nullptr;
    return std::unique_ptr<FencedLock>(static_cast<FencedLock*>(made.value().release()));
  }

  // Generation 4, the same lease without a token: the unfenced half of each comparison.
  std::unique_ptr<DistributedLock> make_lua_safe_delete(milliseconds ttl = 10s) {
    auto made = make_lock("lua-safe-delete", config(ttl));
    EXPECT_TRUE(made) << made.error().message;
    return made ? std::move(made).value() : nullptr;
  }

  harness::CounterResource counter() { return harness::CounterResource(server().connection_options(), "counter"); }

  // Bounded wait until the lease has run out on the server.
  bool wait_until_expired(const std::string& key, milliseconds limit = 3s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (run({"PTTL", key}).integer() == -2) return true;
      std::this_thread::sleep_for(5ms);
    }
    return false;
  }
};

// One client of the seeds' counter demo: acquire, read, [pause], write, release.
// `fenced` = the resource sees the lock's fencing token; otherwise it is the
// plain counter (GET / SET).
struct Client {
  Client(DistributedLock& lock_, harness::CounterResource resource_, bool fenced_, StepHook pause_)
      : lock(lock_), resource(std::move(resource_)), fenced(fenced_), pause(std::move(pause_)) {}

  DistributedLock& lock;
  harness::CounterResource resource;
  bool fenced;
  StepHook pause;  // called at kCriticalSection

  bool acquired = false, read_refused = false, wrote = false;
  std::optional<std::uint64_t> token;
  Release released = Release::error;

  void run() {
    acquired = lock.try_acquire(1s) == Acquire::acquired;
    if (!acquired) return;
    token = lock.fencing_token();
    const auto use = fenced ? token : std::nullopt;
    auto seen = resource.read(use);
    if (!seen || seen->refused) {
      read_refused = true;
    } else {
      if (pause) pause(kCriticalSection);
      auto written = resource.write(seen->value + 1, use);
      wrote = written && *written;
    }
    released = lock.release();
  }
};

TEST_F(FencedTest, TokensIncreaseAcrossHolders) {
  auto a = make();
  auto b = make();
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(a->fencing_token());

  ASSERT_EQ(a->try_acquire(0ms), Acquire::acquired);
  EXPECT_EQ(a->fencing_token(), 1u);
  EXPECT_EQ(run({"GET", "locklab:test"}).string(), a->token()) << "the lock is generation 4's SET NX PX";
  EXPECT_GT(run({"PTTL", "locklab:test"}).integer(), 9000);
  EXPECT_EQ(run({"PTTL", a->fence_key()}).integer(), -1) << "the fence counter never expires";

  EXPECT_EQ(b->try_acquire(20ms), Acquire::timed_out);
  EXPECT_FALSE(b->fencing_token());
  EXPECT_EQ(run({"GET", a->fence_key()}).string(), "1") << "failed attempts draw no token";

  ASSERT_EQ(a->release(), Release::released);
  EXPECT_FALSE(a->fencing_token());
  ASSERT_EQ(b->try_acquire(0ms), Acquire::acquired);
  EXPECT_EQ(b->fencing_token(), 2u);
  ASSERT_EQ(b->release(), Release::released);
  ASSERT_EQ(a->try_acquire(0ms), Acquire::acquired);
  EXPECT_EQ(a->fencing_token(), 3u);
}

TEST_F(FencedTest, FenceKeySharesTheLockKeysSlot) {
  EXPECT_EQ(FencedLock::fence_key_for("orders"), "{orders}:fence");
  EXPECT_EQ(FencedLock::fence_key_for("{orders}:lock"), "{orders}:lock:fence");
}

TEST_F(FencedTest, ReleaseOutcomes) {
  auto a = make(150ms);
  auto b = make();
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->try_acquire(0ms), Acquire::acquired);
  ASSERT_TRUE(wait_until_expired("locklab:test"));
  EXPECT_EQ(a->release(), Release::already_expired);

  ASSERT_EQ(a->try_acquire(0ms), Acquire::acquired);
  ASSERT_TRUE(wait_until_expired("locklab:test"));
  ASSERT_EQ(b->try_acquire(0ms), Acquire::acquired);
  EXPECT_EQ(a->release(), Release::not_owner);
  EXPECT_EQ(run({"GET", "locklab:test"}).string(), b->token());
}

TEST_F(FencedTest, RegisteredAsGeneration7) {
  const Generation* generation = find_generation("fenced");
  ASSERT_NE(generation, nullptr);
  EXPECT_EQ(generation->number, "7");
  auto lock = make_lock("fenced", config());
  ASSERT_TRUE(lock) << lock.error().message;
  ASSERT_EQ((*lock)->try_acquire(0ms), Acquire::acquired);
  EXPECT_TRUE((*lock)->fencing_token());
  EXPECT_TRUE((*lock)->valid_until());
}

// Server commands per acquire+release (INFO commandstats), for the cost table in docs/generations.md.
TEST_F(FencedTest, ServerCommandsPerAcquireAndRelease) {
  auto lock = make();
  ASSERT_TRUE(lock);
  run({"CONFIG", "RESETSTAT"});
  ASSERT_EQ(lock->try_acquire(0ms), Acquire::acquired);
  ASSERT_EQ(lock->release(), Release::released);
  const std::string info(run({"INFO", "commandstats"}).text());
  for (const char* command : {"evalsha:calls=2", "exists:calls=1", "incr:calls=1", "set:calls=1", "get:calls=1",
                              "del:calls=1"})
    EXPECT_NE(info.find(std::string("cmdstat_") + command + ","), std::string::npos) << command << "\n" << info;
}

// Interleaving 1 (Kleppmann's K1): A reads, pauses past its TTL; B acquires,
// reads, writes, releases; A resumes and writes. Returns {A, B}.
std::pair<Client, Client> stale_write_last(DistributedLock& a_lock, DistributedLock& b_lock,
                                            harness::CounterResource a_res, harness::CounterResource b_res,
                                            bool fenced, const std::function<bool()>& lease_lapsed) {
  StepGate a_paused(kCriticalSection);
  Client a(a_lock, std::move(a_res), fenced, a_paused.hook());
  Client b(b_lock, std::move(b_res), fenced, nullptr);
  std::thread a_thread([&] { a.run(); });
  EXPECT_TRUE(a_paused.wait_arrival());
  EXPECT_TRUE(lease_lapsed());
  b.run();
  a_paused.open();
  a_thread.join();
  return {std::move(a), std::move(b)};
}

// Interleaving 2: as 1, but A's stale write lands between B's read and B's write.
std::pair<Client, Client> stale_write_between(DistributedLock& a_lock, DistributedLock& b_lock,
                                              harness::CounterResource a_res, harness::CounterResource b_res,
                                              bool fenced,
                                              const std::function<bool()>& lease_lapsed) {
  StepGate a_paused(kCriticalSection), b_paused(kCriticalSection);
  Client a(a_lock, std::move(a_res), fenced, a_paused.hook());
  Client b(b_lock, std::move(b_res), fenced, b_paused.hook());
  std::thread a_thread([&] { a.run(); });
  EXPECT_TRUE(a_paused.wait_arrival());
  EXPECT_TRUE(lease_lapsed());
  std::thread b_thread([&] { b.run(); });
  EXPECT_TRUE(b_paused.wait_arrival());  // B has acquired and read
  a_paused.open();
  a_thread.join();  // A's stale write is done (or refused)
  b_paused.open();
  b_thread.join();
  return {std::move(a), std::move(b)};
}

TEST_F(FencedTest, StaleHolderWriteAfterNewHolderLosesAnUpdateWithLuaSafeDelete) {
  auto a_lock = make_lua_safe_delete(200ms);
  auto b_lock = make_lua_safe_delete();
  ASSERT_TRUE(a_lock && b_lock);
  auto [a, b] = stale_write_last(*a_lock, *b_lock, counter(), counter(), false,
                                 [&] { return wait_until_expired("locklab:test"); });
  ASSERT_TRUE(a.acquired && b.acquired);
  EXPECT_FALSE(a.token) << "generation 4 has no fencing token";
  EXPECT_TRUE(a.wrote) << "the plain resource takes the stale write";
  EXPECT_TRUE(b.wrote);
  EXPECT_EQ(*counter().value(), 1) << "two increments reported, one survives: a lost update";
  EXPECT_EQ(a.released, Release::already_expired) << "the lock itself stays safe: A deletes nothing of B's";
}

TEST_F(FencedTest, StaleHolderWriteAfterNewHolderIsRefusedWithFencing) {
  auto a_lock = make(200ms);
  auto b_lock = make();
  ASSERT_TRUE(a_lock && b_lock);
  auto [a, b] = stale_write_last(*a_lock, *b_lock, counter(), counter(), true,
                                 [&] { return wait_until_expired("locklab:test"); });
  ASSERT_TRUE(a.acquired && b.acquired);
  EXPECT_EQ(a.token, 1u);
  EXPECT_EQ(b.token, 2u);
  EXPECT_FALSE(a.wrote) << "token 1 < highest seen 2: refused";
  EXPECT_TRUE(b.wrote);
  EXPECT_EQ(*counter().value(), 1) << "one successful increment, counter 1: exact";
}

TEST_F(FencedTest, StaleHolderWriteBetweenNewHoldersReadAndWriteLosesAnUpdateWithLuaSafeDelete) {
  auto a_lock = make_lua_safe_delete(200ms);
  auto b_lock = make_lua_safe_delete();
  ASSERT_TRUE(a_lock && b_lock);
  auto [a, b] = stale_write_between(*a_lock, *b_lock, counter(), counter(), false,
                                    [&] { return wait_until_expired("locklab:test"); });
  ASSERT_TRUE(a.acquired && b.acquired);
  EXPECT_TRUE(a.wrote);
  EXPECT_TRUE(b.wrote);
  EXPECT_EQ(*counter().value(), 1) << "B overwrote A's increment with one computed from the old value";
  EXPECT_EQ(a.released, Release::not_owner) << "B holds the lock while A releases";
}

// The reason the resource checks reads too: a write-only check would accept
// A's token 1 here (B has not written yet) and then B's write would clobber it.
TEST_F(FencedTest, StaleHolderWriteBetweenNewHoldersReadAndWriteIsRefusedWithFencing) {
  auto a_lock = make(200ms);
  auto b_lock = make();
  ASSERT_TRUE(a_lock && b_lock);
  auto [a, b] = stale_write_between(*a_lock, *b_lock, counter(), counter(), true,
                                    [&] { return wait_until_expired("locklab:test"); });
  ASSERT_TRUE(a.acquired && b.acquired);
  EXPECT_FALSE(a.wrote) << "B's read already raised the highest token to 2";
  EXPECT_TRUE(b.wrote);
  EXPECT_EQ(*counter().value(), 1);
  EXPECT_EQ(run({"GET", "counter:highest-token"}).string(), "2");
}

// --- issue 16 §4: a fenced run is judged at the resource --------------------------
//
// Two fenced holders whose leases overlap, run through the whole harness
// (measure(), thread clients, its own servers), the order of their accesses
// fixed by step hooks that wait for states, not for time. The first client to
// enter is the "older" holder. At its cs-enter it deletes the lock key (what a
// lapsed lease looks like to the next client), so the "newer" one acquires
// while the older is still inside; each then waits at its step points for the
// state the story needs.
class FenceOrder : public harness::Nemesis {
 public:
  enum class Story {
    older_first,   // older reads and writes, then newer: accepted in token order
    newer_first,   // newer reads and writes, then older: older refused
    interleaved,   // the fence counter is lost too (equal tokens); older reads, newer reads, older writes, newer writes
  };
  explicit FenceOrder(Story story) : story_(story) {}

  std::string name() const override { return "fence-order"; }
  void before_run(harness::NemesisContext& context) override {
    endpoint_ = context.endpoints.at(0);
    key_ = context.key;
  }
  StepHook client_step_hook(int client) override {
    return [this, client](std::string_view point) { at(client, point); };
  }
  bool failed() const { return failed_.load(); }

 private:
  static constexpr int kNone = -1;
  void at(int client, std::string_view point) {
    if (point == harness::kCsEnter) {
      int none = kNone;
      if (older_.compare_exchange_strong(none, client)) return older_entered();
      if (client != older_.load() && !newer_arrived_.exchange(true)) return newer_entered();
      return;
    }
    const bool older = client == older_.load();
    if (point == harness::kCsRead) (older ? older_read_ : newer_read_).store(true);
    if (point == harness::kCsRead && story_ == Story::interleaved) {
      if (older) wait_for(newer_read_);   // the newer holder reads before the older writes
      else wait_for(older_done_);         // ... and writes after it
    }
    if (point == harness::kCsExit) (older ? older_done_ : newer_done_).store(true);
  }

  void older_entered() {
    // The lease is gone (a lapse, or a failover that lost the key); in the
    // interleaved story the failover lost the last INCR too.
    redis::Args del = {"DEL", key_};
    if (story_ == Story::interleaved) del.push_back(FencedLock::fence_key_for(key_));
    auto connection = redis::Connection::connect(endpoint_);
    if (!connection || !connection->command(del)) failed_ = true;
    wait_for(newer_arrived_);  // both hold a lease now
    if (story_ == Story::newer_first) wait_for(newer_done_);
  }
  void newer_entered() {
    if (story_ == Story::older_first) wait_for(older_done_);
    if (story_ == Story::interleaved) wait_for(older_read_);
  }
  void wait_for(const std::atomic<bool>& flag) {
    if (!harness::wait_until([&] { return flag.load(); }, 10s)) failed_ = true;
  }

  const Story story_;
  redis::ConnectionOptions endpoint_;
  std::string key_;
  std::atomic<int> older_{kNone};
  std::atomic<bool> newer_arrived_{false}, older_read_{false}, newer_read_{false};
  std::atomic<bool> older_done_{false}, newer_done_{false}, failed_{false};
};

nlohmann::json fenced_pair_run(FenceOrder& story) {
  harness::RunOptions options;
  options.lock = "fenced";
  options.clients = 2;
  options.ops = 2;  // one acquisition each: the older holder is inside until the newer one is in
  options.mode = harness::ClientMode::thread;
  options.ttl_ms = 10'000;  // the lease lapses by the story's DEL, not by time
  options.wait_ms = 10'000;
  options.hold_ms = 0;
  auto document = harness::measure(options, &story);
  EXPECT_TRUE(document) << document.error().message;
  EXPECT_FALSE(story.failed()) << "a step of the story did not happen";
  return document ? *document : nlohmann::json::object();
}

TEST(FencedRun, OverlappingLeasesAcceptedInTokenOrderAreSerializedAndSafe) {
  FenceOrder story(FenceOrder::Story::older_first);
  const auto r = fenced_pair_run(story);
  ASSERT_TRUE(r.is_object() && r.contains("safety"));
  EXPECT_EQ(r["verdict"], "safe") << r["verdict_reasons"];
  EXPECT_GE(r["safety"]["overlaps_serialized_by_fence"].get<int>(), 1);
  EXPECT_EQ(r["safety"]["overlaps"], 0);
  EXPECT_EQ(r["safety"]["overlaps_fenced_off"], 0);
  EXPECT_EQ(r["safety"]["stale_writes_rejected"], 0) << "both holders were accepted";
  EXPECT_EQ(r["safety"]["live_max_holders"], 2) << "the leases did overlap";
  EXPECT_EQ(r["counter"]["expected"], 2);
  EXPECT_EQ(r["counter"]["actual"], 2);
  EXPECT_TRUE(r["timeline"]["overlaps"].empty()) << "nothing violating to mark";
}

TEST(FencedRun, NewerHolderFirstFencesTheOlderOffAndIsSafe) {
  FenceOrder story(FenceOrder::Story::newer_first);
  const auto r = fenced_pair_run(story);
  ASSERT_TRUE(r.is_object() && r.contains("safety"));
  EXPECT_EQ(r["verdict"], "safe") << r["verdict_reasons"];
  EXPECT_EQ(r["safety"]["overlaps_fenced_off"], 1);
  EXPECT_EQ(r["safety"]["overlaps_serialized_by_fence"], 0);
  EXPECT_EQ(r["safety"]["stale_writes_rejected"], 1);
  EXPECT_EQ(r["counter"]["actual"], 1);
}

TEST(FencedRun, AcceptedAccessesThatInterleaveAreAViolation) {
  FenceOrder story(FenceOrder::Story::interleaved);
  const auto r = fenced_pair_run(story);
  ASSERT_TRUE(r.is_object() && r.contains("safety"));
  EXPECT_EQ(r["verdict"], "violation") << r["verdict_reasons"];
  EXPECT_EQ(r["safety"]["overlaps"], 1);
  EXPECT_EQ(r["safety"]["overlaps_serialized_by_fence"], 0);
  EXPECT_EQ(r["safety"]["stale_writes_rejected"], 0) << "equal tokens: the resource accepted both";
  EXPECT_EQ(r["safety"]["lost_updates"], 1);
  EXPECT_EQ(r["safety"]["max_concurrent_holders"], 2);
  EXPECT_FALSE(r["timeline"]["overlaps"].empty());
}

}  // namespace
}  // namespace locklab::testing
