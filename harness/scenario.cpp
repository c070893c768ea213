#include "scenario.h"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <filesystem>
#include <iomanip>
#include <optional>
#include <sstream>

#include "registry.h"
#include "report.h"
#include "files.h"
#include "step_gate.h"

namespace locklab::harness {
namespace {

thread_local std::string t_actor;

constexpr std::size_t kMaxArgShown = 24;  // tokens and SHAs are long; the story needs their start

std::string shorten(std::string arg) {
  for (char& c : arg)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return arg.size() <= kMaxArgShown ? arg : arg.substr(0, kMaxArgShown - 3) + "...";
}

std::string command_text(const redis::Args& request) {
  std::string text;
  for (const auto& arg : request) {
    if (!text.empty()) text += ' ';
    text += shorten(arg);
  }
  return text;
}

std::string reply_text(const redis::Reply& reply) {
  if (reply.is_nil()) return "(nil)";
  if (reply.is_integer()) return "(integer) " + std::to_string(reply.integer());
  if (reply.is_status()) return std::string(reply.text());
  if (reply.is_error()) return "(error) " + std::string(reply.text());
  if (reply.is_string()) return "\"" + shorten(reply.string().value_or("")) + "\"";
  if (reply.is_array()) {
    std::string text = "[";
    for (std::size_t i = 0; i < reply.size(); ++i) text += (i ? ", " : "") + reply_text(reply.element(i));
    return text + "]";
  }
  return reply.describe();
}

std::string fixed(double value, int decimals) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(decimals) << value;
  return out.str();
}

std::string who_of(const std::string& actor) { return actor.empty() ? "(background)" : actor; }

struct ParsedArgs {
  StoryLock lock;
  std::string json_path;
  bool quiet = false;
  std::vector<std::string> flags;  // the StoryFlags given
};

std::string lock_names(const ScenarioSpec& spec) {
  std::string names;
  for (const auto& lock : spec.locks) names += (names.empty() ? "" : ", ") + lock.name;
  return names;
}

ParsedArgs parse_args(const ScenarioSpec& spec, int argc, char** argv) {
  CLI::App app(spec.story + " (" + spec.source + ")", spec.name);
  app.footer("Exit status: 0 when the story ends as the lesson expects for the chosen lock, 1 when it does not\n"
             "(or could not be told), 2 for a usage error.");
  ParsedArgs parsed;
  std::string lock = spec.locks.front().name;
  app.add_option("--lock", lock, "the generation to tell the story with: " + lock_names(spec))
      ->capture_default_str();
  app.add_option("--json", parsed.json_path, "write the result document here (and the timeline as PATH.svg)");
  app.add_flag("--quiet", parsed.quiet, "print only the verdict");
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
    std::fprintf(stderr, "%s: %s\n", spec.name.c_str(), e.what());
    std::exit(2);
  }
  if (!parsed.json_path.empty())
    if (auto problem = json_target_problem(parsed.json_path)) {
      std::fprintf(stderr, "%s: %s\n", spec.name.c_str(), problem->c_str());
      std::exit(2);
    }
  for (const auto& candidate : spec.locks)
    if (candidate.name == lock) parsed.lock = candidate;
  if (parsed.lock.name.empty()) {
    std::fprintf(stderr, "%s: --lock %s: this story is told with %s\n", spec.name.c_str(), lock.c_str(),
                 lock_names(spec).c_str());
    std::exit(2);
  }
  for (std::size_t i = 0; i < spec.flags.size(); ++i) {
    if (!given[i]) continue;
    parsed.flags.push_back(spec.flags[i].name);
    if (spec.flags[i].race_expected) parsed.lock.race_expected = *spec.flags[i].race_expected;
  }
  return parsed;
}

}  // namespace

ActorName::ActorName(std::string name) : previous_(std::exchange(t_actor, std::move(name))) {}
ActorName::~ActorName() { t_actor = std::move(previous_); }
const std::string& current_actor() { return t_actor; }

Narrator::Narrator(bool print)
    : print_(print), start_(std::chrono::steady_clock::now()), director_(std::this_thread::get_id()) {
  redis::set_traffic_observer(this);
}

Narrator::~Narrator() { redis::set_traffic_observer(nullptr); }

std::unique_ptr<Narrator> Narrator::forwarding_to(int fd) {
  auto narrator = std::make_unique<Narrator>(false);
  narrator->forward_fd_ = fd;
  return narrator;
}

// One line per step, under PIPE_BUF, so each write() is atomic: the child's
// threads (its actor, its watchdog) never interleave inside a line.
void Narrator::forward(char kind, const std::string& who, const std::string& text) {
  std::string line;
  line += kind;
  line += '\t' + who + '\t' + text.substr(0, 1000);
  for (std::size_t i = 1; i < line.size(); ++i)
    if (line[i] == '\n') line[i] = ' ';
  line += '\n';
  for (std::size_t written = 0; written < line.size();) {
    const ssize_t n = ::write(forward_fd_, line.data() + written, line.size() - written);
    if (n <= 0) return;  // the parent is gone: nobody to tell
    written += static_cast<std::size_t>(n);
  }
}

