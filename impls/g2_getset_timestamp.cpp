#include "g2_getset_timestamp.h"

#include <charconv>

namespace locklab {

std::optional<long long> parse_millis(std::string_view text) {
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

LockResult GetsetTimestampLock::create(const LockConfig& config) {
  if (auto problem = invalid_config(config)) return config_error("getset-timestamp", *problem);
  return std::unique_ptr<DistributedLock>(new GetsetTimestampLock(config));
}

GetsetTimestampLock::GetsetTimestampLock(const LockConfig& config)
    : SingleServerLock(config), clock_(config.clock), ttl_(config.ttl) {}

Acquire GetsetTimestampLock::try_acquire(std::chrono::milliseconds wait) {
  return poll(wait, [this] { return attempt(); });
}

// One round of the seed's while loop.
std::optional<Acquire> GetsetTimestampLock::attempt() {
  const std::string expires = std::to_string(clock_->now_ms().count() + ttl_.count() + 1);
  auto created = call({"SETNX", key_, expires});
  if (!created) return acquiring_command_failed(created.error());
  if (created->integer() == 1) {
    held_ = true;
    return Acquire::acquired;
  }

  auto current = call({"GET", key_});
  if (!current) return probing_command_failed(current.error());
  if (current->is_nil()) return std::nullopt;  // released meanwhile: next round's SETNX
  const std::string current_value(current->text());
  const auto current_expiry = parse_millis(current_value);
  if (!current_expiry)
    return fail(Acquire::error,
                "getset-timestamp: " + key_ + " holds '" + current_value + "', not a timestamp");
  if (*current_expiry >= clock_->now_ms().count()) return std::nullopt;  // still valid: busy

  step_("after-get-before-getset");
  auto previous = call({"GETSET", key_, expires});
  if (!previous) return acquiring_command_failed(previous.error());
  // Equal: nobody replaced the expired value before us, it is ours. Otherwise
  // another client was faster — and we have just overwritten its expiry.
  if (previous->is_nil() || previous->text() != current_value) return std::nullopt;
  held_ = true;
  return Acquire::acquired;
}

Release GetsetTimestampLock::release() { return blind_del(held_); }

}  // namespace locklab
