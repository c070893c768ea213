#include "nemesis/clock_skew_fault.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "history/history.h"
#include "servers/clock_jump.h"

namespace locklab::harness {

using std::chrono::milliseconds;

ClockSkewFault::ClockSkewFault(FaultSpec spec, int client, milliseconds offset)
    : spec_(std::move(spec)), client_(client), offset_(offset) {}

ClockSkewFault::~ClockSkewFault() {
  std::error_code ignored;
  if (!offset_dir_.empty()) std::filesystem::remove_all(offset_dir_, ignored);
}

std::string ClockSkewFault::offset_file() {
  if (!offset_dir_.empty()) return offset_dir_ + "/" LOCKLAB_CLOCK_OFFSET_BASENAME;
  if (!offset_problem_.empty()) return "";
  std::string pattern = (std::filesystem::temp_directory_path() / "locklab-skew-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    offset_problem_ = "cannot make a folder for the clock offset: " + std::string(std::strerror(errno));
    return "";
  }
  offset_dir_ = pattern;
  if (auto written = write_clock_offset(offset_dir_ + "/" LOCKLAB_CLOCK_OFFSET_BASENAME, offset_); !written) {
    offset_problem_ = written.error().message;
    return "";
  }
  return offset_dir_ + "/" LOCKLAB_CLOCK_OFFSET_BASENAME;
}

std::vector<std::string> ClockSkewFault::client_environment(int client) {
  if (client != client_) return {};
  const std::string file = offset_file();
  if (file.empty()) return {};
  return clock_shim_environment(file);
}

// The skewed client's adapter, if it runs one (any process of its cgroup, or
// of its process group without one, other than itself: a setsid watchdog
// too), must have the shim loaded, or its clock was never skewed.
void ClockSkewFault::check_adapter_clock(pid_t client_pid) {
  for (const pid_t member : client_members(client_pid)) {
    if (member == client_pid) continue;
    const bool skewed = runs_clock_shim(member);
    if (adapter_clock_ != AdapterClock::not_skewed)
      adapter_clock_ = skewed ? AdapterClock::skewed : AdapterClock::not_skewed;
    adapter_note_ = "client " + std::to_string(client_) + "'s adapter (pid " + std::to_string(member) + ") " +
                    (skewed ? "runs under the clock shim: its wall clock is off too"
                            : "does not have the clock shim loaded" +
                                  (offset_problem_.empty() ? std::string() : " (" + offset_problem_ + ")") +
                                  ": its wall clock is not skewed");
    events_.push_back({monotonic_ns(), adapter_note_});
  }
}

FaultNeeds ClockSkewFault::needs() const {
  FaultNeeds needs;
  needs.own_servers = false;
  return needs;
}

std::shared_ptr<const WallClock> ClockSkewFault::client_clock(int client) {
  if (client != client_) return nullptr;
  return std::make_shared<const SkewedClock>(offset_);
}

void ClockSkewFault::before_run(NemesisContext& context) {
  go_ns_ = monotonic_ns();
  const std::string sign = offset_.count() >= 0 ? "+" : "";
  events_.push_back({go_ns_, "client " + std::to_string(client_) + "'s wall clock runs " + sign +
                                 std::to_string(offset_.count()) + " ms off"});
  if (client_ >= static_cast<int>(context.client_pids.size())) return;  // thread mode: starts with the others
  check_adapter_clock(context.client_pids[static_cast<std::size_t>(client_)]);
  auto paused = PausedProcess::pause(context.client_pids[static_cast<std::size_t>(client_)]);
  if (!paused) {
    events_.push_back({monotonic_ns(), "could not hold client " + std::to_string(client_) + " back: " +
                                           paused.error().message});
    return;
  }
  held_back_ = std::move(paused).value();
  release_by_ = std::chrono::steady_clock::now() + 10 * context.ttl;
  events_.push_back({monotonic_ns(), "client " + std::to_string(client_) + " held back until another client holds"});
}

void ClockSkewFault::start_skewed_client(const std::string& why) {
  if (!held_back_) return;
  held_back_.reset();  // SIGCONT
  events_.push_back({monotonic_ns(), "client " + std::to_string(client_) + " starts: " + why});
}

void ClockSkewFault::holder_entered(NemesisContext&, int holder) {
  if (holder != client_) start_skewed_client("client " + std::to_string(holder) + " holds the lock");
}

void ClockSkewFault::tick(NemesisContext&) {
  if (held_back_ && std::chrono::steady_clock::now() >= release_by_) start_skewed_client("nobody else got in");
}

void ClockSkewFault::after_run(NemesisContext& context) {
  start_skewed_client("the run ended");
  if (context.history != nullptr && client_ < context.history->clients())
    skewed_attempts_ = context.history->slot(client_).attempts.load();
}

std::string ClockSkewFault::why_not_acted() const {
  if (adapter_clock_ == AdapterClock::not_skewed) return adapter_note_;
  return "client " + std::to_string(client_) + " made no acquire attempt with its skewed clock";
}

// The skewed client tried while another client's lease was live (inside its
// section, before the earliest end of its lease) and its clock, ahead, already
// read that lease as over: at a moment m with m + offset past the lease's end.
// A clock on time or behind cannot see a live lease as expired.
Bite ClockSkewFault::bite(const BiteEvidence& e) const {
  const std::int64_t offset = std::chrono::nanoseconds(offset_).count();
  if (offset <= 0) return {false, "client " + std::to_string(client_) + "'s clock is not ahead: no live lease reads as over"};
  for (const auto& section : e.records) {
    if (static_cast<int>(section.client) == client_) continue;
    // Live for sure until its earliest end; read as over by a clock ahead from
    // when that clock passes its latest end.
    const std::int64_t live_to = std::min(section.exit_ns, e.earliest_lease_end(section));
    const std::int64_t reads_over = e.latest_lease_end(section, 0) - offset;
    if (auto moment = e.waiting(client_, std::max(section.enter_ns, reads_over), live_to))
      return {true, "client " + std::to_string(client_) + " (its clock off by " + std::to_string(offset_.count()) +
                        " ms) was trying at " + e.at(*moment) + " while client " + std::to_string(section.client) +
                        " held a live lease (inside from " + e.at(section.enter_ns) + ")"};
  }
  return {false, "client " + std::to_string(client_) + " never tried while another client held a live lease"};
}

nlohmann::json ClockSkewFault::record() const {
  return {{"spec", spec_.text}, {"applied", applied_json(events_, go_ns_)}};
}

}  // namespace locklab::harness