void Narrator::relay(char kind, const std::string& who, const std::string& text) {
  std::lock_guard lock(mutex_);
  if (kind == 'E') enter_as(who);
  else if (kind == 'L') leave_as(who);
  else emit(who, text);
}

double Narrator::now_ms() const {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
}

void Narrator::emit(const std::string& who, const std::string& text) {
  if (forward_fd_ >= 0) return forward('S', who, text);
  const double at = now_ms();
  const int number = next_step_++;
  steps_.push_back({{"step", number}, {"t_ms", at}, {"who", who}, {"text", text}});
  if (print_) {
    std::printf("%3d  %9s ms  %-12s %s\n", number, fixed(at, 1).c_str(), who.c_str(), text.c_str());
    std::fflush(stdout);
  }
}

void Narrator::say(std::string text) {
  std::lock_guard lock(mutex_);
  emit(current_actor().empty() ? "--" : current_actor(), text);
}

int Narrator::lane_of(const std::string& who) {
  for (std::size_t i = 0; i < lanes_.size(); ++i)
    if (lanes_[i] == who) return static_cast<int>(i);
  lanes_.push_back(who);
  return static_cast<int>(lanes_.size()) - 1;
}

void Narrator::enter() {
  std::lock_guard lock(mutex_);
  enter_as(who_of(current_actor()));
}

void Narrator::leave() {
  std::lock_guard lock(mutex_);
  leave_as(who_of(current_actor()));
}

void Narrator::enter_as(const std::string& who) {
  if (forward_fd_ >= 0) return forward('E', who, "");
  lane_of(who);
  open_sections_[who] = now_ms();
  emit(who, "enters the critical section");
}

void Narrator::leave_as(const std::string& who) {
  if (forward_fd_ >= 0) return forward('L', who, "");
  const auto open = open_sections_.find(who);
  if (open == open_sections_.end()) return;
  sections_.push_back({lane_of(who), open->second, now_ms()});
  open_sections_.erase(open);
  emit(who, "leaves the critical section");
}

nlohmann::json Narrator::timeline() const {
  std::lock_guard lock(mutex_);
  nlohmann::json sections = sections_;
  const double end = now_ms();
  for (const auto& [who, from] : open_sections_) {  // still inside at the end: the bar runs to the end
    for (std::size_t i = 0; i < lanes_.size(); ++i)
      if (lanes_[i] == who) sections.push_back({static_cast<int>(i), from, end});
  }
  nlohmann::json overlaps = nlohmann::json::array();
  for (std::size_t i = 0; i < sections.size(); ++i)
    for (std::size_t j = i + 1; j < sections.size(); ++j) {
      const double from = std::max(sections[i][1].get<double>(), sections[j][1].get<double>());
      const double to = std::min(sections[i][2].get<double>(), sections[j][2].get<double>());
      if (from < to && sections[i][0] != sections[j][0]) overlaps.push_back({from, to});
    }
  return {{"clients", std::max<std::size_t>(1, lanes_.size())},
          {"labels", lanes_},
          {"sections", sections},
          {"overlaps", overlaps}};
}

nlohmann::json Narrator::steps() const {
  std::lock_guard lock(mutex_);
  return steps_;
}

// The director's own traffic (starting servers, polling conditions) is not the story.
bool Narrator::watched() const { return std::this_thread::get_id() != director_ || !current_actor().empty(); }

void Narrator::sent(const redis::Endpoint& to, const redis::Args& request) {
  if (!watched()) return;
  std::lock_guard lock(mutex_);
  pending_[{std::this_thread::get_id(), to.to_string()}].push_back(command_text(request));
}

void Narrator::received(const redis::Endpoint& from, const redis::Reply* reply, const Error* error) {
  if (!watched()) return;
  std::lock_guard lock(mutex_);
  auto& queue = pending_[{std::this_thread::get_id(), from.to_string()}];
  const std::string answer = reply != nullptr ? reply_text(*reply) : "!! " + error->message;
  const std::string who = who_of(current_actor());
  if (queue.empty()) {  // nothing asked: a pushed pub/sub message
    emit(who, "<- " + from.to_string() + " pushes " + answer);
    return;
  }
  const std::string request = std::move(queue.front());
  queue.pop_front();
  emit(who, request + "  =>  " + answer);
}

Actor::Actor(Narrator& narrator, std::string name, std::function<void()> body)
    : thread_([&narrator, name = std::move(name), body = std::move(body)] {
        ActorName scope(name);
        try {
          body();
        } catch (const SimulatedCrash& crash) {
          narrator.say(std::string(crash.what()) + ": the process is gone, nothing was released");
        }
      }) {}

