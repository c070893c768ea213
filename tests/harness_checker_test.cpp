// The checker and metrics on synthetic histories: every number the verdict
// rests on, computed by hand here.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>

#include <gtest/gtest.h>

#include "lock.h"

#include "history/checker.h"
#include "history/metrics.h"
#include "nemesis/nemesis.h"
#include "nemesis/step_actions.h"
#include "run/run.h"
#include "servers/redis_server.h"

namespace locklab::harness {
namespace {

CsRecord section(std::uint32_t client, std::int64_t enter, std::int64_t exit,
                 Release release = Release::released) {
  CsRecord record;
  record.client = client;
  record.want_ns = enter;
  record.invoke_ns = enter;
  record.enter_ns = enter;
  record.exit_ns = exit;
  record.released_ns = exit;
  record.release = static_cast<std::uint8_t>(release);
  return record;
}

TEST(Checker, DisjointAndTouchingSectionsDoNotOverlap) {
  const auto summary = find_overlaps({section(0, 0, 10), section(1, 10, 20), section(2, 25, 30)});
  EXPECT_EQ(summary.pairs, 0);
  EXPECT_EQ(summary.max_concurrent, 1);
  EXPECT_EQ(summary.overlap_ns, 0);
  EXPECT_EQ(summary.first_overlap_ns, -1);
}

TEST(Checker, CountsPairsDepthAndOverlapTime) {
  // A [0,100) contains B [10,20) and C [15,50): pairs A-B, A-C, B-C; depth 3 in [15,20).
  const std::vector<CsRecord> history = {section(0, 0, 100), section(1, 10, 20), section(2, 15, 50),
                                         section(1, 200, 210)};
  const auto summary = find_overlaps(history);
  EXPECT_EQ(summary.pairs, 3);
  EXPECT_EQ(summary.max_concurrent, 3);
  EXPECT_EQ(summary.overlap_ns, 40) << "two or more inside from 10 to 50";
  EXPECT_EQ(summary.first_overlap_ns, 10);
  const auto spans = overlap_spans(history);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].from_ns, 10);
  EXPECT_EQ(spans[0].to_ns, 50);
}

TEST(Checker, WrongOwnerReleaseNeedsAnotherClientInsideBeforeTheRelease) {
  // X released while Y had entered during X's section: X's key had gone, X deleted Y's.
  EXPECT_EQ(count_wrong_owner_releases({section(0, 0, 100), section(1, 50, 150)}), 1);
  // Same overlap, but X's release said not_owner (compare-and-delete): no wrong release.
  EXPECT_EQ(count_wrong_owner_releases({section(0, 0, 100, Release::not_owner), section(1, 50, 150)}), 0);
  // Y entered after X invoked release: an ordinary handoff.
  EXPECT_EQ(count_wrong_owner_releases({section(0, 0, 100), section(1, 120, 150)}), 0);
  // Each release counts once, however many entered during it.
  EXPECT_EQ(count_wrong_owner_releases({section(0, 0, 100), section(1, 20, 30), section(2, 25, 60)}), 2)
      << "X's release and Y's (Z entered during Y's section) are both wrong";
}

TEST(Checker, StallIsALongStretchWithNobodyInsideWhileClientsWait) {
  const std::vector<ClientSpan> running = {{0, 5000}, {0, 5000}};
  // Gap 10 -> 2000 (1990 ns) and trailing gap 2010 -> 5000 (2990 ns); threshold 1000.
  const auto stalls = find_stalls({section(0, 0, 10), section(1, 2000, 2010)}, running, 0, 1000);
  ASSERT_EQ(stalls.size(), 2u);
  EXPECT_EQ(stalls[0].from_ns, 10);
  EXPECT_EQ(stalls[0].to_ns, 2000);
  EXPECT_EQ(stalls[1].from_ns, 2010);
  EXPECT_EQ(stalls[1].to_ns, 5000);
  // A long hold is not a stall: somebody is inside.
  EXPECT_TRUE(find_stalls({section(0, 0, 4990)}, running, 0, 1000).empty());
  // Clients that finished are not waiting: no trailing stall after the last finish.
  EXPECT_TRUE(find_stalls({section(0, 0, 10)}, {{0, 500}}, 0, 1000).empty());
}

TEST(Checker, LostUpdatesAreConfirmedIncrementsMinusCounterGrowth) {
  EXPECT_EQ(lost_updates(10, 7), 3);
  EXPECT_EQ(lost_updates(10, 10), 0);
  EXPECT_EQ(lost_updates(5, 6), 0) << "an unconfirmed write that landed is not a negative loss";
}

