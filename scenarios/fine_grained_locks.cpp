// Seed 001's advice, measured: lock each product, not the whole shop.
//
// K products share U units of inventory (U/K each). M clients (threads) sell
// until every product is sold out: pick a product still in stock, take ITS lock
// ("{product:i}:lock"), read its counter, write counter-1 if it was positive,
// release. The counter's read-modify-write is deliberately not atomic: only the
// lock keeps two clients from selling the same unit twice.
//
// Run for K = 1, 16, 256 on one master and on a 3-master Redis Cluster (both
// started here, or --cluster HOST:PORT for an existing cluster). The verdict
// is correctness: no oversell (units sold = U exactly), no counter below zero,
// every counter at zero. The throughput table is the measurement (sales/s):
// one key serializes every client; many keys let them work in parallel, and a
// cluster spreads the keys over its masters.
//
// Exit 0: every run sold exactly U with no counter below zero; 1: a run
// oversold or failed; 2: usage.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <latch>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "redis/connection.h"
#include "redis/link.h"
#include "servers/redis_cluster.h"
#include "servers/redis_server.h"
#include "registry.h"

namespace {

using namespace locklab;
using namespace std::chrono_literals;

constexpr int kOk = 0, kFailed = 1, kUsage = 2;

struct Flags {
  std::string lock = "lua-safe-delete";
  int clients = 8;
  std::vector<int> keys{1, 16, 256};
  int units = 4096;
  std::string topology = "both";  // single | cluster | both
  std::string cluster;            // HOST:PORT of an existing cluster node
  int retry_ms = 1;
  int hold_ms = 1;  // the work done while holding a product's lock (an order being written)
  int wait_ms = 10'000;
};

struct Trial {
  std::string topology;
  int keys = 0;
  long long sold = 0;
  long long acquisitions = 0;
  long long lock_failures = 0;  // try_acquire/release errors, unknown outcomes, timeouts
  double seconds = 0;
  long long lowest_counter = 0;
  long long left = 0;  // units still in the counters at the end
};

std::string product_key(int product) { return "{product:" + std::to_string(product) + "}"; }
std::string stock_key(int product) { return product_key(product) + ":stock"; }
std::string lock_key(int product) { return product_key(product) + ":lock"; }

std::optional<long long> to_integer(const redis::Reply& reply) {
  const auto text = reply.string();
  if (!text) return std::nullopt;
  long long value = 0;
  if (std::from_chars(text->data(), text->data() + text->size(), value).ec != std::errc{}) return std::nullopt;
  return value;
}

// One client: its own lock object per product it touches (a lock object is one
// client identity), its own data connection.
class Client {
 public:
  Client(const Flags& flags, const redis::ConnectionOptions& server, int keys, unsigned seed)
      : flags_(flags), server_(server), data_(server), random_(seed), locks_(static_cast<std::size_t>(keys)) {
    for (int product = 0; product < keys; ++product) in_stock_.push_back(product);
  }

  // Connects every lock object and the data connection (one acquire and release
  // per product, counters untouched), so the timed part measures locking, not
  // connection setup. false: a lock could not be taken.
  bool warm_up() {
    if (!data_.command({"PING"})) return false;
    for (const int product : in_stock_) {
      DistributedLock* lock = lock_for(product);
      if (!lock || lock->try_acquire(std::chrono::milliseconds{flags_.wait_ms}) != Acquire::acquired) return false;
      if (lock->release() != Release::released) return false;
    }
    return true;
  }

  void sell_until_sold_out() {
    while (!in_stock_.empty()) {
      const auto pick = std::uniform_int_distribution<std::size_t>(0, in_stock_.size() - 1)(random_);
      if (!sell_one(in_stock_[pick])) in_stock_.erase(in_stock_.begin() + static_cast<long>(pick));
    }
  }

  long long sold = 0, acquisitions = 0, lock_failures = 0;

