// The protected counter: plain read-modify-write, and the fenced variant that
// refuses a stale token on the read and on the write.
#include "fixtures/redis_fixture.h"
#include "resource/counter_resource.h"

namespace locklab::testing {
namespace {

class CounterResourceTest : public RedisTest {
 protected:
  harness::CounterResource counter() { return harness::CounterResource(server().connection_options(), "c"); }
};

TEST_F(CounterResourceTest, PlainReadModifyWrite) {
  auto resource = counter();
  EXPECT_EQ(resource.read(std::nullopt)->value, 0);
  EXPECT_TRUE(*resource.write(1, std::nullopt));
  EXPECT_EQ(resource.read(std::nullopt)->value, 1);
  EXPECT_EQ(*resource.value(), 1);
}

TEST_F(CounterResourceTest, PlainCounterLosesAnInterleavedUpdate) {
  auto a = counter();
  auto b = counter();
  const long long seen_by_a = a.read(std::nullopt)->value;
  const long long seen_by_b = b.read(std::nullopt)->value;
  a.write(seen_by_a + 1, std::nullopt);
  b.write(seen_by_b + 1, std::nullopt);
  EXPECT_EQ(*a.value(), 1) << "two increments, one survives: the lost update the locks exist to prevent";
}

// Stale holder (token 1) read, new holder (token 2) read, stale holder writes: refused.
TEST_F(CounterResourceTest, FencedWriteWithStaleTokenIsRefused) {
  auto stale = counter();
  auto fresh = counter();
  ASSERT_FALSE(stale.read(1)->refused);
  ASSERT_FALSE(fresh.read(2)->refused);
  EXPECT_FALSE(*stale.write(1, 1));
  EXPECT_TRUE(*fresh.write(1, 2));
  EXPECT_EQ(*fresh.value(), 1);
}

TEST_F(CounterResourceTest, FencedReadWithStaleTokenIsRefused) {
  auto resource = counter();
  ASSERT_FALSE(resource.read(5)->refused);
  EXPECT_TRUE(resource.read(4)->refused);
  EXPECT_FALSE(resource.read(5)->refused) << "the same token may read again (reentrant holder)";
  EXPECT_EQ(run({"GET", "c:highest-token"}).string(), "5");
}

TEST_F(CounterResourceTest, ResetClearsCounterAndFence) {
  auto resource = counter();
  resource.read(9);
  resource.write(3, 9);
  ASSERT_TRUE(resource.reset());
  EXPECT_EQ(*resource.value(), 0);
  EXPECT_FALSE(resource.read(1)->refused);
}

}  // namespace
}  // namespace locklab::testing