TEST(Checker, VerdictRules) {
  Safety safe;
  EXPECT_EQ(judge(safe).verdict, "safe");
  EXPECT_TRUE(judge(safe).reasons.empty());

  Safety lost = safe;
  lost.lost_updates = 2;
  EXPECT_EQ(judge(lost).verdict, "violation");
  Safety wrong = safe;
  wrong.wrong_owner_releases = 1;
  EXPECT_EQ(judge(wrong).verdict, "violation");

  Safety stalled = safe;
  stalled.stalls = {{0, 5'000'000'000}};
  EXPECT_EQ(judge(stalled).verdict, "safe") << "a stall while keys expire is liveness, not deadlock";
  EXPECT_EQ(judge(stalled).reasons.size(), 1u);
  stalled.keys_left = {1, 1};
  EXPECT_EQ(judge(stalled).verdict, "deadlock");
  stalled.overlaps.pairs = 1;
  EXPECT_EQ(judge(stalled).verdict, "violation") << "a violation outranks the deadlock; both reasons kept";
  EXPECT_EQ(judge(stalled).reasons.size(), 2u);
}

// simple-redis-mutex and redis-semaphore say `released` whatever their
// compare-and-delete did: after Y entered, X's `released` deleted nothing of
// Y's. The pattern is counted apart (released_after_loss), not as 误删.
TEST(Checker, AnOwnerCheckedReleaseAfterTheKeyVanishedIsNotAWrongOwnerRelease) {
  SafetyInput input;
  input.records = {section(0, 0, 100), section(1, 50, 150)};
  input.clients = {{0, 150}, {0, 150}};
  input.stall_threshold_ns = 1'000'000;
  input.confirmed_increments = input.counter_growth = 2;
  input.owner_checked_release = true;
  const Safety checked = check_safety(input);
  EXPECT_EQ(checked.wrong_owner_releases, 0);
  EXPECT_EQ(checked.released_after_loss, 1);
  EXPECT_EQ(judge(checked).verdict, "violation") << "the overlap still counts";
  EXPECT_EQ(judge(checked).reasons.size(), 1u) << "but no 'deleted another client's lock'";
  input.owner_checked_release = false;
  EXPECT_EQ(check_safety(input).wrong_owner_releases, 1);
  EXPECT_EQ(check_safety(input).released_after_loss, 0);
}

// The run's witness saw the lease end under a holder nobody followed, and the
// owner-checked release still said `released`: a hidden loss, and the run is
// safe only by luck.
TEST(Checker, AReleasedForALeaseTheWitnessSawLostIsReleasedAfterLoss) {
  SafetyInput input;
  input.records = {section(0, 0, 100)};
  input.records[0].lease_lost = 1;
  input.clients = {{0, 150}};
  input.stall_threshold_ns = 1'000'000;
  input.confirmed_increments = input.counter_growth = 1;
  input.owner_checked_release = true;
  const Safety checked = check_safety(input);
  EXPECT_EQ(checked.released_after_loss, 1);
  EXPECT_EQ(checked.leases_lost.inside, 1);
  EXPECT_EQ(checked.leases_lost.nobody_entered, 1);
  EXPECT_EQ(judge(checked).verdict, "safe");
  EXPECT_TRUE(judge(checked).exposed);
  input.records[0].lease_lost = 0;
  EXPECT_EQ(check_safety(input).released_after_loss, 0) << "a kept lease, a true released";
}

TEST(Checker, CheckSafetyIgnoresWrongOwnerForLocksWithoutKeys) {
  SafetyInput input;
  input.records = {section(0, 0, 100), section(1, 50, 150)};
  input.clients = {{0, 150}, {0, 150}};
  input.stall_threshold_ns = 1'000'000;
  input.confirmed_increments = 2;
  input.counter_growth = 1;
  input.lock_has_keys = false;
  const Safety safety = check_safety(input);
  EXPECT_EQ(safety.overlaps.pairs, 1);
  EXPECT_EQ(safety.lost_updates, 1);
  EXPECT_EQ(safety.wrong_owner_releases, 0) << "no-lock deletes nothing";
  input.lock_has_keys = true;
  EXPECT_EQ(check_safety(input).wrong_owner_releases, 1);
}

TEST(Checker, SectionsRefusedByTheFencedResourceAreNotViolations) {
  SafetyInput input;
  auto stale = section(0, 0, 100, Release::not_owner);  // compare-and-delete found the next holder's key
  stale.write = CsWrite::refused;  // its token was older than the next holder's
  input.records = {stale, section(1, 50, 150)};
  input.clients = {{0, 150}, {0, 150}};
  input.stall_threshold_ns = 1'000'000;
  input.confirmed_increments = 1;
  input.counter_growth = 1;
  input.stale_writes_rejected = 1;
  const Safety safety = check_safety(input);
  EXPECT_EQ(safety.overlaps.pairs, 0);
  EXPECT_EQ(safety.overlaps_fenced_off, 1);
  const Verdict verdict = judge(safety);
  EXPECT_EQ(verdict.verdict, "safe");
  ASSERT_EQ(verdict.reasons.size(), 1u);
  EXPECT_NE(verdict.reasons[0].find("refused"), std::string::npos);

  // The live counter saw both (it cannot tell a refused holder): the fenced-off
  // pair accounts for a depth of 2, and is reported as 1 effective holder.
  input.live_max_occupancy = 2;
  EXPECT_EQ(judge(check_safety(input)).verdict, "safe");
  EXPECT_EQ(check_safety(input).overlaps.max_concurrent, 1);
  EXPECT_EQ(check_safety(input).live_max_holders, 2) << "reported on its own";
  // A third live holder no recorded section accounts for is a violation.
  input.live_max_occupancy = 3;
  EXPECT_EQ(judge(check_safety(input)).verdict, "violation");
}

// The safety net under the records: a holder the live occupancy counter saw is
// a holder, even when no recorded section shows it (a record went missing).
TEST(Checker, TwoLiveHoldersAreAViolationEvenWithoutARecordedOverlap) {
  SafetyInput input;
  input.records = {section(1, 50, 150)};
  input.clients = {{0, 150}, {0, 150}};
  input.stall_threshold_ns = 1'000'000;
  input.confirmed_increments = 1;
  input.counter_growth = 1;
  input.live_max_occupancy = 2;
  const Safety safety = check_safety(input);
  EXPECT_EQ(safety.overlaps.pairs, 0);
  EXPECT_EQ(safety.overlaps.max_concurrent, 1) << "the recorded depth is not overwritten by the live one";
  EXPECT_EQ(safety.live_max_holders, 2);
  const Verdict verdict = judge(safety);
  EXPECT_EQ(verdict.verdict, "violation") << "never only a statistic";
  ASSERT_EQ(verdict.reasons.size(), 1u);
  EXPECT_NE(verdict.reasons[0].find("live occupancy counter saw 2 holders"), std::string::npos) << verdict.reasons[0];
  input.live_max_occupancy = 1;
  EXPECT_EQ(judge(check_safety(input)).verdict, "safe");
}

// A counter that grew by more than every recorded write could have made had a
// writer the history lacks: its lost update may hide behind its own increment.
TEST(Checker, CounterGrowthNoRecordedWriteExplainsIsAViolation) {
  SafetyInput input;
  input.records = {section(0, 0, 10), section(1, 20, 30)};
  input.clients = {{0, 30}, {0, 30}};
  input.stall_threshold_ns = 1'000'000;
  input.confirmed_increments = 2;
  input.counter_growth = 3;
  Safety safety = check_safety(input);
  EXPECT_EQ(safety.lost_updates, 0);
  EXPECT_EQ(safety.unclaimed_increments, 1);
  EXPECT_EQ(judge(safety).verdict, "violation");

  // The same growth is exact when one more write's outcome is unknown (it may have landed).
  input.records.push_back(section(0, 40, 50));
  input.records.back().write = CsWrite::pending;
  safety = check_safety(input);
  EXPECT_EQ(safety.unconfirmed_writes, 1);
  EXPECT_EQ(safety.unclaimed_increments, 0);
  EXPECT_EQ(judge(safety).verdict, "safe");
}

// --- fenced runs are judged at the resource (classify_overlap) ---------------------

ResourceAccess access(std::uint64_t token, std::int64_t read, std::int64_t written, bool refused = false) {
  ResourceAccess a;
  a.has_token = true;
  a.token = token;
  a.read_start = read;
  a.write_end = written;
  a.refused = refused;
  return a;
}

TEST(ClassifyOverlap, EveryBranchOfTheRule) {
  const auto open = ResourceAccess::kOpenEnded;
  // One refused: it changed nothing, whatever the order.
  EXPECT_EQ(classify_overlap(access(1, 0, 10, true), access(2, 5, 15)), OverlapKind::fenced_off);
  EXPECT_EQ(classify_overlap(access(2, 0, 10), access(1, 5, 15, true)), OverlapKind::fenced_off);
  // Apart and in rising token order: serialized, in either argument order; touching windows are apart.
  EXPECT_EQ(classify_overlap(access(1, 0, 10), access(2, 20, 30)), OverlapKind::serialized_by_fence);
  EXPECT_EQ(classify_overlap(access(2, 20, 30), access(1, 0, 10)), OverlapKind::serialized_by_fence);
  EXPECT_EQ(classify_overlap(access(1, 0, 10), access(2, 10, 30)), OverlapKind::serialized_by_fence);
  // Apart, but the later access has the lower token: accepted out of order.
  EXPECT_EQ(classify_overlap(access(2, 0, 10), access(1, 20, 30)), OverlapKind::violation);
  // Equal tokens are never told apart, even when apart.
  EXPECT_EQ(classify_overlap(access(1, 0, 10), access(1, 20, 30)), OverlapKind::violation);
  // Interleaved windows, rising tokens, both accepted.
  EXPECT_EQ(classify_overlap(access(1, 0, 20), access(2, 10, 30)), OverlapKind::violation);
  // A write that never completed keeps its window open.
  EXPECT_EQ(classify_overlap(access(1, 0, open), access(2, 20, 30)), OverlapKind::violation);
  // No token: the resource could not tell them apart.
  ResourceAccess plain = access(0, 0, 10);
  plain.has_token = false;
  EXPECT_EQ(classify_overlap(plain, access(2, 20, 30)), OverlapKind::violation);
  EXPECT_EQ(classify_overlap(access(2, 20, 30), plain), OverlapKind::violation);
}

CsRecord fenced(std::uint32_t client, std::int64_t enter, std::int64_t exit, std::uint64_t token, std::int64_t read,
                std::int64_t written) {
  CsRecord record = section(client, enter, exit, Release::not_owner);
  record.has_token = 1;
  record.token = token;
  record.read_ns = read;
  record.written_ns = written;
  return record;
}

TEST(ClassifyOverlap, RecordsMapToTheirAccessesInOneFunction) {
  CsRecord written = fenced(0, 5, 50, 7, 10, 20);
  const ResourceAccess a = resource_access(written);
  EXPECT_TRUE(a.has_token);
  EXPECT_EQ(a.token, 7u);
  EXPECT_EQ(a.read_start, 10);
  EXPECT_EQ(a.write_end, 20);
  EXPECT_FALSE(a.refused);
  CsRecord unstamped = section(0, 5, 50);  // no read stamp: from its enter; no write end: open
  EXPECT_EQ(resource_access(unstamped).read_start, 5);
  EXPECT_EQ(resource_access(unstamped).write_end, ResourceAccess::kOpenEnded);
  for (CsWrite unfinished : {CsWrite::failed, CsWrite::pending, CsWrite::none, CsWrite::read_failed}) {
    written.write = unfinished;
    EXPECT_EQ(resource_access(written).write_end, ResourceAccess::kOpenEnded) << static_cast<int>(unfinished);
  }
  written.write = CsWrite::refused;
  EXPECT_TRUE(resource_access(written).refused);
}

SafetyInput fenced_input(std::vector<CsRecord> records) {
  SafetyInput input;
  input.records = std::move(records);
  input.clients = {{0, 400}, {0, 400}, {0, 400}};
  input.stall_threshold_ns = 1'000'000;
  input.confirmed_increments = static_cast<std::int64_t>(input.records.size());
  input.counter_growth = input.confirmed_increments;
  return input;
}

// Issue 16 §4: the lease intervals overlap, but the resource took A's
// read-modify-write, then B's, in token order. Nothing could interleave.
TEST(Checker, FencedPairAcceptedInTokenOrderWithoutInterleavingIsSerializedNotAViolation) {
  SafetyInput input = fenced_input({fenced(0, 0, 100, 1, 60, 70), fenced(1, 50, 150, 2, 80, 90)});
  Safety safety = check_safety(input);
  EXPECT_EQ(safety.overlaps.pairs, 0);
  EXPECT_EQ(safety.overlaps_serialized_by_fence, 1);
  EXPECT_EQ(safety.overlaps_fenced_off, 0);
  EXPECT_EQ(safety.overlaps.max_concurrent, 1) << "one holder of the resource at a time";
  EXPECT_EQ(safety.overlaps.overlap_ns, 0);
  EXPECT_TRUE(violating_sections(input.records).empty()) << "the timeline marks nothing";
  Verdict verdict = judge(safety);
  EXPECT_EQ(verdict.verdict, "safe");
  ASSERT_EQ(verdict.reasons.size(), 1u);
  EXPECT_NE(verdict.reasons[0].find("serialized by the fence"), std::string::npos) << verdict.reasons[0];
  // The live counter saw both: the serialized pair accounts for a depth of 2, not of 3.
  input.live_max_occupancy = 2;
  EXPECT_EQ(judge(check_safety(input)).verdict, "safe");
  input.live_max_occupancy = 3;
  EXPECT_EQ(judge(check_safety(input)).verdict, "violation");
}

TEST(Checker, FencedPairWhoseAcceptedAccessesInterleaveIsAViolation) {
  // B read at 65, before A's write came back at 70: both accepted, interleaved.
  SafetyInput input = fenced_input({fenced(0, 0, 100, 1, 60, 70), fenced(1, 50, 150, 2, 65, 90)});
  input.live_max_occupancy = 2;
  const Safety safety = check_safety(input);
  EXPECT_EQ(safety.overlaps.pairs, 1);
  EXPECT_EQ(safety.overlaps_serialized_by_fence, 0);
  EXPECT_EQ(safety.overlaps.max_concurrent, 2);
  EXPECT_EQ(safety.overlaps.overlap_ns, 50);
  EXPECT_EQ(safety.overlaps.first_overlap_ns, 50);
  EXPECT_FALSE(safety.live_holders_fenced_off);
  EXPECT_EQ(judge(safety).verdict, "violation");
  // Apart, but with one token (a failover lost the INCR): the order was luck.
  const Safety equal = check_safety(fenced_input({fenced(0, 0, 100, 1, 60, 70), fenced(1, 50, 150, 1, 80, 90)}));
  EXPECT_EQ(equal.overlaps.pairs, 1);
  EXPECT_EQ(judge(equal).verdict, "violation");
}

// Only the violating pairs count and are drawn; one violating pair takes the
// live counter's excuse away from the whole run.
TEST(Checker, MixedPairsCountApartAndOnlyTheViolatingSectionsMakeTheDepth) {
  // A-B serialized (B's token later, B after A); C interleaves with B only (C reads at 85, B writes at 90).
  auto c = fenced(2, 80, 200, 3, 85, 190);
  SafetyInput input = fenced_input({fenced(0, 0, 100, 1, 60, 70), fenced(1, 50, 150, 2, 80, 90), c});
  input.live_max_occupancy = 3;
  const Safety safety = check_safety(input);
  EXPECT_EQ(safety.overlaps.pairs, 1) << "B-C";
  EXPECT_EQ(safety.overlaps_serialized_by_fence, 2) << "A-B, and A-C (A's write at 70 before C's read at 85)";
  EXPECT_EQ(safety.overlaps.max_concurrent, 2) << "over B and C";
  EXPECT_EQ(safety.overlaps.overlap_ns, 70) << "B and C both inside from 80 to 150";
  EXPECT_FALSE(safety.live_holders_fenced_off);
  const auto drawn = violating_sections(input.records);
  ASSERT_EQ(drawn.size(), 2u);
  EXPECT_EQ(drawn[0].client, 1u);
  EXPECT_EQ(drawn[1].client, 2u);
  EXPECT_EQ(judge(safety).verdict, "violation");
}

// Issue 16 §7a: a failed read sent no SET; only writes that were sent may have landed.
TEST(Checker, UnconfirmedWritesCountOnlyWritesThatWereSent) {
  std::vector<CsRecord> records(4, section(0, 0, 10));
  records[0].write = CsWrite::read_failed;
  records[1].write = CsWrite::failed;
  records[2].write = CsWrite::pending;
  records[3].write = CsWrite::written;
  EXPECT_EQ(unconfirmed_writes(records), 2);
}

// The same through the workload: the counter holds a non-number when the
// section reads it, so the read fails and no SET is sent. (Before issue 16
// §7a the section was recorded `failed` and counted as a write that may have
// landed.)
class UnreadableCounterOnce : public Nemesis {
 public:
  void before_run(NemesisContext& context) override { counter_ = context.counter_server; }
  StepHook client_step_hook(int) override {
    return [this](std::string_view point) {
      if (point == kCsEnter) set("not-a-number");
      if (point == kCsExit) set("0");  // readable again for the final count
    };
  }
  bool failed() const { return failed_.load(); }

 private:
  void set(const std::string& value) {
    auto connection = counter_ ? redis::Connection::connect(counter_->connection_options())
                               : Result<redis::Connection>(Error{ErrorKind::io, "no counter server"});
    if (!connection || !connection->command({"SET", "locklab:counter", value})) failed_ = true;
  }
  RedisServer* counter_ = nullptr;
  std::atomic<bool> failed_{false};
};

TEST(Checker, AFailedCounterReadIsNotAnUnconfirmedWrite) {
  RunOptions options;
  options.lock = "lua-safe-delete";
  options.clients = 1;
  options.ops = 1;
  options.mode = ClientMode::thread;
  UnreadableCounterOnce nemesis;
  auto document = measure(options, &nemesis);
  ASSERT_TRUE(document) << document.error().message;
  ASSERT_FALSE(nemesis.failed());
  const auto& r = *document;
  EXPECT_EQ(r["totals"]["counter_errors"], 1) << "the read failed";
  EXPECT_EQ(r["counter"]["unconfirmed_writes"], 0) << "no SET was sent: nothing may have landed";
  EXPECT_EQ(r["counter"]["expected"], 0);
  EXPECT_EQ(r["counter"]["actual"], 0);
}

// --- exposed: a lease lost under a holder, nobody entered -------------------------

CsRecord lost_lease(std::uint32_t client, std::int64_t enter, std::int64_t exit, std::int64_t released) {
  CsRecord record = section(client, enter, exit, Release::already_expired);
  record.released_ns = released;
  record.lease_lost = 1;
  return record;
}

TEST(Checker, LeaseLostUnderAHolderNobodyEnteredIsSafeButExposed) {
  SafetyInput input = fenced_input({lost_lease(0, 0, 100, 110), section(1, 200, 300)});
  const Safety safety = check_safety(input);
  EXPECT_EQ(safety.leases_lost.inside, 1);
  EXPECT_EQ(safety.leases_lost.nobody_entered, 1);
  EXPECT_TRUE(safety.exposed);
  const Verdict verdict = judge(safety);
  EXPECT_EQ(verdict.verdict, "safe");
  EXPECT_TRUE(verdict.exposed);
  ASSERT_EQ(verdict.reasons.size(), 1u);
  EXPECT_EQ(verdict.reasons[0], "lease lost under a holder; nobody entered: safe by luck, not by design");
}

TEST(Checker, LeaseLostThatSomeoneEnteredOrThatTheFenceCoversIsNotExposed) {
  // Another client entered while the holder was releasing (the release race): the lapse was put to the test.
  Safety entered = check_safety(fenced_input({lost_lease(0, 0, 100, 150), section(1, 120, 300)}));
  EXPECT_EQ(entered.leases_lost.inside, 1);
  EXPECT_EQ(entered.leases_lost.nobody_entered, 0);
  EXPECT_FALSE(judge(entered).exposed);
  // A fenced section: its lost lease is the resource's to judge.
  CsRecord with_token = lost_lease(0, 0, 100, 110);
  with_token.has_token = 1;
  with_token.token = 1;
  EXPECT_EQ(check_safety(fenced_input({with_token})).leases_lost.inside, 0);
  // ... and the next token drawn was larger, or lower (an empty restart): the resource refuses the stale one.
  for (const std::uint64_t next : {2u, 0u}) {
    CsRecord later = section(0, 200, 300);
    later.has_token = 1;
    later.token = next;
    EXPECT_EQ(check_safety(fenced_input({with_token, later})).leases_lost.inside, 0) << next;
  }
  // Not lost: nothing to report.
  EXPECT_FALSE(check_safety(fenced_input({section(0, 0, 100)})).exposed);
  // A run that is not safe is not "exposed": its verdict says more.
  SafetyInput lost = fenced_input({lost_lease(0, 0, 100, 110)});
  lost.counter_growth = 0;
  const Verdict violation = judge(check_safety(lost));
  EXPECT_EQ(violation.verdict, "violation");
  EXPECT_FALSE(violation.exposed);
  Safety deadlocked = check_safety(fenced_input({lost_lease(0, 0, 100, 110)}));
  deadlocked.stalls = {{0, 5'000'000'000}};
  deadlocked.keys_left = {1, 1};
  EXPECT_EQ(judge(deadlocked).verdict, "deadlock");
  EXPECT_FALSE(judge(deadlocked).exposed);
}

// ext:redisson-fenced x failover (issue 27): the failover lost the hash and the
// token counter's INCR under the holder, so the next token drawn is the holder's
// own again: a waiter entering meanwhile would have held that token beside it,
// which the resource cannot tell apart. Nobody did (the waiters blocked): safe
// by luck, exposed -- the fence covers nothing here.
TEST(Checker, FencedLeaseLostWhoseTokenIsDrawnAgainIsExposed) {
  CsRecord lost = lost_lease(2, 0, 1100, 1110);
  lost.has_token = 1;
  lost.token = 3;
  CsRecord again = section(2, 1150, 1250);
  again.has_token = 1;
  again.token = 3;
  const Safety safety = check_safety(fenced_input({lost, again}));
  EXPECT_EQ(safety.leases_lost.inside, 1);
  EXPECT_EQ(safety.leases_lost.nobody_entered, 1);
  EXPECT_TRUE(judge(safety).exposed);
}

TEST(Metrics, NearestRankPercentiles) {
  std::vector<std::int64_t> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(i);
  EXPECT_EQ(percentile(samples, 50), 50);
  EXPECT_EQ(percentile(samples, 90), 90);
  EXPECT_EQ(percentile(samples, 99), 99);
  EXPECT_EQ(percentile(samples, 100), 100);
  EXPECT_EQ(percentile({7}, 99), 7);
  EXPECT_EQ(percentile({}, 50), 0);
  const auto q = quantiles({3, 1, 2});
  EXPECT_EQ(q.p50, 2);
  EXPECT_EQ(q.max, 3);
  EXPECT_EQ(q.count, 3);
}

TEST(Metrics, JainIndex) {
  EXPECT_DOUBLE_EQ(jain_index({5, 5, 5, 5}), 1.0);
  EXPECT_DOUBLE_EQ(jain_index({10, 0, 0, 0}), 0.25) << "one of four got everything: 1/n";
  EXPECT_DOUBLE_EQ(jain_index({1, 3}), 16.0 / (2 * 10));
  EXPECT_DOUBLE_EQ(jain_index({}), 1.0);
  EXPECT_DOUBLE_EQ(jain_index({0, 0}), 1.0);
}

TEST(Metrics, HandoffIsExitToNextEnterByAnotherClient) {
  const auto samples = handoff_samples_ns({section(0, 0, 10), section(1, 15, 20), section(1, 22, 30),
                                           section(0, 40, 50), section(1, 45, 60)});
  // 10->15 (client 0 -> 1): 5; 20->22 same client: skipped; 30->40 (1 -> 0): 10; 45 overlaps: skipped.
  EXPECT_EQ(samples, (std::vector<std::int64_t>{5, 10}));
}

TEST(Metrics, ComputeMetricsFromAHistory) {
  MetricsInput input;
  auto a = section(0, 1'000'000, 2'000'000);
  a.want_ns = 0;  // waited 1 ms in total
  a.invoke_ns = 500'000;
  input.records = {a, section(1, 3'000'000, 4'000'000)};
  input.per_client_acquired = {1, 1};
  input.open_waits_ns = {7'000'000};
  input.acquired = 2;
  input.elapsed_ns = 1'000'000'000;
  const Metrics metrics = compute_metrics(input);
  EXPECT_DOUBLE_EQ(metrics.acquisitions_per_s, 2.0);
  EXPECT_EQ(metrics.acquire_us.max, 500);
  EXPECT_EQ(metrics.wait_us.max, 1000);
  EXPECT_EQ(metrics.max_wait_us, 7000) << "a wait still open at the end counts";
  EXPECT_EQ(metrics.handoff_us.p50, 1000);
  EXPECT_DOUBLE_EQ(metrics.jain, 1.0);
}

TEST(SharedHistoryTest, ChildProcessesWriteWhatTheParentReads) {
  std::string why;
  auto history = SharedHistory::create(2, 4, &why);
  ASSERT_TRUE(history) << why;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    history->enter(1);
    history->append(1, section(1, 5, 6));
    history->slot(1).acquired.fetch_add(1);
    history->exit(1);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  history->append(0, section(0, 1, 2));
  const auto records = history->records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].client, 0u) << "sorted by enter time";
  EXPECT_EQ(records[1].client, 1u);
  EXPECT_EQ(history->slot(1).acquired.load(), 1);
  EXPECT_EQ(history->header().max_occupancy.load(), 1);
  EXPECT_EQ(history->header().occupancy.load(), 0);
}

// A client process enters its section and dies there, never closing its
// record. The record stays, and ends when the coordinator saw the client die:
// the other client's section, entered before that, overlaps it.
TEST(SharedHistoryTest, AnOpenSectionOfADeadClientLastsUntilItsDeathAndOverlaps) {
  auto history = SharedHistory::create(2, 4, nullptr);
  ASSERT_TRUE(history);
  const std::int64_t entered = monotonic_ns();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    CsRecord open = section(0, entered, 0);
    open.stage = CsStage::inside;
    open.write = CsWrite::written;  // its SET landed just before it died (locklab:cs-exit)
    open.release = kNoReleaseOutcome;
    if (history->append(0, open) == nullptr) ::_exit(1);
    history->enter(0);
    ::_exit(kCrashExitCode);  // dies inside: no exit, no release
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == kCrashExitCode);

  // Client 1 gets in (the dead client's lease lapsed) before the coordinator notices the death.
  const std::int64_t second = monotonic_ns();
  ASSERT_NE(history->append(1, section(1, second, second + 1'000'000)), nullptr);
  history->enter(1);
  history->forget_dead(0);
  history->exit(1);

  const auto records = history->records();
  ASSERT_EQ(records.size(), 2u) << "the dead client's section is on record";
  EXPECT_EQ(records[0].client, 0u);
  EXPECT_EQ(records[0].stage, CsStage::inside);
  EXPECT_EQ(records[0].exit_ns, history->slot(0).died_ns.load()) << "ends when the coordinator saw it die";
  EXPECT_GT(records[0].exit_ns, second);
  EXPECT_EQ(history->header().max_occupancy.load(), 2);
  EXPECT_EQ(history->header().occupancy.load(), 0) << "a dead client holds nothing";

  SafetyInput input;
  input.records = records;
  input.clients = {{entered, records[0].exit_ns}, {entered, second + 1'000'000}};
  input.run_start_ns = entered;
  input.stall_threshold_ns = 1'000'000'000;
  input.confirmed_increments = 2;
  input.counter_growth = 1;  // both read the same value: the dead client's increment was lost
  const Safety safety = check_safety(input);
  EXPECT_EQ(safety.overlaps.pairs, 1);
  EXPECT_EQ(safety.lost_updates, 1);
  EXPECT_EQ(safety.wrong_owner_releases, 0) << "a release that never returned deleted nothing we know of";
  EXPECT_EQ(judge(safety).verdict, "violation");
}

// Issue 25 §5a: a client that crashes at a step point stamps its own death
// just before _exit; its open section ends there, not when the coordinator
// reaped it (later): a section entered after the death does not overlap it.
TEST(SharedHistoryTest, AnOpenSectionEndsAtItsOwnStampedDeathNotAtTheReaping) {
  auto history = SharedHistory::create(2, 4, nullptr);
  ASSERT_TRUE(history);
  const std::int64_t entered = monotonic_ns();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    history->become_own(0);
    CsRecord open = section(0, entered, 0);
    open.stage = CsStage::inside;
    open.release = kNoReleaseOutcome;
    if (history->append(0, open) == nullptr) ::_exit(1);
    history->enter(0);
    stamp_own_death();
    ::_exit(kCrashExitCode);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  const std::int64_t dead_by = history->slot(0).dead_by_ns.load();
  ASSERT_GT(dead_by, 0) << "the child stamped its death in the shared slot";
  stamp_own_death();  // the parent named no slot of its own: nothing happens
  EXPECT_EQ(history->slot(0).dead_by_ns.load(), dead_by);
  EXPECT_EQ(history->slot(1).dead_by_ns.load(), 0);

  // Client 1 enters after the death, before the coordinator reaps client 0.
  const std::int64_t second = monotonic_ns();
  ASSERT_NE(history->append(1, section(1, second, second + 1'000'000)), nullptr);
  history->forget_dead(0);
  const auto records = history->records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].exit_ns, dead_by) << "ends at its death, not at " << history->slot(0).died_ns.load();
  EXPECT_LT(records[0].exit_ns, history->slot(0).died_ns.load());
  EXPECT_EQ(find_overlaps(records).pairs, 0);

  // A kill stamp counts only once the death is confirmed (died_ns): a client
  // still running keeps its section open.
  auto alive = SharedHistory::create(1, 2, nullptr);
  ASSERT_TRUE(alive);
  CsRecord open = section(0, monotonic_ns(), 0);
  open.stage = CsStage::inside;
  ASSERT_NE(alive->append(0, open), nullptr);
  alive->stamp_killed(0);
  const std::int64_t killed = alive->slot(0).dead_by_ns.load();
  EXPECT_GT(alive->records()[0].exit_ns, killed) << "not seen dead: open until now";
  alive->forget_dead(0);
  EXPECT_EQ(alive->records()[0].exit_ns, killed);
}

