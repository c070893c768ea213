#include "sweeps/scale.h"

#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>

#include "registry.h"

#include "report/timeline_svg.h"
#include "run/run_document.h"
#include "servers/redis_server.h"
#include "servers/server_stats.h"
#include "support/run_id.h"
#include "workload/lock_catalog.h"

namespace locklab::harness {
namespace {

using nlohmann::json;

constexpr std::size_t kLockMasters = 5;  // Redlock's usual 5; single-node locks use the first

double seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; }

double cpu_seconds(int who) {
  rusage usage{};
  if (::getrusage(who, &usage) != 0) return 0;
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// used_cpu_user + used_cpu_sys of every server (INFO cpu), in seconds.
double servers_cpu_seconds(const std::vector<redis::ConnectionOptions>& servers) {
  double total = 0;
  for (const auto& server : servers) {
    auto info = ask(server, {"INFO", "cpu"});
    if (!info || !info->is_string()) continue;
    std::istringstream lines{std::string(info->text())};
    for (std::string line; std::getline(lines, line);) {
      for (const char* field : {"used_cpu_user:", "used_cpu_sys:"}) {
        if (line.rfind(field, 0) == 0) total += std::strtod(line.c_str() + std::strlen(field), nullptr);
      }
    }
  }
  return total;
}

std::vector<std::string> default_locks() {
  std::vector<std::string> locks;
  for (const auto& generation : generations())
    if (generation.capabilities.uses_redis) locks.push_back(generation.name);
  return locks;
}

Status write_text(const std::filesystem::path& path, const std::string& text) {
  return write_file_atomically(path.string(), text);
}

struct Servers {
  ServerList owned;
  std::vector<redis::Endpoint> lock;
  redis::Endpoint counter;
  std::vector<redis::ConnectionOptions> all;
};

Result<Servers> start_servers() {
  auto masters = start_masters(kLockMasters + 1);
  if (!masters) return Error{ErrorKind::io, "cannot start redis-server: " + masters.error().message};
  Servers servers;
  servers.owned = std::move(masters).value();
  for (std::size_t i = 0; i < servers.owned.size(); ++i) {
    const auto options = servers.owned[i]->connection_options();
    servers.all.push_back(options);
    if (i < kLockMasters) servers.lock.push_back(options.endpoint);
    else servers.counter = options.endpoint;
  }
  return servers;
}

// The median round trip of a plain GET on the lock server: the unit of the
// serial limit. Measured once, before any client runs, on a quiet server.
Result<double> median_round_trip_us(const redis::ConnectionOptions& server) {
  constexpr int kSamples = 2000;
  auto connection = redis::Connection::connect(server);
  if (!connection) return Error{ErrorKind::io, "measuring the round trip: " + connection.error().message};
  std::vector<double> samples;
  samples.reserve(kSamples);
  for (int i = 0; i < kSamples; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto reply = connection->command({"GET", "locklab:round-trip"});
    if (!reply) return Error{ErrorKind::io, "measuring the round trip: " + reply.error().message};
    samples.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(samples.begin(), samples.begin() + kSamples / 2, samples.end());
  return samples[kSamples / 2];
}

ScalePoint run_point(const ScaleOptions& options, const Servers& servers, const LockDescription& generation, int clients,
                     Result<json>* document) {
  RunOptions run = options.base;
  run.lock = generation.name;
  run.clients = clients;
  run.redis = generation.capabilities.multi_node ? servers.lock : std::vector{servers.lock.front()};
  run.counter_redis = servers.counter;
  // A clean slate: generations use different key types (string, hash, list) under one key name.
  for (const auto& server : servers.all) (void)ask(server, {"FLUSHALL"});

  ScalePoint point{generation.name, clients, json(), CpuShare{}};
  point.cpu.cores = std::max(1u, std::thread::hardware_concurrency());
  const double self_before = cpu_seconds(RUSAGE_SELF), children_before = cpu_seconds(RUSAGE_CHILDREN);
  const double servers_before = servers_cpu_seconds(servers.all);
  const auto start = std::chrono::steady_clock::now();
  *document = measure(run);
  point.cpu.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  point.cpu.coordinator_s = cpu_seconds(RUSAGE_SELF) - self_before;
  point.cpu.clients_s = cpu_seconds(RUSAGE_CHILDREN) - children_before;
  point.cpu.servers_s = servers_cpu_seconds(servers.all) - servers_before;
  if (*document) point.run = **document;
  return point;
}

}  // namespace

std::optional<std::vector<int>> parse_client_counts(const std::string& text, std::string* why) {
  auto refuse = [&](const std::string& reason) -> std::optional<std::vector<int>> {
    if (why != nullptr) *why = reason;
    return std::nullopt;
  };
  std::vector<int> counts;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    int value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc{} || end != item.data() + item.size())
      return refuse("'" + item + "' is not a client count (expected e.g. 1,2,4,8)");
    // The CLI's validator puts "--clients: " in front of every reason: the rule alone.
    if (out_of_bounds(bounds::clients, value)) return refuse(bound_rule(bounds::clients));
    counts.push_back(value);
  }
  if (counts.empty()) return refuse("expected client counts such as 1,2,4,8");
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

Result<ScaleSummary> scale(const ScaleOptions& options) {
  const auto locks = options.locks.empty() ? default_locks() : options.locks;
  const UserAdapters& own = options.base.user_adapters;  // found first, as in a run
  auto described = [&own](const std::string& lock) {
    return own.find(lock) != nullptr ? Result<LockDescription>(*own.find(lock)) : find_lock(lock);
  };
  for (const auto& lock : locks)
    if (!described(lock)) return Error{ErrorKind::usage, "--lock: unknown lock '" + lock + "'"};
  if (options.clients.empty()) return Error{ErrorKind::usage, "--clients: expected client counts such as 1,2,4,8"};
  for (int clients : options.clients) {
    RunOptions probe = options.base;
    probe.lock = locks.front();
    probe.clients = clients;
    if (auto problem = validate(probe)) return Error{ErrorKind::usage, *problem};
  }

  ScaleSummary summary;
  auto made = result_dir(options.out, "results/scale");
  if (!made) return made.error();
  summary.dir = std::move(made).value();

  auto servers = start_servers();
  if (!servers) return servers.error();
  auto round_trip = median_round_trip_us(servers->all.front());
  if (!round_trip) return round_trip.error();
  summary.sweep.limit = {*round_trip, static_cast<double>(options.base.hold_ms)};
  const std::filesystem::path dir(summary.dir);
  for (const auto& lock : locks) {
    const LockDescription generation = described(lock).value();
    for (int clients : options.clients) {
      Result<json> document = Error{ErrorKind::io, "not run"};
      ScalePoint point = run_point(options, *servers, generation, clients, &document);
      if (!document) {
        std::fprintf(stderr, "locklab scale: %s with %d clients: %s\n", lock.c_str(), clients,
                     document.error().message.c_str());
        ++summary.failed_runs;
        continue;
      }
      const std::string file = (dir / (lock + "-c" + std::to_string(clients) + ".json")).string();
      if (auto written = write_json_atomically(file, *document); !written) return written.error();
      if ((*document)["verdict"] == "error") ++summary.failed_runs;
      std::fprintf(stderr, "locklab scale: %s\n", scale_progress_line(point).c_str());
      summary.sweep.points.push_back(std::move(point));
    }
  }
  if (auto written = write_json_atomically((dir / "scale.json").string(), scale_document(summary.sweep)); !written)
    return written.error();
  if (auto written = write_text(dir / "scale.md", scale_markdown(summary.sweep)); !written) return written.error();
  if (auto written = write_text(dir / "scale.svg", standalone_svg(scale_svg(summary.sweep))); !written)
    return written.error();
  if (auto written = write_text(dir / "scale.html", scale_html(summary.sweep)); !written) return written.error();
  return summary;
}

}  // namespace locklab::harness
