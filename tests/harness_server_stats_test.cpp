// The coordinator's questions to the servers: INFO commandstats parsed and
// summed (our own INFO probes excluded), lock keys left behind, reachability.
#include <gtest/gtest.h>

#include "fixtures/redis_fixture.h"
#include "servers/server_stats.h"

namespace locklab::harness {
namespace {

TEST(ServerStats, CommandstatsCallsExcludeInfo) {
  const std::string info =
      "# Commandstats\r\ncmdstat_set:calls=12,usec=30,usec_per_call=2.50,rejected_calls=0,failed_calls=0\r\n"
      "cmdstat_info:calls=4,usec=100\r\ncmdstat_evalsha:calls=3,usec=9\r\n";
  EXPECT_EQ(parse_commandstats_calls(info), 15);
  EXPECT_EQ(parse_commandstats_calls("# Commandstats\r\n"), 0);
  EXPECT_FALSE(parse_commandstats_calls("cmdstat_get:usec=1\r\n"));
}

class ServerStatsOnRedis : public testing::RedisTest {};

TEST_F(ServerStatsOnRedis, CommandsServedCountsWhatWasSentAndNotTheProbes) {
  const std::vector<redis::ConnectionOptions> servers = {server().connection_options()};
  auto before = commands_served(servers);
  ASSERT_TRUE(before) << before.error().message;
  run({"SET", "a", "1"});
  run({"GET", "a"});
  auto after = commands_served(servers);
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_EQ(*after - *before, 2) << "SET + GET; the INFO probes themselves are not counted";
}

TEST_F(ServerStatsOnRedis, KeysLeftSeesKeysAndTheOnesWithoutTtl) {
  const std::vector<redis::ConnectionOptions> servers = {server().connection_options()};
  EXPECT_EQ(keys_left(servers, "locklab:test").keys, 0);
  run({"SET", "locklab:test", "x", "PX", "10000"});
  EXPECT_EQ(keys_left(servers, "locklab:test").keys, 1);
  EXPECT_EQ(keys_left(servers, "locklab:test").without_ttl, 0);
  run({"PERSIST", "locklab:test"});
  EXPECT_EQ(keys_left(servers, "locklab:test").without_ttl, 1);
}

TEST_F(ServerStatsOnRedis, ReachableNamesTheServerItCannotReach) {
  EXPECT_TRUE(reachable(server().connection_options()));
  redis::ConnectionOptions nowhere;
  nowhere.endpoint = {"127.0.0.1", 1};
  nowhere.connect_timeout = std::chrono::milliseconds{500};
  auto down = reachable(nowhere);
  ASSERT_FALSE(down);
  EXPECT_NE(down.error().message.find("127.0.0.1:1"), std::string::npos) << down.error().message;
}

}  // namespace
}  // namespace locklab::harness