// Issue 25 §4: a key with no expiry whose owner died inside, and another
// client kept out after it: deadlock, even when no stall reached the threshold.
TEST(Checker, ADeadOwnersKeyWithoutExpiryIsADeadlockWithoutAStall) {
  CsRecord dead = section(0, 100, 3000);
  dead.stage = CsStage::inside;
  SafetyInput input;
  input.records = {section(1, 0, 50), dead};
  input.clients = {{0, 3000, 200}, {0, 3000}};  // client 0 seen dead at 200
  input.run_start_ns = 0;
  input.stall_threshold_ns = 1'000'000;  // far longer than the run
  input.keys_left = {1, 1, true};
  input.kept_out = {false, true};
  Safety safety = check_safety(input);
  ASSERT_TRUE(safety.stalls.empty());
  EXPECT_EQ(safety.dead_owner.client, 0);
  EXPECT_EQ(safety.dead_owner.kept_out, 1);
  const Verdict verdict = judge(safety);
  EXPECT_EQ(verdict.verdict, "deadlock");
  ASSERT_FALSE(verdict.reasons.empty());
  EXPECT_NE(verdict.reasons[0].find("died inside its section"), std::string::npos) << verdict.reasons[0];

  // Each piece of evidence is needed.
  SafetyInput with_ttl = input;
  with_ttl.keys_left = {1, 0, true};  // a TTL lock: the key frees itself
  EXPECT_EQ(judge(check_safety(with_ttl)).verdict, "safe");
  SafetyInput leased = input;
  leased.lock_expires = true;  // getset-timestamp: no Redis TTL, but a waiter takes the key over
  EXPECT_EQ(judge(check_safety(leased)).verdict, "safe");
  SafetyInput nobody_waited = input;
  nobody_waited.kept_out = {false, false};
  EXPECT_EQ(judge(check_safety(nobody_waited)).verdict, "safe");
  SafetyInput owner_left = input;
  owner_left.records[1].stage = CsStage::left;  // alive: its release failed (a stall decides that case)
  EXPECT_EQ(judge(check_safety(owner_left)).verdict, "safe");
  SafetyInput waited_before = input;
  waited_before.clients[1].finished_ns = 90;  // kept out, but gone before the dead owner entered
  EXPECT_EQ(judge(check_safety(waited_before)).verdict, "safe");
  SafetyInput waited_until_death = input;
  waited_until_death.clients[1].finished_ns = 150;  // gone after it entered, before it died
  EXPECT_EQ(judge(check_safety(waited_until_death)).verdict, "safe");
  SafetyInput not_dead = input;
  not_dead.clients[0].died_ns = 0;  // stopped inside as the run ended: alive, no dead owner
  EXPECT_EQ(judge(check_safety(not_dead)).verdict, "safe");
}

