#include "scenario/narrator.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <iomanip>
#include <optional>
#include <sstream>

#include "redis/sha1.h"

#include "scenario/claims.h"
#include "scenario/messages.h"
#include "scenario/step_gate.h"
#include "support/text.h"

namespace locklab::harness {
namespace {

thread_local std::string t_actor;

constexpr std::size_t kMaxArgShown = 24;  // tokens and SHAs are long; the story needs their start

std::string shorten(std::string arg) {
  arg = one_line(std::move(arg));
  for (char& c : arg)
    if (c == '\t') c = ' ';
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

// A script's SHA-1, as the generations list their scripts (impls/registry.h): EVALSHA names it,
// an EVAL's is its body's. "" for any other command.
std::string script_sha1(const redis::Args& request) {
  if (request.size() < 2) return "";
  std::string name = request[0];
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (name == "EVALSHA") return request[1];
  return name == "EVAL" ? redis::sha1_hex(request[1]) : "";
}

std::string reply_text(const redis::Reply& reply) {
  if (reply.is_nil()) return "(nil)";
  if (reply.is_integer()) return "(integer) " + std::to_string(reply.integer());
  if (reply.is_status()) return std::string(reply.text());
  if (reply.is_error()) return "(error) " + std::string(reply.text());
  if (reply.is_string()) {
    // Appended piece by piece: "\"" + string trips GCC 12's -Wrestrict false positive here.
    std::string quoted = "\"";
    quoted += shorten(reply.string().value_or(""));
    quoted += '"';
    return quoted;
  }
  if (reply.is_array()) {
    std::string text = "[";
    for (std::size_t i = 0; i < reply.size(); ++i) text += (i ? ", " : "") + reply_text(reply.element(i));
    return text + "]";
  }
  return reply.describe();
}


std::string who_of(const std::string& actor) { return actor.empty() ? "(background)" : actor; }

// A pushed message's kind is its first element: ["message", channel, payload].
std::optional<std::string> push_kind(const redis::Reply* reply) {
  if (reply == nullptr || !reply->is_array() || reply->size() == 0) return std::nullopt;
  const redis::Reply first = reply->element(0);
  if (!first.is_string()) return std::nullopt;
  return first.string();
}

LedgerReply ledger_reply(const redis::Reply& reply) {
  using Kind = LedgerReply::Kind;
  if (reply.is_nil()) return {Kind::nil, 0};
  if (reply.is_integer()) return {Kind::integer, reply.integer()};
  if (reply.is_status()) return {Kind::status, 0};
  if (reply.is_string()) return {Kind::string, 0};
  if (reply.is_error()) return {Kind::error, 0};
  return {Kind::other, 0};
}

}  // namespace

ActorName::ActorName(std::string name) : previous_(std::exchange(t_actor, std::move(name))) {}
ActorName::~ActorName() { t_actor = std::move(previous_); }
const std::string& current_actor() { return t_actor; }

Narrator::Narrator(bool print)
    : print_(print),
      start_(std::chrono::steady_clock::now()),
      start_ms_(std::chrono::duration<double, std::milli>(start_.time_since_epoch()).count()),
      director_(std::this_thread::get_id()) {
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
  line += '\t' + who + '\t' + text.substr(0, kind == 'D' ? std::string::npos : 1000);  // 'D': whole JSON
  for (std::size_t i = 1; i < line.size(); ++i)
    if (line[i] == '\n') line[i] = ' ';
  line += '\n';
  for (std::size_t written = 0; written < line.size();) {
    const ssize_t n = ::write(forward_fd_, line.data() + written, line.size() - written);
    if (n <= 0) return;  // the parent is gone: nobody to tell
    written += static_cast<std::size_t>(n);
  }
}

// A step with its detail goes up as one JSON line; one too long for an atomic
// write goes as its text alone (the view then lacks what it did).
void Narrator::forward_detail(const std::string& who, const std::string& text, const StepDetail& detail) {
  const std::string payload = nlohmann::json{{"text", text}, {"detail", detail.to_json()}}.dump();
  if (payload.size() + who.size() + 4 > 4000) return forward('S', who, text);
  forward('D', who, payload);
}

void Narrator::relay(char kind, const std::string& who, const std::string& text) {
  std::lock_guard lock(mutex_);
  if (kind == 'E') enter_as(who);
  else if (kind == 'L') leave_as(who);
  else if (kind != 'D') emit(who, text);
  else {
    const auto data = nlohmann::json::parse(text, nullptr, false);
    if (data.is_discarded() || !data.is_object()) return emit(who, text);
    emit(who, data.value("text", ""), StepDetail::from_json(data.value("detail", nlohmann::json::object())));
  }
}

double Narrator::story_ms(double steady_ms) const { return steady_ms - start_ms_; }

double Narrator::now_ms() const {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
}

void Narrator::emit(const std::string& who, const std::string& text, const StepDetail& detail) {
  if (forward_fd_ >= 0) {
    const bool plain = detail.kind == "narration" && detail.observed_key.empty() && detail.claims.empty();
    return plain ? forward('S', who, text) : forward_detail(who, text, detail);
  }
  const double at = now_ms();
  const int number = record_.record(at, start_ms_, who, text, detail);
  last_step_ = number;
  if (!print_) return;
  char prefix[64];
  std::snprintf(prefix, sizeof prefix, "%3d  %9s ms  ", number, fixed(at, 1).c_str());
  std::string line = prefix + who;
  line.append(who.size() < 12 ? 12 - who.size() : 0, ' ');  // as printf's %-12s
  printer_.show(line + ' ' + text);
}

void Narrator::say(std::string text, const StepDetail& detail) {
  std::lock_guard lock(mutex_);
  emit(current_actor().empty() ? "--" : current_actor(), text, detail);
}

void Narrator::crashed(const std::string& point) {
  std::lock_guard lock(mutex_);
  const std::string who = current_actor().empty() ? "--" : current_actor();
  ledger_.crashed(who);
  // A death is a claim the narration test holds: nothing of `who` follows it.
  emit(who, text("crashed at {}: the process is gone, nothing was released", point),
       StepDetail::claiming(nlohmann::json::array({claim::dead(who)})));
}

void Narrator::name_server(const std::string& endpoint, std::string name) {
  std::lock_guard lock(mutex_);
  record_.name_server(endpoint, name);
  server_names_[endpoint] = std::move(name);
}

std::string Narrator::server_name(const std::string& endpoint) const {
  std::lock_guard lock(mutex_);
  const auto found = server_names_.find(endpoint);
  return found == server_names_.end() ? endpoint : found->second;
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
  ledger_.entered(who);
  emit(who, text("enters the critical section"), StepDetail::of_kind("enter"));
}

void Narrator::leave_as(const std::string& who) {
  if (forward_fd_ >= 0) return forward('L', who, "");
  const auto open = open_sections_.find(who);
  if (open == open_sections_.end()) return;
  sections_.push_back({lane_of(who), open->second, now_ms()});
  open_sections_.erase(open);
  ledger_.left(who);
  emit(who, text("leaves the critical section"), StepDetail::of_kind("leave"));
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
  return record_.steps();
}

nlohmann::json Narrator::view() const {
  std::lock_guard lock(mutex_);
  return record_.view(now_ms());
}

void Narrator::watch_key(const std::string& key, std::chrono::milliseconds ttl, const std::vector<std::string>& servers) {
  std::lock_guard lock(mutex_);
  record_.watch_key(key, static_cast<double>(ttl.count()), servers);
}

void Narrator::story_lock(std::string generation) {
  std::lock_guard lock(mutex_);
  record_.story_lock(std::move(generation));
}

// The printer is not under mutex_: finishing waits for the presenter, never for a narrating thread.
void Narrator::start_playback(Playback playback, std::chrono::milliseconds pace) {
  if (print_) printer_.start(playback, pace);
}
void Narrator::finish_playback() { printer_.finish(); }
void Narrator::flush_playback() { printer_.flush_now(); }

int Narrator::round_trips(const std::string& who) const {
  std::lock_guard lock(mutex_);
  const auto found = round_trips_.find(who);
  return found == round_trips_.end() ? 0 : found->second;
}

bool Narrator::saw_push(const std::string& kind) const {
  std::lock_guard lock(mutex_);
  return pushes_.count(kind) > 0;
}

// The director's own traffic (starting servers, polling conditions) is not the story.
bool Narrator::watched() const { return std::this_thread::get_id() != director_ || !current_actor().empty(); }

void Narrator::sent(const redis::Endpoint& to, const redis::Args& request) {
  if (!watched()) return;
  std::lock_guard lock(mutex_);
  pending_[{std::this_thread::get_id(), to.to_string()}].push_back(
      {command_text(request), request, recorded_args(request), steady_now_ms()});
}

void Narrator::received(const redis::Endpoint& from, const redis::Reply* reply, const Error* error) {
  if (!watched()) return;
  std::lock_guard lock(mutex_);
  auto& queue = pending_[{std::this_thread::get_id(), from.to_string()}];
  const std::string answer = reply != nullptr ? reply_text(*reply) : "!! " + error->message;
  const std::string who = who_of(current_actor());
  const auto named = server_names_.find(from.to_string());
  const std::string node = named == server_names_.end() ? "" : "[" + named->second + "] ";
  if (queue.empty()) {  // nothing asked: a pushed pub/sub message
    if (const auto kind = push_kind(reply)) pushes_.insert(*kind);
    emit(who, "<- " + from.to_string() + " pushes " + answer, StepDetail::of_kind("push"));
    return;
  }
  PendingRequest pending = std::move(queue.front());
  queue.pop_front();
  ++round_trips_[who];
  StepDetail detail = StepDetail::of_kind("command");
  detail.command = std::move(pending.recorded);
  detail.reply = reply != nullptr ? reply_data(*reply) : nlohmann::json{{"failed", error->message}};
  detail.reply_text = answer;
  detail.server = from.to_string();
  detail.sent_at_ms = pending.sent_at_ms;
  detail.script = script_sha1(pending.request);
  emit(who, node + pending.text + "  =>  " + answer, detail);
  if (reply == nullptr || forward_fd_ >= 0) return;  // a child's ledger would not know the parent's step numbers
  if (auto remark = ledger_.answered(who, from.to_string(), pending.request, ledger_reply(*reply), last_step_)) {
    StepDetail detail = StepDetail::narration();
    if (const auto lease = ledger_.last_claim())  // "did not expire": the DEL came within the writer's lease
      detail.claims.push_back(claim::within_lease(claim::step(lease->deleted), claim::step(lease->written)));
    emit("--", *remark, detail);
  }
}

Actor::Actor(Narrator& narrator, std::string name, std::function<void()> body)
    : thread_([&narrator, name = std::move(name), body = std::move(body)] {
        ActorName scope(name);
        try {
          body();
        } catch (const SimulatedCrash& crash) {
          narrator.crashed(crash.point);
        }
      }) {}

Actor::~Actor() { join(); }

void Actor::join() {
  if (thread_.joinable()) thread_.join();
}

}  // namespace locklab::harness
