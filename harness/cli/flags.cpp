// The shared flag helpers of `locklab` (flags.h): validators, workload flags, the one-line error.
#include "cli/flags.h"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <sstream>

#include "support/text.h"
#include "sweeps/scale.h"

namespace locklab::cli {

using namespace locklab::harness;

int complain(int code, const std::string& message) { return harness::complain("locklab", code, message); }

CLI::Validator within(const Bound& bound) {
  return CLI::Validator(
      [bound](std::string& text) -> std::string {
        double value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, ec] = std::from_chars(text.data(), end, value);
        if (ec != std::errc{} || stop != end) return {};  // not a number: CLI11's conversion says so
        return out_of_bounds(bound, value) ? bound_rule(bound) : std::string{};
      },
      bound_rule(bound).substr(std::string("must be ").size()));  // help: "INT:between 1 and 256"
}

std::optional<std::string> endpoints_problem(const std::string& text) {
  std::string why;
  return parse_endpoints(text, &why) ? std::nullopt : std::optional(why);
}

std::optional<std::string> lock_name_problem(const std::string& lock) {
  if (lock == kAdapterPrefix) return "ext: needs a label (ext:LABEL)";
  if (!lock.starts_with(kAdapterPrefix)) return unknown_lock(lock);
  if (!label_word(std::string_view(lock).substr(kAdapterPrefix.size())))
    return lock + ": a label is letters, digits, '.', '_' and '-'";
  return std::nullopt;
}

void add_adapter_flags(CLI::App& app, AdapterFlags& flags) {
  app.add_option("--adapter", flags.adapters,
                 "Your own adapter (docs/adapters.md) for --lock ext:LABEL, once per label (the command split as a "
                 "shell would, nothing run; its capabilities and step points come from its init_ok); a bare "
                 "'CMD ARGS' is the one unshipped ext:LABEL's")
      ->type_name("LABEL='CMD ARGS'");
  app.add_option("--catalog", flags.catalog,
                 "Your own adapters declared in FILE, in harness/adapters/catalog.json's format (name, adapter, key, "
                 "capabilities, release_window, acquire_gap; paths relative to FILE's folder): their ext:NAME is a "
                 "lock like a shipped one")
      ->type_name("FILE");
}

std::variant<UserAdapters, int> user_adapters_or_exit(const AdapterFlags& flags, const std::vector<std::string>& named) {
  auto user = user_adapters(flags, named);
  if (!user) return complain(kUsage, user.error().message);
  return std::move(user).value();
}

std::optional<std::string> one_endpoint_problem(const std::string& text) {
  std::string why;
  auto endpoints = parse_endpoints(text, &why);
  if (!endpoints) return why;
  if (endpoints->size() != 1) return "takes one HOST:PORT";
  return std::nullopt;
}

std::optional<std::string> step_problem(const std::string& spec) {
  std::string why;
  return parse_step_action(spec, &why) ? std::nullopt : std::optional(why);
}

std::optional<std::string> client_counts_problem(const std::string& text) {
  std::string why;
  return parse_client_counts(text, &why) ? std::nullopt : std::optional(why);
}

