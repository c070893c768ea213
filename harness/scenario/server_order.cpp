#include "scenario/server_order.h"

#include <optional>
#include <string>
#include <vector>

namespace locklab::harness {
namespace {

using nlohmann::json;

const json* find_step(const json& steps, int number) {
  if (number < 1 || number > static_cast<int>(steps.size())) return nullptr;
  const json& step = steps[static_cast<std::size_t>(number - 1)];
  return step.value("kind", "") == "command" && step.contains("sent_ms") ? &step : nullptr;
}

std::string effect_of(const json& step) {
  return step.contains("lock") ? step["lock"].value("effect", "") : "";
}

bool removal(const std::string& event) { return event == "del" || event == "expired" || event == "evicted"; }

// Indices into the log of the key's creations: the first event after the start or after a removal.
std::vector<std::size_t> creations(const json& items) {
  std::vector<std::size_t> found;
  bool absent = true;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string event = items[i].value("event", "");
    if (removal(event)) absent = true;
    else if (absent) {
      found.push_back(i);
      absent = false;
    }
  }
  return found;
}

// Which acquire of the key step `number` is (0-based), if the acquires' order is known.
std::optional<std::size_t> acquire_index(const json& steps, int number) {
  std::optional<std::size_t> index;
  double last_reply = -1;
  std::size_t count = 0;
  for (const auto& step : steps) {
    if (effect_of(step).rfind("acquired", 0) != 0) continue;
    if (step.value("sent_ms", -1.0) < last_reply) return std::nullopt;  // two acquires in flight at once
    last_reply = step.value("t_ms", 0.0);
    if (step.value("step", 0) == number) index = count;
    ++count;
  }
  return index;
}

// True when refusal `refused` provably ran after acquire `acquired` (the second rule).
bool refused_after(const json& steps, const json& log, const json& refused, const json& acquired) {
  if (!log.is_object() || !log.value("complete", false)) return false;
  const auto k = acquire_index(steps, acquired.value("step", 0));
  if (!k) return false;
  const json& items = log["items"];
  const auto made = creations(items);
  if (*k >= made.size()) return false;
  const double sent = refused.value("sent_ms", 0.0);
  std::optional<std::size_t> freed;  // the last removal logged before the refused request left
  for (std::size_t i = 0; i < items.size(); ++i)
    if (removal(items[i].value("event", "")) && items[i].value("t_ms", 0.0) <= sent) freed = i;
  if (!freed) return false;
  for (const std::size_t creation : made)
    if (creation > *freed) return creation >= made[*k];  // the refusal ran after this creation
  return false;
}

}  // namespace

ServerOrder server_order(const json& steps, const json& log, int first, int then) {
  const json* a = find_step(steps, first);
  const json* b = find_step(steps, then);
  if (a == nullptr || b == nullptr) return ServerOrder::unknown;
  if ((*a)["t_ms"].get<double>() <= (*b)["sent_ms"].get<double>()) return ServerOrder::first_ran_first;
  if ((*b)["t_ms"].get<double>() <= (*a)["sent_ms"].get<double>()) return ServerOrder::then_ran_first;
  const auto starts = [](const json& step, const char* word) { return effect_of(step).rfind(word, 0) == 0; };
  if (starts(*a, "acquired") && starts(*b, "refused") && refused_after(steps, log, *b, *a))
    return ServerOrder::first_ran_first;
  if (starts(*b, "acquired") && starts(*a, "refused") && refused_after(steps, log, *a, *b))
    return ServerOrder::then_ran_first;
  return ServerOrder::unknown;
}

}  // namespace locklab::harness
