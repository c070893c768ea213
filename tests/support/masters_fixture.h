// A GoogleTest fixture with N independent redis-server masters of its own (one
// set per test binary process; ctest runs each TEST in its own process), each
// resumed, unpaused and flushed before every test, stopped at the end even
// when a test fails. Redlock and the fan-out plumbing both need N masters.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "redis/connection.h"
#include "redis_server.h"

namespace locklab::testing {

template <std::size_t N>
class MastersTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto started = harness::start_masters(N);
    ASSERT_TRUE(started) << started.error().message;
    servers_ = std::move(started).value();
  }
  static void TearDownTestSuite() { servers_.clear(); }

  void SetUp() override {
    ASSERT_EQ(servers_.size(), N) << "no redis-servers";
    admins_.clear();
    for (auto& server : servers_) {
      if (!server->running()) {
        ASSERT_TRUE(server->restart());
      }
      server->resume();
      auto connection = redis::Connection::connect(server->connection_options());
      ASSERT_TRUE(connection) << connection.error().message;
      ASSERT_TRUE(connection->command({"CLIENT", "UNPAUSE"}));  // a test that paused writes may have failed
      ASSERT_TRUE(connection->command({"FLUSHALL"}));
      admins_.push_back(std::move(connection).value());
    }
  }
  void TearDown() override {
    for (auto& server : servers_) server->resume();
  }

  static harness::RedisServer& server(std::size_t i) { return *servers_.at(i); }

  static inline harness::ServerList servers_;
  std::vector<redis::Connection> admins_;  // one admin connection per master, in server order
};

}  // namespace locklab::testing
