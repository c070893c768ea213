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
// The flags and their checks are `locklab fine-grained`'s (cli/sweep_commands.cpp).
#include "trials/sales_trial.h"

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

#include "registry.h"

#include "servers/redis_cluster.h"
#include "servers/redis_server.h"

namespace locklab::harness {

namespace {

using namespace std::chrono_literals;

using Flags = SalesTrialOptions;

struct SaleRun {
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

Result<SaleRun> run_sales(const Flags& flags, const std::string& topology, const redis::ConnectionOptions& server,
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
  SaleRun trial{topology, keys};
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

bool correct(const SaleRun& trial, const Flags& flags) {
  const long long stocked = static_cast<long long>(flags.units / trial.keys) * trial.keys;
  return trial.sold == stocked && trial.left == 0 && trial.lowest_counter >= 0;
}

void print_header() {
  std::printf("%-8s %5s %7s %6s %8s %8s %9s %10s %8s %7s %s\n", "topology", "keys", "clients", "sold", "stocked",
              "seconds", "sales/s", "acquires/s", "oversell", "lowest", "verdict");
}

void print_row(const SaleRun& trial, const Flags& flags) {
  const long long stocked = static_cast<long long>(flags.units / trial.keys) * trial.keys;
  std::printf("%-8s %5d %7d %6lld %8lld %8.3f %9.0f %10.0f %8lld %7lld %s\n", trial.topology.c_str(), trial.keys,
              flags.clients, trial.sold, stocked, trial.seconds, static_cast<double>(trial.sold) / trial.seconds,
              static_cast<double>(trial.acquisitions) / trial.seconds,
              std::max(0LL, trial.sold - stocked), trial.lowest_counter,
              correct(trial, flags) ? "ok" : "OVERSOLD OR SHORT");
  if (trial.lock_failures > 0) std::printf("         (%lld lock failures)\n", trial.lock_failures);
  std::fflush(stdout);
}

}  // namespace

Result<bool> run_sales_trial(const SalesTrialOptions& flags) {
  struct Topology {
    std::string name;
    redis::ConnectionOptions server;
  };
  std::vector<Topology> topologies;
  std::unique_ptr<RedisServer> single;
  std::unique_ptr<RedisCluster> cluster;
  if (flags.topology != "cluster") {
    auto started = RedisServer::start();
    if (!started) return started.error();
    single = std::move(started).value();
    topologies.push_back({"single", single->connection_options()});
  }
  if (flags.topology != "single") {
    redis::ConnectionOptions seed;
    if (!flags.cluster.empty()) {
      seed.endpoint = *redis::Endpoint::parse(flags.cluster);
    } else {
      auto started = RedisCluster::start();
      if (!started) return started.error();
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
      auto trial = run_sales(flags, topology.name, topology.server, keys);
      if (!trial) return Error{trial.error().kind, topology.name + ": " + trial.error().message};
      print_row(*trial, flags);
      all_correct = all_correct && correct(*trial, flags);
    }
  }
  std::printf("verdict: %s\n", all_correct ? "no oversell, exact totals in every run" : "OVERSOLD or short");
  return all_correct;
}

}  // namespace locklab::harness