 private:
  // false: the product is sold out (or cannot be sold: a failure was counted).
  bool sell_one(int product) {
    DistributedLock* lock = lock_for(product);
    if (!lock) return false;
    const Acquire acquired = lock->try_acquire(std::chrono::milliseconds{flags_.wait_ms});
    if (acquired != Acquire::acquired) {
      ++lock_failures;
      return acquired == Acquire::timed_out;  // a timeout: try again later; an error: give up on it
    }
    ++acquisitions;
    bool in_stock = false;
    auto stock = data_.command({"GET", stock_key(product)});
    const auto left = stock ? to_integer(*stock) : std::nullopt;
    if (left && *left > 0) {
      // The order's work between the check and the write (not a wait for anything).
      if (flags_.hold_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds{flags_.hold_ms});
      // Not DECR: the lock alone keeps this read-modify-write from overselling.
      auto written = data_.command({"SET", stock_key(product), std::to_string(*left - 1)});
      if (written && written->is_status("OK")) {
        ++sold;
        in_stock = *left - 1 > 0;
      }
    }
    if (lock->release() != Release::released) ++lock_failures;
    return in_stock;
  }

  DistributedLock* lock_for(int product) {
    auto& slot = locks_[static_cast<std::size_t>(product)];
    if (!slot) {
      LockConfig config;
      config.key = lock_key(product);
      config.ttl = 10s;
      config.retry_interval = std::chrono::milliseconds{flags_.retry_ms};
      config.servers = {server_};
      auto made = make_lock(flags_.lock, config);
      if (!made) {
        ++lock_failures;
        return nullptr;
      }
      slot = std::move(made).value();
    }
    return slot.get();
  }

  const Flags& flags_;
  const redis::ConnectionOptions server_;
  redis::Link data_;
  std::mt19937 random_;
  std::vector<std::unique_ptr<DistributedLock>> locks_;
  std::vector<int> in_stock_;
};

Result<Trial> run_trial(const Flags& flags, const std::string& topology, const redis::ConnectionOptions& server,
                        int keys) {
  redis::Link admin(server);
  const int per_product = flags.units / keys;
  for (int product = 0; product < keys; ++product) {
    if (auto reset = admin.command({"DEL", lock_key(product)}); !reset) return reset.error();
    if (auto stocked = admin.command({"SET", stock_key(product), std::to_string(per_product)}); !stocked)
      return stocked.error();
  }
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < flags.clients; ++i)
    clients.push_back(std::make_unique<Client>(flags, server, keys, static_cast<unsigned>(i + 1)));

  // Every client warms up, then all start selling together; the clock starts then.
  std::latch ready(static_cast<std::ptrdiff_t>(clients.size()) + 1);
  std::atomic<int> cold{0};
  std::chrono::steady_clock::time_point started;
  {
    std::vector<std::jthread> threads;
    for (auto& client : clients)
      threads.emplace_back([&client, &ready, &cold] {
        if (!client->warm_up()) cold.fetch_add(1);
        ready.arrive_and_wait();
        client->sell_until_sold_out();
      });
    ready.arrive_and_wait();
    started = std::chrono::steady_clock::now();
  }
  if (cold.load() > 0) return Error{ErrorKind::io, std::to_string(cold.load()) + " clients could not warm up their locks"};
  Trial trial{topology, keys};
  trial.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  for (const auto& client : clients) {
    trial.sold += client->sold;
    trial.acquisitions += client->acquisitions;
    trial.lock_failures += client->lock_failures;
  }
  trial.lowest_counter = per_product;
  for (int product = 0; product < keys; ++product) {
    auto stock = admin.command({"GET", stock_key(product)});
    if (!stock) return stock.error();
    const auto left = to_integer(*stock);
    if (!left) return Error{ErrorKind::protocol, stock_key(product) + ": " + stock->describe()};
    trial.lowest_counter = std::min(trial.lowest_counter, *left);
    trial.left += *left;
  }
  return trial;
}

bool correct(const Trial& trial, const Flags& flags) {
  const long long stocked = static_cast<long long>(flags.units / trial.keys) * trial.keys;
  return trial.sold == stocked && trial.left == 0 && trial.lowest_counter >= 0;
}

void print_header() {
  std::printf("%-8s %5s %7s %6s %8s %8s %9s %10s %8s %7s %s\n", "topology", "keys", "clients", "sold", "stocked",
              "seconds", "sales/s", "acquires/s", "oversell", "lowest", "verdict");
}

