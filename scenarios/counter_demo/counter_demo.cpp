// counter_demo: seed 004 §11's experiment, "expected 101, got N".
//
//   counter_demo                       the table: no lock, local mutex in 1 and in 3 instances,
//                                      every Redis generation, next to the article's numbers
//   counter_demo --serve PORT          the same as HTTP services behind one round-robin front,
//                                      for the article's own `ab -n100 -c50 http://127.0.0.1:PORT/test`
//
// Exit codes: 0 every row came out as the lesson says (or --serve stopped cleanly),
// 1 a row did not / runtime failure, 2 usage. --lang zh prints the table in
// Chinese (the story kit's message catalog, harness/scenario/messages.cpp), and
// so are its usage errors and the table's runtime failures; --serve's
// operational lines (a port, pids, an ab command line) stay English.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "counter_service.h"
#include "counter_table.h"
#include "registry.h"

#include "scenario/messages.h"
#include "servers/given_or_own_servers.h"
#include "servers/redis_server.h"
#include "support/text.h"

namespace {

using namespace locklab;
using namespace locklab::scenarios;

constexpr int kOk = 0, kRuntime = 1, kUsage = 2;

// `message` is already in the narration's language (text(), translated_error()).
int complain(int code, const std::string& message) { return harness::complain("counter_demo", code, message); }

int complain_about(const Error& error) {
  return complain(error.kind == ErrorKind::usage ? kUsage : kRuntime, harness::translated_error(error.message));
}

struct Flags {
  DemoLoad load;
  int gap_ms = 5, wait_ms = 30'000, retry_ms = 2, ttl_ms = 10'000, nodes = 5, node_timeout_ms = 1000;
  std::string lock, redis, lang = "en";
  int serve_port = -1;  // -1: no --serve
  int instances = 3;
};

// The Redis servers the locks and the counter use: --redis ones, or our own
// (stopped when this goes away, and on SIGINT/SIGTERM, by the launcher); lock[0] also holds the counter.
using Servers = harness::GivenOrOwnServers;

Result<Servers> provide_servers(const Flags& flags, bool need_many) {
  std::vector<redis::Endpoint> given;
  if (!flags.redis.empty()) {
    std::string why;
    auto endpoints = harness::parse_endpoints(flags.redis, &why);
    if (!endpoints) return Error{ErrorKind::usage, why};
    given = std::move(endpoints).value();
  }
  return harness::provide_given_or_own_servers(given, need_many ? static_cast<std::size_t>(flags.nodes) : 1);
}

CounterSetup base_setup(const Flags& flags, const Servers& servers) {
  CounterSetup setup;
  setup.counter_server = servers.lock.front();
  setup.lock_name = flags.lock.empty() ? "no-lock" : flags.lock;
  setup.lock.key = "counter-demo:lock";
  setup.lock.ttl = std::chrono::milliseconds{flags.ttl_ms};
  setup.lock.retry_interval = std::chrono::milliseconds{flags.retry_ms};
  // Redlock's own default (ttl/200, at most 50 ms) takes a node busy with 50
  // connecting clients on a loaded 2-core host for dead; the demo is about
  // mutual exclusion, not about node failures.
  setup.lock.node_timeout = std::chrono::milliseconds{flags.node_timeout_ms};
  setup.gap = std::chrono::milliseconds{flags.gap_ms};
  setup.wait = std::chrono::milliseconds{flags.wait_ms};
  return setup;
}

// Redlock gets every server; every other generation the first one.
CounterSetup setup_for(const CounterSetup& base, const Servers& servers, const std::string& lock_name) {
  CounterSetup setup = base;
  const Generation* generation = find_generation(lock_name);
  setup.lock.servers = servers.lock;
  if (generation == nullptr || !generation->capabilities.multi_node) setup.lock.servers.resize(1);
  return setup;
}

// `text` aligned in `columns` terminal columns (a CJK character takes two), left or right.
std::string padded(const std::string& text, std::size_t columns, bool right = false) {
  std::size_t width = 0;
  for (const unsigned char c : text)
    if ((c & 0xC0) != 0x80) width += c >= 0xE3 ? 2 : 1;  // a lead byte; 0xE3.. starts the CJK blocks
  const std::string fill(width < columns ? columns - width : 0, ' ');
  return right ? fill + text : text + fill;
}

// A row's label in the narration's language: "setnx, 3 instances" / "setnx，3 个实例".
std::string row_label(const DemoRow& row) {
  if (row.lock_name == "no-lock" || row.lock_name == "local-mutex") return std::string(harness::translated(row.label));
  return harness::text("{}, {} instances", row.lock_name, row.instances);
}

bool any_multi_node(const std::vector<DemoRow>& rows) {
  for (const auto& row : rows)
    if (const Generation* g = find_generation(row.lock_name); g != nullptr && g->capabilities.multi_node) return true;
  return false;
}

int print_table(const Flags& flags) {
  const auto rows = demo_rows(flags.lock);
  auto servers = provide_servers(flags, any_multi_node(rows));
  if (!servers) return complain_about(servers.error());
  const CounterSetup base = base_setup(flags, *servers);

  using harness::text;
  using harness::translated;
  std::printf("%s\n", text("seed 004 §11: {} requests, {} at a time, counter starts at 1, {} ms between GET and SET",
                           flags.load.requests, flags.load.concurrency, flags.gap_ms)
                          .c_str());
  std::printf("%s %s %s %s %s %s\n", padded(text("lock"), 34).c_str(), padded(text("expected"), 8, true).c_str(),
              padded(text("got"), 6, true).c_str(), padded(text("requests"), 8, true).c_str(),
              padded(text("article"), 14).c_str(), text("lesson").c_str());
  bool all_as_lesson = true;
  for (const auto& row : rows) {
    const RowResult result = run_row(setup_for(base, *servers, row.lock_name), row, flags.load);
    all_as_lesson = all_as_lesson && result.as_lesson;
    const std::string lesson = text(row.lesson_loses_updates ? "loses updates" : "exactly 1 + requests");
    std::string ran = std::to_string(result.incremented) + "/" + std::to_string(flags.load.requests);
    std::printf("%s %8lld %6lld %8s %s %s\n", padded(row_label(row), 34).c_str(), result.expected, result.got,
                ran.c_str(), padded(std::string(translated(row.article)), 14).c_str(),
                text("{}: {}", lesson, translated(result.as_lesson ? "as the lesson says" : "NOT as the lesson says"))
                    .c_str());
    std::fflush(stdout);
  }
  std::printf("%s\n", text(all_as_lesson ? "verdict: every row as the lesson says"
                                         : "verdict: some row differs from the lesson")
                          .c_str());
  return all_as_lesson ? kOk : kRuntime;
}

int serve_http(const Flags& flags) {
  const std::string lock = flags.lock.empty() ? "no-lock" : flags.lock;
  const Generation* generation = find_generation(lock);
  auto servers = provide_servers(flags, generation != nullptr && generation->capabilities.multi_node);
  if (!servers) return complain_about(servers.error());
  ServeOptions options;
  options.setup = setup_for(base_setup(flags, *servers), *servers, lock);
  options.setup.lock.key = "counter-demo:lock:" + lock;
  options.port = flags.serve_port;
  options.instances = flags.instances;
  for (const auto& server : servers->owned) options.redis_pids.push_back(server->pid());
  return serve(options);
}

std::string lock_names() {
  std::string names;
  for (const auto& g : generations()) {
    if (!names.empty()) names += ", ";
    names += g.name;
  }
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Seed 004 §11's counter demo: 100 requests at concurrency 50 against a counter starting at 1 "
               "(expected 101), without a lock, with a local mutex, and with every Redis generation."};
  Flags flags;
  app.add_option("--requests", flags.load.requests, "Requests in all (ab -n)")->capture_default_str()->check(CLI::Range(1, 100'000));
  app.add_option("--concurrency", flags.load.concurrency, "Requests in flight (ab -c)")->capture_default_str()->check(CLI::Range(1, 50'000));
  app.add_option("--gap-ms", flags.gap_ms, "Pause between GET and SET in each request: overlapping requests lose updates")
      ->capture_default_str()->check(CLI::Range(0, 10'000));
  app.add_option("--lock", flags.lock, "Run only this lock (" + lock_names() + "); with --serve the lock of every instance (default no-lock)");
  app.add_option("--redis", flags.redis, "Use existing servers HOST:PORT[,...] (the first holds the counter; redlock uses all)");
  app.add_option("--nodes", flags.nodes, "Without --redis: masters started for redlock")->capture_default_str()->check(CLI::Range(1, 15));
  app.add_option("--node-timeout-ms", flags.node_timeout_ms, "Redlock: per-node reply timeout (below --ttl-ms)")
      ->capture_default_str()->check(CLI::Range(1, 600'000));
  app.add_option("--wait-ms", flags.wait_ms, "How long a request waits for the lock")->capture_default_str()->check(CLI::Range(1, 600'000));
  app.add_option("--retry-ms", flags.retry_ms, "Pause between attempts of the polling generations")->capture_default_str()->check(CLI::Range(1, 10'000));
  app.add_option("--ttl-ms", flags.ttl_ms, "Lease of the TTL-based generations")->capture_default_str()->check(CLI::Range(1, 600'000));
  auto* serve_option = app.add_option("--serve", flags.serve_port, "Serve GET /test, /counter, /reset on 127.0.0.1:PORT (0: any free port) until SIGINT/SIGTERM")
                           ->check(CLI::Range(0, 65535));
  app.add_option("--instances", flags.instances, "With --serve: instances behind the round-robin front")
      ->capture_default_str()->check(CLI::Range(1, 32))->needs(serve_option);
  app.add_option("--lang", flags.lang, "The table's language: en, or zh (Chinese)")
      ->capture_default_str()->check(CLI::IsMember({"en", "zh"}));
  // Known before the parser runs, so that its errors are told in it too (as a story's, scenario.cpp).
  harness::set_language(harness::language_in_args(argc, argv));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    if (harness::language() != harness::Language::zh) return complain(kUsage, e.what());
    return complain(kUsage, harness::text("the command line is not right ({}); --help lists every option", e.what()));
  }
  if (flags.node_timeout_ms >= flags.ttl_ms)
    return complain(kUsage, harness::text("--node-timeout-ms must be below --ttl-ms"));
  harness::set_language(*harness::language_named(flags.lang));
  if (!flags.lock.empty() && find_generation(flags.lock) == nullptr)
    return complain(kUsage, harness::text("unknown lock '{}' (known: {})", flags.lock, lock_names()));
  try {
    return flags.serve_port >= 0 ? serve_http(flags) : print_table(flags);
  } catch (const std::exception& e) {  // a bug, not an expected outcome: still one line
    return complain(kRuntime, e.what());
  }
}