TEST(SharedHistoryTest, AFullClientArrayRefusesAndIsFlagged) {
  auto history = SharedHistory::create(1, 2, nullptr);
  ASSERT_TRUE(history);
  EXPECT_NE(history->append(0, section(0, 1, 2)), nullptr);
  EXPECT_NE(history->append(0, section(0, 3, 4)), nullptr);
  EXPECT_EQ(history->append(0, section(0, 5, 6)), nullptr);
  EXPECT_EQ(history->slot(0).truncated.load(), 1);
  EXPECT_EQ(history->records().size(), 2u);
}

TEST(Parsing, Endpoints) {
  std::string why;
  auto endpoints = parse_endpoints("127.0.0.1:7001,127.0.0.1:7002", &why);
  ASSERT_TRUE(endpoints) << why;
  EXPECT_EQ(endpoints->size(), 2u);
  EXPECT_EQ((*endpoints)[1].port, 7002);
  EXPECT_FALSE(parse_endpoints("localhost:notaport", &why));
  EXPECT_NE(why.find("notaport"), std::string::npos);
}

TEST(Parsing, StepActions) {
  std::string why;
  auto crash = parse_step_action("after-get-before-del:crash:2", &why);
  ASSERT_TRUE(crash) << why;
  EXPECT_EQ(crash->point, "after-get-before-del");
  EXPECT_EQ(crash->kind, StepAction::Kind::crash);
  EXPECT_EQ(crash->client, 2);
  auto delay = parse_step_action("locklab:cs-enter:delay=30:-1:0", &why);
  ASSERT_TRUE(delay) << why;
  EXPECT_EQ(delay->point, kCsEnter);
  EXPECT_EQ(delay->delay.count(), 30);
  EXPECT_EQ(delay->times, 0);
  EXPECT_FALSE(parse_step_action("point", &why));
  EXPECT_FALSE(parse_step_action("point:explode", &why));
  EXPECT_NE(why.find("explode"), std::string::npos);
  EXPECT_FALSE(parse_step_action("point:delay=x", &why));
}

TEST(StepHooks, DelayActsOnlyOnItsClientAndOnlyTimesOften) {
  StepAction action;
  action.point = "p";
  action.kind = StepAction::Kind::delay;
  action.delay = std::chrono::milliseconds{30};
  action.client = 1;
  EXPECT_FALSE(make_step_hook({action}, 0)) << "client 0 gets no hook";
  auto hook = make_step_hook({action}, 1);
  ASSERT_TRUE(hook);
  auto timed = [&](std::string_view point) {
    const auto start = std::chrono::steady_clock::now();
    hook(point);
    return std::chrono::steady_clock::now() - start;
  };
  EXPECT_GE(timed("p"), std::chrono::milliseconds{30});
  EXPECT_LT(timed("p"), std::chrono::milliseconds{30}) << "times = 1: the second hit passes";
  EXPECT_LT(timed("other"), std::chrono::milliseconds{30});
}

}  // namespace
}  // namespace locklab::harness
