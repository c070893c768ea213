// A GoogleTest fixture with a real redis-server of its own (one per test
// binary process; ctest runs each TEST in its own process), flushed before
// every test, stopped at the end even when a test fails.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "lock.h"
#include "redis/connection.h"
#include "redis_server.h"

namespace locklab::testing {

class RedisTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto started = harness::RedisServer::start();
    ASSERT_TRUE(started) << started.error().message;
    server_ = std::move(started).value();
  }

  static void TearDownTestSuite() { server_.reset(); }

  void SetUp() override {
    ASSERT_TRUE(server_) << "no redis-server";
    if (!server_->running()) {
      ASSERT_TRUE(server_->restart());
    }
    server_->resume();
    auto connection = redis::Connection::connect(server_->connection_options());
    ASSERT_TRUE(connection) << connection.error().message;
    admin_.emplace(std::move(connection).value());
    ASSERT_TRUE(admin().command({"FLUSHALL"}));
  }

  // An independent connection for inspecting the server (TTL, GET, ...).
  redis::Connection& admin() { return *admin_; }

  redis::Reply run(const redis::Args& args) {
    auto reply = admin().command(args);
    EXPECT_TRUE(reply) << reply.error().message;
    return reply ? std::move(reply).value() : redis::Reply(nullptr);
  }

  // A LockConfig pointing at this fixture's server.
  LockConfig config(std::chrono::milliseconds ttl = std::chrono::milliseconds{10'000},
                    std::string key = "locklab:test") const {
    LockConfig lock_config;
    lock_config.key = std::move(key);
    lock_config.ttl = ttl;
    lock_config.servers = {server_->connection_options()};
    lock_config.retry_interval = std::chrono::milliseconds{5};
    return lock_config;
  }

  static harness::RedisServer& server() { return *server_; }

 private:
  static inline std::unique_ptr<harness::RedisServer> server_;
  std::optional<redis::Connection> admin_;
};

}  // namespace locklab::testing