void print_row(const Trial& trial, const Flags& flags) {
  const long long stocked = static_cast<long long>(flags.units / trial.keys) * trial.keys;
  std::printf("%-8s %5d %7d %6lld %8lld %8.3f %9.0f %10.0f %8lld %7lld %s\n", trial.topology.c_str(), trial.keys,
              flags.clients, trial.sold, stocked, trial.seconds, static_cast<double>(trial.sold) / trial.seconds,
              static_cast<double>(trial.acquisitions) / trial.seconds,
              std::max(0LL, trial.sold - stocked), trial.lowest_counter,
              correct(trial, flags) ? "ok" : "OVERSOLD OR SHORT");
  if (trial.lock_failures > 0) std::printf("         (%lld lock failures)\n", trial.lock_failures);
  std::fflush(stdout);
}

int complain(int code, const std::string& message) {
  std::fprintf(stderr, "fine_grained_locks: %s\n", message.c_str());
  return code;
}

int run(const Flags& flags) {
  struct Topology {
    std::string name;
    redis::ConnectionOptions server;
  };
  std::vector<Topology> topologies;
  std::unique_ptr<harness::RedisServer> single;
  std::unique_ptr<harness::RedisCluster> cluster;
  if (flags.topology != "cluster") {
    auto started = harness::RedisServer::start();
    if (!started) return complain(kFailed, started.error().message);
    single = std::move(started).value();
    topologies.push_back({"single", single->connection_options()});
  }
  if (flags.topology != "single") {
    redis::ConnectionOptions seed;
    if (!flags.cluster.empty()) {
      seed.endpoint = *redis::Endpoint::parse(flags.cluster);
    } else {
      auto started = harness::RedisCluster::start();
      if (!started) return complain(kFailed, started.error().message);
      cluster = std::move(started).value();
      seed = cluster->seed();
    }
    seed.cluster = true;
    topologies.push_back({"cluster", seed});
  }

  bool all_correct = true;
  print_header();
  for (const auto& topology : topologies) {
    for (const int keys : flags.keys) {
      auto trial = run_trial(flags, topology.name, topology.server, keys);
      if (!trial) return complain(kFailed, topology.name + ": " + trial.error().message);
      print_row(*trial, flags);
      all_correct = all_correct && correct(*trial, flags);
    }
  }
  std::printf("verdict: %s\n", all_correct ? "no oversell, exact totals in every run" : "OVERSOLD or short");
  return all_correct ? kOk : kFailed;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Seed 001's fine-grained locks: K products, M clients each locking the product it sells; "
               "sales/s on one master and on a 3-master Redis Cluster, and no oversell."};
  Flags flags;
  app.add_option("--lock", flags.lock, "Lock generation (not redlock; no-lock shows the oversell)")->capture_default_str();
  app.add_option("--clients", flags.clients, "Client threads")->capture_default_str()->check(CLI::Range(1, 256));
  app.add_option("--keys", flags.keys, "Product counts to run (K)")->capture_default_str()->check(CLI::Range(1, 65536))
      ->delimiter(',');
  app.add_option("--units", flags.units, "Units of inventory in all, split evenly over the K products")
      ->capture_default_str()->check(CLI::Range(1, 10'000'000));
  app.add_option("--topology", flags.topology, "single | cluster | both")
      ->capture_default_str()->check(CLI::IsMember({"single", "cluster", "both"}));
  app.add_option("--cluster", flags.cluster, "Use this existing cluster node (HOST:PORT) instead of starting a cluster");
  app.add_option("--hold-ms", flags.hold_ms, "Work done inside each sale's critical section (0: none)")
      ->capture_default_str()->check(CLI::Range(0, 1000));
  app.add_option("--retry-ms", flags.retry_ms, "Pause between acquire attempts")->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_option("--wait-ms", flags.wait_ms, "How long a client waits for a product's lock")
      ->capture_default_str()->check(CLI::Range(1, 600'000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    return complain(kUsage, e.what());
  }
  const auto* generation = find_generation(flags.lock);
  if (!generation) return complain(kUsage, "unknown lock '" + flags.lock + "'");
  if (generation->capabilities.multi_node) return complain(kUsage, flags.lock + " needs independent masters, not a cluster");
  if (!flags.cluster.empty() && !redis::Endpoint::parse(flags.cluster))
    return complain(kUsage, "--cluster: expected HOST:PORT, got '" + flags.cluster + "'");
  for (const int keys : flags.keys)
    if (keys > flags.units) return complain(kUsage, "--keys " + std::to_string(keys) + " exceeds --units");
  try {
    return run(flags);
  } catch (const std::exception& e) {  // a bug, not an expected outcome: still one line
    return complain(kFailed, e.what());
  }
}
