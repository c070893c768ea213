#include "scenario/story_record.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "support/text.h"

namespace locklab::harness {
namespace {

using nlohmann::json;

// Story times to the microsecond: finer is noise, and the documents stay readable.
double to_us(double ms) { return std::round(ms * 1000.0) / 1000.0; }

std::string recorded(std::string text) {
  text = one_line(std::move(text));
  return text.size() <= kArgRecorded ? text : text.substr(0, kArgRecorded - 3) + "...";
}

}  // namespace

StepDetail StepDetail::of_kind(std::string kind) {
  StepDetail detail;
  detail.kind = std::move(kind);
  return detail;
}

StepDetail StepDetail::observed(std::string key, long long pttl) {
  StepDetail detail;
  detail.observed_key = std::move(key);
  detail.observed_pttl = pttl;
  return detail;
}

StepDetail StepDetail::claiming(json claims) {
  StepDetail detail;
  detail.claims = std::move(claims);
  return detail;
}

json StepDetail::to_json() const {
  json data = {{"kind", kind}};
  if (!claims.empty()) data["claims"] = claims;
  if (!command.empty()) {
    data["command"] = command;
    data["reply"] = reply;
    data["reply_text"] = reply_text;
    data["server"] = server;
    data["sent_at_ms"] = sent_at_ms;
    if (!script.empty()) data["script"] = script;
  }
  if (!observed_key.empty()) {
    data["observed_key"] = observed_key;
    data["observed_pttl"] = observed_pttl;
  }
  return data;
}

StepDetail StepDetail::from_json(const json& data) {
  StepDetail detail;
  if (!data.is_object()) return detail;
  detail.kind = data.value("kind", "narration");
  if (const auto command = data.find("command"); command != data.end() && command->is_array())
    for (const auto& arg : *command)
      if (arg.is_string()) detail.command.push_back(arg.get<std::string>());
  detail.reply = data.value("reply", json(nullptr));
  detail.reply_text = data.value("reply_text", "");
  detail.server = data.value("server", "");
  detail.sent_at_ms = data.value("sent_at_ms", -1.0);
  detail.script = data.value("script", "");
  detail.observed_key = data.value("observed_key", "");
  detail.observed_pttl = data.value("observed_pttl", 0LL);
  if (const auto claims = data.find("claims"); claims != data.end() && claims->is_array()) detail.claims = *claims;
  return detail;
}

redis::Args recorded_args(const redis::Args& request) {
  redis::Args args;
  args.reserve(request.size());
  for (const auto& arg : request) args.push_back(recorded(arg));
  return args;
}

json reply_data(const redis::Reply& reply) {
  if (reply.is_nil()) return nullptr;
  if (reply.is_integer()) return reply.integer();
  if (reply.is_status()) return {{"status", std::string(reply.text())}};
  if (reply.is_error()) return {{"error", recorded(std::string(reply.text()))}};
  if (reply.is_string()) return recorded(reply.string().value_or(""));
  if (reply.is_array()) {
    json items = json::array();
    for (std::size_t i = 0; i < reply.size(); ++i) items.push_back(reply_data(reply.element(i)));
    return items;
  }
  return recorded(reply.describe());
}

double steady_now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void StoryRecord::watch_key(const std::string& key, double ttl_ms, const std::vector<std::string>& servers) {
  lanes_.watch(key, ttl_ms, servers);
}

int StoryRecord::record(double t_ms, double started_at_ms, const std::string& who, const std::string& text,
                        const StepDetail& detail) {
  t_ms = to_us(t_ms);
  const int number = static_cast<int>(steps_.size()) + 1;
  json step = {{"step", number}, {"t_ms", t_ms}, {"who", who}, {"kind", detail.kind}, {"text", text}};
  if (who != "--" && std::find(clients_.begin(), clients_.end(), who) == clients_.end()) clients_.push_back(who);
  if (!detail.command.empty()) {
    step["command"] = detail.command;
    step["reply"] = detail.reply_text;
    step["server"] = detail.server;
    const double sent = detail.sent_at_ms >= 0 ? std::min(t_ms, to_us(detail.sent_at_ms - started_at_ms)) : -1;
    if (sent >= 0) step["sent_ms"] = sent;
    if (auto effect = lanes_.apply_command(t_ms, number, who, detail.command, detail.reply, detail.server, sent,
                                             detail.script))
      step["lock"] = std::move(*effect);
  }
  if (!detail.observed_key.empty())
    if (auto effect = lanes_.apply_observed_pttl(t_ms, number, detail.observed_key, detail.observed_pttl))
      step["lock"] = std::move(*effect);
  if (!detail.claims.empty()) step["claims"] = detail.claims;
  track_section(who, detail.kind, t_ms);
  step["state"] = state_now(t_ms);
  steps_.push_back(std::move(step));
  return number;
}

json StoryRecord::steps() const {
  json steps = steps_;
  for (auto& step : steps) {
    if (step.contains("lock")) step["lock"]["key"] = lanes_.label(step["lock"]["lane"].get<std::size_t>());
    for (auto& key : step["state"]["keys"]) key["key"] = lanes_.label(key["lane"].get<std::size_t>());
  }
  return steps;
}

void StoryRecord::track_section(const std::string& who, const std::string& kind, double t_ms) {
  if (kind == "enter") inside_.emplace(who, t_ms);
  if (kind != "leave") return;
  const auto open = inside_.find(who);
  if (open == inside_.end()) return;
  sections_.push_back({{"who", who}, {"from", open->second}, {"to", t_ms}});
  inside_.erase(open);
}

json StoryRecord::state_now(double t_ms) const {
  json inside = json::array();
  for (const auto& [who, since] : inside_) inside.push_back(who);
  return {{"inside", inside}, {"keys", lanes_.state(t_ms)}};
}

json StoryRecord::view(double end_ms) const {
  end_ms = to_us(end_ms);
  json sections = sections_;
  for (const auto& [who, from] : inside_) sections.push_back({{"who", who}, {"from", from}, {"to", end_ms}, {"open", true}});
  json overlaps = json::array();
  for (std::size_t i = 0; i < sections.size(); ++i)
    for (std::size_t j = i + 1; j < sections.size(); ++j) {
      if (sections[i]["who"] == sections[j]["who"]) continue;
      const double from = std::max(sections[i]["from"].get<double>(), sections[j]["from"].get<double>());
      const double to = std::min(sections[i]["to"].get<double>(), sections[j]["to"].get<double>());
      if (from < to) overlaps.push_back({{"from", from}, {"to", to}});
    }
  return {{"end_ms", end_ms}, {"clients", clients_}, {"sections", sections}, {"overlaps", overlaps},
          {"keys", lanes_.history(end_ms)}};
}

}  // namespace locklab::harness