CLI::Option* add_workload_flags(CLI::App& app, RunOptions& o) {
  app.add_option("--clients", o.clients, "Number of clients")->check(within(bounds::clients))->capture_default_str();
  auto* ops = app.add_option_function<std::int64_t>(
                     "--ops", [&o](std::int64_t n) { o.ops = n; },
                     "Total acquire attempts across all clients (instead of --duration)")
                  ->check(within(bounds::ops));
  std::ostringstream quick;
  quick << "Seconds to run (compare --quick: " << kQuickDurationS << ")";
  auto* duration =
      app.add_option("--duration", o.duration_s, quick.str())->check(within(bounds::duration_s))->capture_default_str();
  duration->excludes(ops);
  ops->excludes(duration);
  app.add_option("--hold", o.hold_ms, "Milliseconds between GET counter and SET counter (0 allowed)")
      ->check(within(bounds::hold_ms))
      ->capture_default_str();
  app.add_option("--ttl", o.ttl_ms, "Lock lease in ms (TTL generations; gen 5: watchdog timeout)")
      ->check(within(bounds::ttl_ms))
      ->capture_default_str();
  app.add_option("--wait", o.wait_ms, "Bound of each acquire attempt in ms")
      ->check(within(bounds::wait_ms))
      ->capture_default_str();
  app.add_option("--retry", o.retry_ms, "Polling interval in ms for the polling generations")
      ->check(within(bounds::retry_ms))
      ->capture_default_str();
  app.add_option_function<std::string>(
         "--mode", [&o](const std::string& name) { o.mode = parse_mode(name).value(); },
         "Clients as processes (fork) or threads")
      ->check(CLI::IsMember({mode_name(ClientMode::process), mode_name(ClientMode::thread)}))
      ->default_str(mode_name(o.mode));
  app.add_option_function<std::string>(
                       "--redis", [&o](const std::string& text) { o.redis = parse_endpoints(text, nullptr).value(); },
                       "Use these lock servers HOST:PORT[,...] instead of starting our own")
                    ->check(checked_by(endpoints_problem, "HOST:PORT[,...]"));
  app.add_option_function<std::string>(
         "--counter-redis",
         [&o](const std::string& text) { o.counter_redis = parse_endpoints(text, nullptr).value().front(); },
         "With --redis, --sentinel or --cluster: the counter's server (default: the first lock server)")
      ->check(checked_by(one_endpoint_problem, "HOST:PORT"));  // without any of them: validate() says so
  app.add_option("--nodes", o.nodes, "Masters to start for multi-node generations (Redlock)")
      ->check(within(bounds::nodes))
      ->capture_default_str();
  app.add_option("--seed", o.seed, "Seed, recorded for replay (reserved for randomized nemeses)")
      ->capture_default_str();
  app.add_option("--stall", o.stall_ms, "Stall threshold in ms (default 3 x ttl)")->check(within(bounds::stall_ms));
  app.add_option("--wait-replicas", o.wait_replicas,
                 "Failover guard (lua-safe-delete, reentrant-watchdog): WAIT for N replicas after acquiring; "
                 "without --redis, starts N replicas")
      ->check(within(bounds::wait_replicas))
      ->capture_default_str();
  app.add_option("--wait-replicas-timeout", o.wait_replicas_timeout_ms, "WAIT timeout in ms")
      ->check(within(bounds::wait_replicas_timeout_ms))
      ->capture_default_str();
  return duration;
}

namespace {

// The commands, from the subcommands themselves: one list to keep.
std::optional<std::string> unknown_command(const CLI::App& app, int argc, char** argv) {
  std::string commands;
  bool known = false;
  for (const auto* sub : app.get_subcommands({})) {
    commands += (commands.empty() ? "" : ", ") + sub->get_name();
    if (argc > 1 && sub->get_name() == argv[1]) known = true;
  }
  if (argc > 1 && argv[1][0] != '-' && !known)
    return std::string("unknown command '") + argv[1] + "' (expected one of " + commands + "; see: locklab --help)";
  return std::nullopt;
}

}  // namespace

std::optional<int> parse_or_exit(CLI::App& app, int argc, char** argv) {
  if (auto unknown = unknown_command(app, argc, argv)) return complain(kUsage, *unknown);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ValidationError& e) {  // "FLAG: problem", as validate() words it
    return complain(kUsage, e.what());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    return complain(kUsage, std::string(e.what()) + " (see: locklab --help)");
  }
  return std::nullopt;
}

std::string command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    const std::string word = argv[i];
    if (!line.empty()) line += ' ';
    line += harness::shell_word(word);
  }
  return line;
}

}  // namespace locklab::cli
