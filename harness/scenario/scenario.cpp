#include "scenario/scenario.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iomanip>
#include <optional>
#include <sstream>

#include <CLI/CLI.hpp>

#include "registry.h"

#include "report/story_page.h"
#include "scenario/claims.h"
#include "scenario/step_gate.h"
#include "scenario/step_through.h"
#include "support/files.h"

namespace locklab::harness {
namespace {

struct ParsedArgs {
  StoryLock lock;
  std::string json_path;
  std::string html_path;
  bool quiet = false;
  Language language = Language::en;
  bool step_through = false;
  int pace_ms = 0;
  std::vector<std::string> flags;  // the StoryFlags given
};

// --html, --step-through, --pace: the view of the story (step_through.h, report/story_page.h).
void add_view_options(CLI::App& app, ParsedArgs& parsed) {
  app.add_option("--html", parsed.html_path,
                 "write the story as one self-contained page here: the numbered steps beside a timeline "
                 "(a lane per client and per lock key: holder, lease, owner on the server); "
                 "Next/Back and the arrow keys step through it")
      ->option_text("PAGE");
  auto* step = app.add_flag("--step-through", parsed.step_through,
                            "on a terminal, wait for Enter before each step and before the verdict (the story "
                            "runs at its own speed; only the printing waits). Without a terminal (stdin and "
                            "stdout not both TTYs) it plays straight through");
  app.add_option("--pace", parsed.pace_ms,
                 "show one step every MS milliseconds, with or without a terminal (only the printing waits)")
      ->option_text("MS")
      ->check(CLI::Range(0, 60000));
  app.get_option("--quiet")->excludes(step)->excludes("--pace");
}

// A usage error: "NAME: MESSAGE" on stderr, already in the narration's language, and exit 2.
[[noreturn]] void usage_error(const ScenarioSpec& spec, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", spec.name.c_str(), message.c_str());
  std::exit(2);
}

void check_target(const ScenarioSpec& spec, const std::string& flag, const std::string& path) {
  if (path.empty()) return;
  if (auto problem = output_target_problem(flag, path)) usage_error(spec, translated_error(*problem));
}

// CLI11's own message (an unknown option, a missing value) is English and comes
// from the parser; under --lang zh it is quoted inside a Chinese line, so the
// student still reads what went wrong and where to look.
std::string parse_error_text(const CLI::ParseError& error) {
  if (language() != Language::zh) return error.what();
  return text("the command line is not right ({}); --help lists every option", error.what());
}

std::string lock_names(const ScenarioSpec& spec) {
  std::string names;
  for (const auto& lock : spec.locks) names += (names.empty() ? "" : ", ") + lock.name;
  return names;
}

ParsedArgs parse_args(const ScenarioSpec& spec, int argc, char** argv) {
  // Known before the parser runs, so that its errors are told in it too.
  set_language(language_in_args(argc, argv));
  CLI::App app(spec.story + " (" + spec.source + ")", spec.name);
  app.footer("Exit status: 0 when the story ends as the lesson expects for the chosen lock, 1 when it does not\n"
             "(or could not be told), 2 for a usage error.");
  ParsedArgs parsed;
  std::string lock = spec.locks.front().name;
  app.add_option("--lock", lock, "the generation to tell the story with: " + lock_names(spec))
      ->capture_default_str();
  app.add_option("--json", parsed.json_path,
                 "write the result document here: the verdict and every step as data (locklab.scenario/1)")
      ->option_text("PATH");
  app.add_flag("--quiet", parsed.quiet, "print only the verdict");
  std::string lang = "en";
  app.add_option("--lang", lang, "the narration's language: en, or zh (Chinese; commands and replies stay as they are)")
      ->check(CLI::IsMember({"en", "zh"}))
      ->capture_default_str();
  add_view_options(app, parsed);
  std::vector<char> given(spec.flags.size(), 0);
  for (std::size_t i = 0; i < spec.flags.size(); ++i) {
    app.add_flag_callback("--" + spec.flags[i].name, [&given, i] { given[i] = 1; }, spec.flags[i].help);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::printf("%s", app.help().c_str());
    std::exit(0);
  } catch (const CLI::ParseError& e) {
    usage_error(spec, parse_error_text(e));
  }
  check_target(spec, "--json", parsed.json_path);
  check_target(spec, "--html", parsed.html_path);
  for (const auto& candidate : spec.locks)
    if (candidate.name == lock) parsed.lock = candidate;
  if (parsed.lock.name.empty())
    usage_error(spec, text("--lock {0}: this story is told with {1}", lock, lock_names(spec)));
  parsed.language = *language_named(lang);
  for (std::size_t i = 0; i < spec.flags.size(); ++i) {
    if (!given[i]) continue;
    parsed.flags.push_back(spec.flags[i].name);
    if (spec.flags[i].race_expected) parsed.lock.race_expected = *spec.flags[i].race_expected;
  }
  return parsed;
}

}  // namespace

Scenario::Scenario(ScenarioSpec spec, int argc, char** argv) : spec_(std::move(spec)) {
  ParsedArgs parsed = parse_args(spec_, argc, argv);
  lock_ = parsed.lock;
  json_path_ = parsed.json_path;
  html_path_ = parsed.html_path;
  quiet_ = parsed.quiet;
  flags_given_ = parsed.flags;
  set_language(parsed.language);
  narrator_ = std::make_unique<Narrator>(!quiet_);
  narrator_->story_lock(lock_.name);
  const Playback playback = choose_playback(parsed.step_through, std::chrono::milliseconds{parsed.pace_ms});
  if (!quiet_) print_header(playback == Playback::step_through);
  narrator_->start_playback(playback, std::chrono::milliseconds{parsed.pace_ms});
}

// Where the story is told, the story as told with this lock and these flags,
// and what the lesson expects: in the narration's language.
void Scenario::print_header(bool stepped) const {
  std::string with;
  for (const auto& flag : flags_given_) with += " --" + flag;
  const VerdictWords& words = spec_.words;
  const std::string expects = lock_.race_expected ? text("{}: {}", translated(words.expects), translated(spec_.race))
                                                  : std::string(translated(words.expects_not));
  std::printf("%s -- %s\n%s\n%s\n\n", spec_.name.c_str(), std::string(translated(spec_.source)).c_str(),
              told_story().c_str(), text("lock: {0}{1} (the lesson expects {2})", lock_.name, with, expects).c_str());
  if (stepped)
    std::printf("%s\n\n", text("(step-through: the story runs at its own speed, as without this flag; its steps are "
                               "shown one per Enter, each with the time it really happened at)").c_str());
  std::fflush(stdout);
}

std::string Scenario::told_story() const {
  std::string told(translated(lock_.story.empty() ? spec_.story : lock_.story));
  for (const auto& flag : spec_.flags)
    if (!flag.story.empty() && this->flag(flag.name)) told += text("; {}", translated(flag.story));
  return told;
}

const Capabilities& Scenario::capabilities() const {
  static const Capabilities none;
  const Generation* generation = find_generation(lock_.name);
  return generation != nullptr ? generation->capabilities : none;
}

bool Scenario::runs_script(ScriptRole role) const {
  for (const auto& script : scripts(lock_.name))
    if (script.role == role) return true;
  return false;
}

bool Scenario::flag(std::string_view name) const {
  for (const auto& given : flags_given_)
    if (given == name) return true;
  return false;
}

SingleServerStage Scenario::single_server(std::chrono::milliseconds ttl, std::string key) {
  auto server = must(RedisServer::start(), "starting redis-server");
  auto probe = must(RedisProbe::connect(server->connection_options()), "connecting the observer's probe");
  LockConfig config;
  config.key = std::move(key);
  config.ttl = ttl;
  config.servers = {server->connection_options()};
  // Watched from the start: a forked ProcessActor's locks are made in the child, out of the record's sight.
  narrator_->watch_key(config.key, ttl, {server->endpoint().to_string()});
  // The server's own order of events on the key, before any client touches it (server_log()).
  feed_ = must(KeyspaceFeed::start(server->connection_options(), {config.key}), "starting the keyspace feed");
  return {std::move(server), std::move(probe), std::move(config)};
}

MastersStage Scenario::masters(std::size_t count, std::chrono::milliseconds ttl, std::string key) {
  auto masters = must(start_masters(count), "starting {} masters", count);
  LockConfig config;
  config.key = std::move(key);
  config.ttl = ttl;
  // A story's nodes are down (refused at once) or up, never slow: a per-node timeout of
  // ttl/10 keeps a loaded machine from turning a live node's late reply into a "timed out"
  // vote (the scaled default is 7 ms for a 1.5 s lease; CI once missed A's quorum so).
  config.node_timeout = ttl / 10;
  // The nodes are N1..Nn on every line that went to one of them and on the
  // view's lanes: never A, B, ... (the clients' names).
  std::vector<std::string> endpoints;
  for (std::size_t i = 0; i < masters.size(); ++i) {
    endpoints.push_back(masters[i]->endpoint().to_string());
    narrator_->name_server(endpoints.back(), "N" + std::to_string(i + 1));
    config.servers.push_back(masters[i]->connection_options());
  }
  narrator_->watch_key(config.key, ttl, endpoints);
  return {std::move(masters), std::move(config)};
}

std::unique_ptr<DistributedLock> Scenario::make_lock(const LockConfig& config) { return make_lock(lock_.name, config); }

std::unique_ptr<DistributedLock> Scenario::make_lock(const std::string& name, const LockConfig& config) {
  std::vector<std::string> servers;
  for (const auto& server : config.servers) servers.push_back(server.endpoint.to_string());
  narrator_->watch_key(config.key, config.ttl, servers);
  return must(locklab::make_lock(name, config), "making the lock {}", name);
}

const nlohmann::json& Scenario::server_log() {
  if (!feed_) return server_log_;
  const FeedLog log = feed_->stop();
  feed_.reset();
  nlohmann::json items = nlohmann::json::array();
  for (const auto& item : log.items) {
    if (item.event.empty()) continue;  // a read's marker: stories ask the feed for none
    const double stamp_ms = static_cast<double>(item.stamp_ns) / 1e6;
    items.push_back({{"t_ms", std::round(narrator_->story_ms(stamp_ms) * 1000.0) / 1000.0},
                     {"key", item.key},
                     {"event", item.event}});
  }
  // Complete: the end marker came back, so every event before it was read, and it never went blind.
  server_log_ = {{"node", log.node}, {"complete", log.ended_cleanly && log.blind_from_ns == 0}, {"items", items}};
  return server_log_;
}

bool Scenario::tries_once(std::string who, DistributedLock& lock, const std::function<void()>& after_try) {
  bool holds = false;
  actor(std::move(who), [&] {
    holds = lock.try_acquire(std::chrono::milliseconds{0}) == Acquire::acquired;
    if (after_try) after_try();
    if (holds) narrator_->enter();
  })->join();
  return holds;
}

Scenario::Attempt Scenario::attempt(std::string who, DistributedLock& lock, std::chrono::milliseconds wait,
                                    std::string_view line) {
  Attempt attempt;
  actor(std::move(who), [&] {
    const double from = narrator_->now_ms();
    attempt.outcome = lock.try_acquire(wait);
    attempt.took_ms = narrator_->now_ms() - from;
    std::string said = text(line, translated(to_string(attempt.outcome)));
    if (!lock.last_error().empty()) said += text(" ({})", translated_error(lock.last_error()));
    narrator_->say(said);
    if (attempt.outcome == Acquire::acquired) narrator_->enter();
  })->join();
  return attempt;
}

void Scenario::wait_for(const std::string& what, const Condition& condition, std::chrono::milliseconds timeout) {
  const double from = narrator_->now_ms();
  if (!wait_until(condition, timeout)) die("waited {} ms, but never: {}", timeout.count(), translated(what));
  say("(waited {} ms until {})", fixed(narrator_->now_ms() - from, 1), translated(what));
}

Release Scenario::release(DistributedLock& lock, std::string_view line) {
  const Release outcome = lock.release();
  say(line, translated(to_string(outcome)));
  const bool counted = outcome == Release::still_held || outcome == Release::released;
  if (counted && !reply_convention_told_ && capabilities().release_reply == ReleaseReply::holds_left) {
    reply_convention_told_ = true;
    say("its release script answers the holds left, so 1 means still held and 0 released: the reverse of seed 004 "
        "§8's unlock script (and of Redisson's, seed 000 §二.3.1), where 0 means one hold fewer and 1 released");
  }
  return outcome;
}

int Scenario::finish(bool race_happened, const std::string& detail) {
  redis::set_traffic_observer(nullptr);  // the story is over: teardown traffic (servers stopping) is not part of it
  (void)server_log();                    // the feed stops while its server still runs
  const bool as_expected = race_happened == lock_.race_expected;
  const VerdictWords& words = spec_.words;
  const std::string observed = race_happened
                                   ? text("{}: {}", translated(words.happened), translated(spec_.race))
                                   : std::string(translated(words.not_happened));
  const std::string verdict = as_expected ? (race_happened ? words.shown : words.holds) : "unexpected";
  if (!json_path_.empty() || !html_path_.empty())
    write_outputs({{"schema", kScenarioSchema},   {"scenario", spec_.name},
                   {"source", spec_.source},      {"story", told_story()},
                   {"lang", language_code(language())},
                   // The same four in the story's language, for the page's header (report/story_page.cpp).
                   {"source_text", translated(spec_.source)}, {"race_text", translated(spec_.race)},
                   {"verdict_text", translated(verdict)},     {"detail_text", translated(detail)},
                   {"lock", lock_.name},          {"race", spec_.race},
                   {"race_expected", lock_.race_expected}, {"race_happened", race_happened},
                   {"verdict", verdict},          {"detail", detail},
                   {"flags", flags_given_},       {"steps", narrator_->steps()},
                   {"timeline", narrator_->timeline()}, {"view", narrator_->view()},
                   {"server_log", server_log()}});
  narrator_->finish_playback();  // the last steps on the screen, then the verdict
  std::printf("%s%s\n", quiet_ ? "" : "\n",
              text("verdict: {0} ({1}) -- {2}; {3}", translated(verdict), lock_.name, observed, translated(detail))
                  .c_str());
  return as_expected ? 0 : 1;
}

// The page first: the document appears last, so its presence means both are complete.
void Scenario::write_outputs(const nlohmann::json& document) {
  if (!html_path_.empty())
    if (auto written = write_file_atomically(html_path_, story_page(document)); !written)
      die("{}", translated_error(written.error().message));
  if (!json_path_.empty())
    if (auto written = write_json_atomically(json_path_, document); !written)
      die("{}", translated_error(written.error().message));
}

void Scenario::die_told(const std::string& why) {
  narrator_->flush_playback();  // the steps so far, at once: the reason comes after them
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s\n", spec_.name.c_str(), why.c_str());
  // Actor threads may still run: no static destructors under their feet. The
  // servers die with this process (the launcher's PR_SET_PDEATHSIG).
  std::_Exit(1);
}

void say_release_begins(Scenario& story, const std::string& who, double asked_ms, std::chrono::milliseconds lease) {
  const double late = story.narrator().now_ms() - asked_ms;
  const nlohmann::json acquired = claim::last(who, {{"effect", "acquired"}});
  if (late < static_cast<double>(lease.count()) / 2)
    return story.say_claiming({claim::within_lease(claim::this_step(), acquired)},
                              "its work is short; it begins its release well within the {} ms lease", lease.count());
  story.say_claiming({claim::before(acquired, claim::this_step())},
                     "its work is short, but this machine is loaded: it begins its release {} ms after it asked for "
                     "the lock",
                     fixed(late, 1));
}

SecondTry b_tries_after_crash(Scenario& story, DistributedLock& b_lock, std::chrono::milliseconds patience,
                              RedisProbe& probe, const std::string& key, const std::string& gives_up) {
  bool got_in = false;
  double waited_ms = 0;
  auto b = story.actor("B", [&] {
    const double from = story.narrator().now_ms();
    got_in = b_lock.try_acquire(patience) == Acquire::acquired;
    waited_ms = story.narrator().now_ms() - from;
    if (!got_in) {
      story.say(gives_up);
      return;
    }
    story.narrator().enter();
    story.narrator().leave();
    story.release(b_lock);
  });
  b->join();
  const auto still = story.observe([&] { return probe.pttl(key); });
  if (!got_in && still != -1) story.die("B stayed out although the key has a TTL");
  return {got_in, static_cast<long long>(waited_ms)};
}

}  // namespace locklab::harness
