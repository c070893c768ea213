// The key ledger (harness/scenario/key_ledger.h): what the narrator adds to a
// story from the replies alone -- whose key a DEL removed (误删), a release
// that found its key deleted rather than expired, an acquire refused by a
// holder that has left but not released -- and nothing it cannot prove.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scenario/key_ledger.h"

namespace locklab::harness {
namespace {

using Kind = LedgerReply::Kind;
const LedgerReply kOk{Kind::status, 0};
const LedgerReply kNil{Kind::nil, 0};
LedgerReply integer(long long value) { return {Kind::integer, value}; }

constexpr const char* kServer = "127.0.0.1:6379";

TEST(KeyLedger, ADelOfAKeyAnotherClientWroteIsAWrongOwnerDelete) {
  KeyLedger ledger;
  EXPECT_FALSE(ledger.answered("index1", kServer, {"SET", "lock", "t1", "NX", "PX", "100"}, kOk, 1));
  EXPECT_FALSE(ledger.answered("index1", kServer, {"GET", "lock"}, {Kind::string, 0}, 2));
  // index1's key expired (the ledger cannot see it); index2's SET NX created the key again.
  EXPECT_FALSE(ledger.answered("index2", kServer, {"SET", "lock", "t2", "NX", "PX", "100"}, kOk, 3));
  const auto remark = ledger.answered("index1", kServer, {"DEL", "lock"}, integer(1), 4);
  ASSERT_TRUE(remark);
  EXPECT_EQ(*remark, "index1's DEL deleted index2's key (误删): index2 wrote it at step 3");
}

TEST(KeyLedger, AReleaseThatFindsItsKeyDeletedSaysWhoDeletedIt) {
  KeyLedger ledger;
  (void)ledger.answered("index3", kServer, {"SETNX", "lock", "index3"}, integer(1), 5);
  (void)ledger.answered("index1", kServer, {"DEL", "lock"}, integer(1), 6);
  // Another client whose key expired earlier: nothing of its was deleted.
  EXPECT_FALSE(ledger.answered("index2", kServer, {"DEL", "lock"}, integer(0), 7));
  const auto remark = ledger.answered("index3", kServer, {"DEL", "lock"}, integer(0), 8);
  ASSERT_TRUE(remark);
  EXPECT_EQ(*remark, "index3's key did not expire: index1's DEL deleted it at step 6");
}

TEST(KeyLedger, TheWritersOwnDelAndAGetsetWinnerAreNoRemark) {
  KeyLedger ledger;
  (void)ledger.answered("A", kServer, {"SETNX", "lock", "1"}, integer(1), 1);
  EXPECT_FALSE(ledger.answered("A", kServer, {"DEL", "lock"}, integer(1), 2));
  (void)ledger.answered("C1", kServer, {"GETSET", "lock", "2"}, {Kind::string, 0}, 3);
  const auto remark = ledger.answered("C0", kServer, {"DEL", "lock"}, integer(1), 4);
  ASSERT_TRUE(remark);  // GETSET wrote the key: it was C1's when C0 deleted it
  EXPECT_NE(remark->find("C1 wrote it at step 3"), std::string::npos);
}

TEST(KeyLedger, AScriptOnAKeyMakesTheLedgerForgetIt) {
  KeyLedger ledger;
  (void)ledger.answered("A", kServer, {"SET", "lock", "a", "NX", "PX", "100"}, kOk, 1);
  // A script's effect is not readable from its reply: the ledger no longer knows the writer.
  EXPECT_FALSE(ledger.answered("A", kServer, {"EVALSHA", "sha", "1", "lock", "a"}, integer(1), 2));
  EXPECT_FALSE(ledger.answered("B", kServer, {"DEL", "lock"}, integer(1), 3));
  // Nor does a key on another server count: the ledger is per server.
  (void)ledger.answered("A", kServer, {"SET", "lock", "a", "NX"}, kOk, 4);
  EXPECT_FALSE(ledger.answered("B", "127.0.0.1:6380", {"DEL", "lock"}, integer(1), 5));
}

TEST(KeyLedger, ARefusalByAHolderThatLeftButHasNotReleasedIsSaidOnce) {
  KeyLedger ledger;
  (void)ledger.answered("W2", kServer, {"SET", "lock", "w2", "NX", "PX", "5000"}, kOk, 1);
  ledger.entered("W2");
  EXPECT_FALSE(ledger.answered("W1", kServer, {"SET", "lock", "w1", "NX", "PX", "5000"}, kNil, 2));  // W2 is inside
  ledger.left("W2");
  const auto remark = ledger.answered("W1", kServer, {"SET", "lock", "w1", "NX", "PX", "5000"}, kNil, 3);
  ASSERT_TRUE(remark);
  EXPECT_EQ(*remark, "the key is still W2's: W2 has left its critical section but not released the lock yet");
  EXPECT_FALSE(ledger.answered("W1", kServer, {"SET", "lock", "w1", "NX", "PX", "5000"}, kNil, 4));  // once
}

TEST(KeyLedger, NobodyWaitsForADeadHoldersRelease) {
  KeyLedger ledger;
  (void)ledger.answered("A", kServer, {"SETNX", "lock", "A"}, integer(1), 1);
  ledger.entered("A");
  ledger.left("A");
  ledger.crashed("A");
  EXPECT_FALSE(ledger.answered("B", kServer, {"SETNX", "lock", "B"}, integer(0), 2));
}

TEST(KeyLedger, ErrorsAndShortRequestsAreNoEvidence) {
  KeyLedger ledger;
  (void)ledger.answered("A", kServer, {"SETNX", "lock", "A"}, integer(1), 1);
  EXPECT_FALSE(ledger.answered("B", kServer, {"DEL", "lock"}, {Kind::error, 0}, 2));
  EXPECT_FALSE(ledger.answered("B", kServer, {"PING"}, kOk, 3));
  EXPECT_FALSE(ledger.answered("B", kServer, {"DEL", "lock", "other"}, integer(2), 4));  // two keys: whose?
}

}  // namespace
}  // namespace locklab::harness