Actor::~Actor() { join(); }

void Actor::join() {
  if (thread_.joinable()) thread_.join();
}

Scenario::Scenario(ScenarioSpec spec, int argc, char** argv) : spec_(std::move(spec)) {
  ParsedArgs parsed = parse_args(spec_, argc, argv);
  lock_ = parsed.lock;
  json_path_ = parsed.json_path;
  quiet_ = parsed.quiet;
  flags_given_ = parsed.flags;
  narrator_ = std::make_unique<Narrator>(!quiet_);
  if (!quiet_) {
    std::string with;
    for (const auto& flag : flags_given_) with += " --" + flag;
    std::printf("%s -- %s\n%s\nlock: %s%s (the lesson expects %s)\n\n", spec_.name.c_str(), spec_.source.c_str(),
                spec_.story.c_str(), lock_.name.c_str(), with.c_str(),
                lock_.race_expected ? ("the race: " + spec_.race).c_str() : "the race not to happen");
    std::fflush(stdout);
  }
}

bool Scenario::flag(std::string_view name) const {
  for (const auto& given : flags_given_)
    if (given == name) return true;
  return false;
}

SingleServerStage Scenario::single_server(std::chrono::milliseconds ttl, std::string key) {
  auto server = must(RedisServer::start(), "redis-server");
  auto probe = must(RedisProbe::connect(server->connection_options()), "probe");
  LockConfig config;
  config.key = std::move(key);
  config.ttl = ttl;
  config.servers = {server->connection_options()};
  return {std::move(server), std::move(probe), std::move(config)};
}

MastersStage Scenario::masters(std::size_t count, std::chrono::milliseconds ttl, std::string key) {
  auto masters = must(start_masters(count), std::to_string(count) + " masters");
  LockConfig config;
  config.key = std::move(key);
  config.ttl = ttl;
  for (const auto& master : masters) config.servers.push_back(master->connection_options());
  return {std::move(masters), std::move(config)};
}

std::unique_ptr<DistributedLock> Scenario::make_lock(const LockConfig& config) { return make_lock(lock_.name, config); }

std::unique_ptr<DistributedLock> Scenario::make_lock(const std::string& name, const LockConfig& config) {
  return must(locklab::make_lock(name, config), "lock " + name);
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

void Scenario::wait_for(const std::string& what, const Condition& condition, std::chrono::milliseconds timeout) {
  const double from = narrator_->now_ms();
  if (!wait_until(condition, timeout)) die("waited " + std::to_string(timeout.count()) + " ms, but never: " + what);
  narrator_->say("(waited " + fixed(narrator_->now_ms() - from, 1) + " ms until " + what + ")");
}

int Scenario::finish(bool race_happened, const std::string& detail) {
  redis::set_traffic_observer(nullptr);  // the story is over: teardown traffic (servers stopping) is not part of it
  const bool as_expected = race_happened == lock_.race_expected;
  const std::string observed = race_happened ? "the race happened: " + spec_.race : "the race did not happen";
  const std::string verdict = as_expected ? (race_happened ? "race shown" : "fix holds") : "unexpected";
  std::printf("%sverdict: %s (%s) -- %s; %s\n", quiet_ ? "" : "\n", verdict.c_str(), lock_.name.c_str(),
              observed.c_str(), detail.c_str());
  if (!json_path_.empty()) {
    const nlohmann::json timeline = narrator_->timeline();
    const nlohmann::json document = {{"schema", kScenarioSchema},   {"scenario", spec_.name},
                                     {"source", spec_.source},      {"story", spec_.story},
                                     {"lock", lock_.name},          {"race", spec_.race},
                                     {"race_expected", lock_.race_expected}, {"race_happened", race_happened},
                                     {"verdict", verdict},          {"detail", detail},
                                     {"flags", flags_given_},
                                     {"steps", narrator_->steps()}, {"timeline", timeline}};
    // The SVG first: the document appears last, so its presence means both are complete.
    if (auto written = write_file_atomically(json_path_ + ".svg", standalone_svg(render_timeline(timeline))); !written)
      die(written.error().message);
    if (auto written = write_json_atomically(json_path_, document); !written) die(written.error().message);
  }
  return as_expected ? 0 : 1;
}

void Scenario::die(const std::string& why) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s\n", spec_.name.c_str(), why.c_str());
  // Actor threads may still run: no static destructors under their feet. The
  // servers die with this process (the launcher's PR_SET_PDEATHSIG).
  std::_Exit(1);
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
    story.say("releases: " + std::string(to_string(b_lock.release())));
  });
  b->join();
  const auto still = story.observe([&] { return probe.pttl(key); });
  if (!got_in && still != -1) story.die("B stayed out although the key has a TTL");
  return {got_in, std::to_string(static_cast<long long>(waited_ms)) + " ms"};
}

}  // namespace locklab::harness
