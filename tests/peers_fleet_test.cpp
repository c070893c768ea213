// Peers in one fleet (issue 11 §7): locklab's lua-safe-delete clients and
// redis-py `Lock` clients (scripts/peers/redis_py_worker.py, separate
// processes) contend for the same key and the same counter. Both are SET key
// token NX PX ttl + a Lua compare-and-delete, so each respects the other's
// holds: the counter (GET, hold, SET +1 inside the lock) must equal the
// combined acquisitions exactly. A lock that ignored the other side's holds
// would lose updates.
//
// Needs Debian's python3-redis (scripts/setup installs it); skipped with a
// message without it. ctest label: peers.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "registry.h"
#include "fixtures/redis_fixture.h"

namespace locklab::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kPython = "/usr/bin/python3";  // Debian's, where python3-redis lives
constexpr const char* kKey = "locklab:lock";
constexpr const char* kCounter = "locklab:counter";
constexpr int kLocklabClients = 3;
constexpr int kPythonClients = 3;
constexpr double kSeconds = 1.5;

bool python_redis_installed() {
  const std::string probe = std::string(kPython) + " -c 'import redis' >/dev/null 2>&1";
  return std::system(probe.c_str()) == 0;
}

struct Pipe {
  FILE* file = nullptr;
  ~Pipe() {
    if (file) ::pclose(file);
  }
};

// Starts one redis-py worker; it waits for `start_epoch_s`, then runs kSeconds.
std::unique_ptr<Pipe> start_python_worker(const redis::ConnectionOptions& server, double start_epoch_s, int worker) {
  const std::string address = server.endpoint.to_string();
  const std::string command = std::string(kPython) + " " LOCKLAB_PEERS_DIR "/redis_py_worker.py --lock " + address +
                              " --counter " + address + " --key " + kKey + " --counter-key " + kCounter +
                              " --hold-ms 1 --ttl-ms 2000 --wait-ms 1000 --retry-ms 5 --start " +
                              std::to_string(start_epoch_s) + " --duration " + std::to_string(kSeconds) +
                              " --worker " + std::to_string(worker);
  auto pipe = std::make_unique<Pipe>();
  pipe->file = ::popen(command.c_str(), "r");
  return pipe;
}

// The worker's JSON line, parsed; a null json when it printed nothing usable.
nlohmann::json finish(Pipe& pipe) {
  std::string output;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe.file)) output += buffer;
  const int status = ::pclose(pipe.file);
  pipe.file = nullptr;
  if (status != 0) return nullptr;
  return nlohmann::json::parse(output, nullptr, false);
}

class PeersFleetTest : public RedisTest {
 protected:
  void SetUp() override {
    if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
    RedisTest::SetUp();
  }

  // One locklab client: the same loop as the redis-py worker.
  int locklab_client(std::chrono::steady_clock::time_point start, std::chrono::steady_clock::time_point deadline) {
    auto lock = make_lock("lua-safe-delete", config(2000ms, kKey));
    auto counter = redis::Connection::connect(server().connection_options());
    EXPECT_TRUE(lock && counter);
    if (!lock || !counter) return 0;
    std::this_thread::sleep_until(start);
    int acquired = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      if ((*lock)->try_acquire(1000ms) != Acquire::acquired) continue;
      ++acquired;
      auto value = counter->command({"GET", kCounter});
      EXPECT_TRUE(value) << value.error().message;
      const long long current = value && value->string() ? std::stoll(*value->string()) : 0;
      std::this_thread::sleep_for(1ms);
      EXPECT_TRUE(counter->command({"SET", kCounter, std::to_string(current + 1)}));
      EXPECT_EQ((*lock)->release(), Release::released) << (*lock)->last_error();
    }
    return acquired;
  }
};

TEST_F(PeersFleetTest, LocklabAndRedisPyShareOneKeyAndTheCountIsExact) {
  run({"SET", kCounter, "0"});
  // Python needs a moment to start and import redis: everyone starts together 2 s from now.
  const auto start_wall = std::chrono::system_clock::now() + 2s;
  const auto start = std::chrono::steady_clock::now() + 2s;
  const double start_epoch_s = std::chrono::duration<double>(start_wall.time_since_epoch()).count();

  std::vector<std::unique_ptr<Pipe>> python;
  for (int i = 0; i < kPythonClients; ++i) {
    python.push_back(start_python_worker(server().connection_options(), start_epoch_s, i));
    ASSERT_NE(python.back()->file, nullptr);
  }
  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(kSeconds));
  std::vector<int> locklab_counts(kLocklabClients, 0);
  std::vector<std::thread> clients;
  for (int i = 0; i < kLocklabClients; ++i)
    clients.emplace_back([&, i] { locklab_counts[i] = locklab_client(start, deadline); });
  for (auto& client : clients) client.join();

  long long locklab_total = 0, python_total = 0;
  for (const int count : locklab_counts) locklab_total += count;
  for (auto& worker : python) {
    const auto stats = finish(*worker);
    ASSERT_TRUE(stats.is_object()) << "a redis-py worker failed";
    python_total += stats["acquired"].get<long long>();
    EXPECT_EQ(stats["errors"].get<long long>(), 0);
    EXPECT_EQ(stats["release_failures"].get<long long>(), 0) << "a lease ran out: hold 1 ms, lease 2 s";
  }
  EXPECT_GT(locklab_total, 0);
  EXPECT_GT(python_total, 0) << "both sides must really have contended";
  const auto counter = run({"GET", kCounter}).string();
  ASSERT_TRUE(counter);
  std::cout << "locklab " << locklab_total << " + redis-py " << python_total << " acquisitions, counter " << *counter
            << "\n";
  EXPECT_EQ(std::stoll(*counter), locklab_total + python_total)
      << "locklab " << locklab_total << " + redis-py " << python_total << " acquisitions";
}

}  // namespace
}  // namespace locklab::testing
