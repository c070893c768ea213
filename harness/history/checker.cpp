#include "history/checker.h"

#include <algorithm>
#include <utility>

#include "lock.h"

namespace locklab::harness {

namespace {
std::vector<std::pair<std::int64_t, int>> sorted_events(const std::vector<CsRecord>& by_enter) {
  std::vector<std::pair<std::int64_t, int>> events;
  events.reserve(by_enter.size() * 2);
  for (const auto& section : by_enter) {
    events.emplace_back(section.enter_ns, +1);
    events.emplace_back(section.exit_ns, -1);
  }
  std::sort(events.begin(), events.end());  // at equal times -1 sorts first: half-open intervals
  return events;
}
}  // namespace

OverlapKind classify_overlap(const ResourceAccess& a, const ResourceAccess& b) {
  if (a.refused || b.refused) return OverlapKind::fenced_off;
  if (!a.has_token || !b.has_token) return OverlapKind::violation;
  const ResourceAccess& first = a.write_end <= b.read_start ? a : b;
  const ResourceAccess& second = &first == &a ? b : a;
  const bool apart = first.write_end <= second.read_start;
  if (apart && first.token < second.token) return OverlapKind::serialized_by_fence;
  return OverlapKind::violation;
}

OverlapSummary find_overlaps(const std::vector<CsRecord>& by_enter) {
  OverlapSummary summary;
  // Pairs: every section still open when a later one enters intersects it.
  std::vector<std::int64_t> open_exits;
  for (const auto& section : by_enter) {
    std::erase_if(open_exits, [&](std::int64_t exit) { return exit <= section.enter_ns; });
    if (!open_exits.empty() && summary.first_overlap_ns < 0) summary.first_overlap_ns = section.enter_ns;
    summary.pairs += static_cast<std::int64_t>(open_exits.size());
    open_exits.push_back(section.exit_ns);
  }
  // Depth and time with depth >= 2: sweep the enter/exit events. At equal
  // times exits go first (half-open intervals).
  const auto events = sorted_events(by_enter);
  int depth = 0;
  std::int64_t previous = 0;
  for (const auto& [time, delta] : events) {
    if (depth >= 2) summary.overlap_ns += time - previous;
    depth += delta;
    summary.max_concurrent = std::max(summary.max_concurrent, depth);
    previous = time;
  }
  return summary;
}


std::vector<Span> overlap_spans(const std::vector<CsRecord>& by_enter) {
  std::vector<Span> spans;
  int depth = 0;
  for (const auto& [time, delta] : sorted_events(by_enter)) {
    const int before = depth;
    depth += delta;
    if (before < 2 && depth >= 2) spans.push_back({time, time});
    if (before >= 2 && depth < 2) spans.back().to_ns = time;
  }
  return spans;
}

std::int64_t count_wrong_owner_releases(const std::vector<CsRecord>& by_enter) {
  std::int64_t wrong = 0;
  for (std::size_t x = 0; x < by_enter.size(); ++x) {
    const CsRecord& mine = by_enter[x];
    if (mine.release != static_cast<std::uint8_t>(Release::released)) continue;
    for (std::size_t y = x + 1; y < by_enter.size() && by_enter[y].enter_ns < mine.exit_ns; ++y) {
      if (by_enter[y].client != mine.client && by_enter[y].enter_ns > mine.enter_ns) {
        ++wrong;
        break;
      }
    }
  }
  return wrong;
}

namespace {
// An owner-checked release that answered `released` for a lease it had lost:
// another client entered inside its section (its key had vanished: the
// wrong-owner pattern), or the section's lease was lost (the run's witness saw
// the key end before the holder left, or the lock said so itself).
std::int64_t count_released_after_loss(const std::vector<CsRecord>& by_enter) {
  std::int64_t hidden = 0;
  for (std::size_t x = 0; x < by_enter.size(); ++x) {
    const CsRecord& mine = by_enter[x];
    if (mine.release != static_cast<std::uint8_t>(Release::released)) continue;
    bool lost = mine.lease_lost != 0;
    for (std::size_t y = x + 1; !lost && y < by_enter.size() && by_enter[y].enter_ns < mine.exit_ns; ++y)
      lost = by_enter[y].client != mine.client && by_enter[y].enter_ns > mine.enter_ns;
    hidden += lost ? 1 : 0;
  }
  return hidden;
}
}  // namespace

std::vector<Stall> find_stalls(const std::vector<CsRecord>& by_enter, const std::vector<ClientSpan>& clients,
                               std::int64_t run_start_ns, std::int64_t threshold_ns) {
  std::int64_t waiting_until = run_start_ns;
  for (const auto& client : clients) waiting_until = std::max(waiting_until, client.finished_ns);

  std::vector<Stall> stalls;
  auto consider = [&](std::int64_t from, std::int64_t to) {
    to = std::min(to, waiting_until);
    if (to - from > threshold_ns) stalls.push_back({from, to});
  };
  std::int64_t covered_until = run_start_ns;  // sections are sorted by enter: a running union
  for (const auto& section : by_enter) {
    if (section.enter_ns > covered_until) consider(covered_until, section.enter_ns);
    covered_until = std::max(covered_until, section.exit_ns);
  }
  consider(covered_until, waiting_until);
  return stalls;
}

std::int64_t lost_updates(std::int64_t confirmed_increments, std::int64_t counter_growth) {
  return std::max<std::int64_t>(0, confirmed_increments - counter_growth);
}

std::int64_t unconfirmed_writes(const std::vector<CsRecord>& records) {
  return std::count_if(records.begin(), records.end(), [](const CsRecord& section) {
    return section.write == CsWrite::failed || section.write == CsWrite::pending;
  });
}

ResourceAccess resource_access(const CsRecord& section) {
  ResourceAccess access;
  access.refused = section.write == CsWrite::refused;
  access.has_token = section.has_token != 0;
  access.token = section.token;
  access.read_start = section.read_ns != 0 ? section.read_ns : section.enter_ns;
  const bool write_completed = section.write == CsWrite::written && section.written_ns != 0;
  access.write_end = write_completed ? section.written_ns : ResourceAccess::kOpenEnded;
  return access;
}

ClassifiedOverlaps classify_overlaps(const std::vector<CsRecord>& by_enter) {
  ClassifiedOverlaps result;
  std::vector<bool> in_violation(by_enter.size(), false);
  std::vector<std::size_t> open;  // indices of sections still inside when the next one enters
  for (std::size_t later = 0; later < by_enter.size(); ++later) {
    const CsRecord& section = by_enter[later];
    std::erase_if(open, [&](std::size_t earlier) { return by_enter[earlier].exit_ns <= section.enter_ns; });
    for (const std::size_t earlier : open) {
      if (by_enter[earlier].client == section.client) continue;
      switch (classify_overlap(resource_access(by_enter[earlier]), resource_access(section))) {
        case OverlapKind::fenced_off: ++result.fenced_off; break;
        case OverlapKind::serialized_by_fence: ++result.serialized_by_fence; break;
        case OverlapKind::violation:
          ++result.violations;
          in_violation[earlier] = in_violation[later] = true;
          if (result.first_violation_ns < 0) result.first_violation_ns = section.enter_ns;
          break;
      }
    }
    open.push_back(later);
  }
  for (std::size_t i = 0; i < by_enter.size(); ++i)
    if (in_violation[i]) result.violating.push_back(by_enter[i]);
  result.recorded_max_concurrent = find_overlaps(by_enter).max_concurrent;
  return result;
}

std::vector<CsRecord> violating_sections(const std::vector<CsRecord>& by_enter) {
  return classify_overlaps(by_enter).violating;
}

namespace {
// A fenced section's lost lease is the resource's to judge: it refuses a stale
// token. Unless the next token drawn after it was its own again: the token
// counter went back with the lost key (a failover that lost the INCRs), so a
// client entering meanwhile would have drawn the very same token, and the
// resource cannot part two holders with one token (a lower token it refuses).
bool fence_covers(const std::vector<CsRecord>& by_enter, std::size_t x) {
  const CsRecord& mine = by_enter[x];
  if (mine.has_token == 0) return false;
  for (std::size_t y = x + 1; y < by_enter.size(); ++y)
    if (by_enter[y].has_token != 0) return by_enter[y].token != mine.token;
  return true;
}
}  // namespace

LeasesLost leases_lost_inside(const std::vector<CsRecord>& by_enter) {
  LeasesLost lost;
  for (std::size_t x = 0; x < by_enter.size(); ++x) {
    const CsRecord& mine = by_enter[x];
    if (mine.lease_lost == 0 || fence_covers(by_enter, x)) continue;
    ++lost.inside;
    const std::int64_t until = std::max(mine.exit_ns, mine.released_ns);
    bool entered = false;
    for (std::size_t y = x + 1; y < by_enter.size() && by_enter[y].enter_ns <= until && !entered; ++y)
      entered = by_enter[y].client != mine.client;
    if (!entered) ++lost.nobody_entered;
  }
  return lost;
}

namespace {
// The overlap findings of check_safety: the pairs, classed by the one rule,
// and the live counter's excuse.
void judge_overlaps(const SafetyInput& input, Safety& safety) {
  const ClassifiedOverlaps classified = classify_overlaps(input.records);
  safety.overlaps = find_overlaps(classified.violating);
  safety.overlaps.pairs = classified.violations;  // not the pairs among those sections: some may be fence-excused
  safety.overlaps.first_overlap_ns = classified.first_violation_ns;
  // No violating pair: one holder of the resource at a time (none in an empty run).
  if (classified.violations == 0) safety.overlaps.max_concurrent = std::min(1, classified.recorded_max_concurrent);
  safety.overlaps_fenced_off = classified.fenced_off;
  safety.overlaps_serialized_by_fence = classified.serialized_by_fence;
  // The live occupancy counter sees what the records see, or more if a section
  // is missing from them: every recorded interval covers the time the counter
  // counted it (workload/client_loop.cpp). The counter cannot tell a fence-excused holder
  // from a real one, so two or more live holders are excused only when every
  // recorded intersecting pair was fenced off or serialized by the fence (at
  // least one such pair, no violating one), and the live depth is no more than
  // the recorded depth over all sections. The counter keeps only a high-water
  // mark: within that bound it cannot tell *when* the depth was reached
  // (docs/harness.md says what this leaves open). The live maximum is
  // reported on its own, never folded into the recorded depth.
  safety.live_max_holders = input.live_max_occupancy;
  safety.live_holders_fenced_off = input.live_max_occupancy >= 2 && classified.violations == 0 &&
                                   classified.fenced_off + classified.serialized_by_fence > 0 &&
                                   input.live_max_occupancy <= classified.recorded_max_concurrent;
}
}  // namespace

DeadOwner find_dead_owner(const SafetyInput& input) {
  DeadOwner found;
  if (input.lock_expires || input.keys_left.without_ttl == 0 || input.records.empty()) return found;
  const auto last = std::max_element(input.records.begin(), input.records.end(),
                                     [](const CsRecord& a, const CsRecord& b) { return a.enter_ns < b.enter_ns; });
  if (last->stage != CsStage::inside) return found;  // its owner left: a key it failed to delete is not a dead owner's
  const auto owner = static_cast<std::size_t>(last->client);
  if (owner >= input.clients.size() || input.clients[owner].died_ns == 0) return found;  // not seen dead
  const std::int64_t died_ns = std::max(input.clients[owner].died_ns, last->enter_ns);
  for (std::size_t c = 0; c < input.kept_out.size() && c < input.clients.size(); ++c)
    if (c != owner && input.kept_out[c] && input.clients[c].finished_ns > died_ns) ++found.kept_out;
  if (found.kept_out == 0) return found;
  found.client = static_cast<int>(owner);
  found.since_ns = last->enter_ns;
  return found;
}

Safety check_safety(const SafetyInput& input) {
  Safety safety;
  judge_overlaps(input, safety);
  safety.leases_lost = leases_lost_inside(input.records);
  safety.exposed = safety.leases_lost.nobody_entered > 0;
  safety.lost_updates = lost_updates(input.confirmed_increments, input.counter_growth);
  safety.unconfirmed_writes = unconfirmed_writes(input.records);
  safety.unclaimed_increments =
      std::max<std::int64_t>(0, input.counter_growth - input.confirmed_increments - safety.unconfirmed_writes);
  if (input.lock_has_keys && input.owner_checked_release)
    safety.released_after_loss = count_released_after_loss(input.records);
  else if (input.lock_has_keys)
    safety.wrong_owner_releases = count_wrong_owner_releases(input.records);
  safety.stalls = find_stalls(input.records, input.clients, input.run_start_ns, input.stall_threshold_ns);
  safety.keys_left = input.keys_left;
  safety.stale_writes_rejected = input.stale_writes_rejected;
  safety.dead_owner = find_dead_owner(input);
  return safety;
}

Verdict judge(const Safety& safety) {
  Verdict verdict{"safe", {}};
  if (safety.overlaps.pairs > 0)
    verdict.reasons.push_back(std::to_string(safety.overlaps.pairs) + " overlapping critical-section pairs (up to " +
                              std::to_string(safety.overlaps.max_concurrent) + " holders at once)");
  else if (safety.live_max_holders >= 2 && !safety.live_holders_fenced_off)
    verdict.reasons.push_back("the live occupancy counter saw " + std::to_string(safety.live_max_holders) +
                              " holders at once, which no recorded overlap shows (a section is missing from the history)");
  if (safety.lost_updates > 0) verdict.reasons.push_back(std::to_string(safety.lost_updates) + " lost counter updates");
  if (safety.unclaimed_increments > 0)
    verdict.reasons.push_back("the counter grew by " + std::to_string(safety.unclaimed_increments) +
                              " more than every recorded write (a writer the history does not show)");
  if (safety.wrong_owner_releases > 0)
    verdict.reasons.push_back(std::to_string(safety.wrong_owner_releases) + " releases deleted another client's lock");
  if (!verdict.reasons.empty()) verdict.verdict = "violation";
  if (safety.stale_writes_rejected > 0)
    verdict.reasons.push_back(std::to_string(safety.stale_writes_rejected) +
                              " stale-token accesses refused by the fenced resource (" +
                              std::to_string(safety.overlaps_fenced_off) +
                              " overlapping pairs fenced off: the lease lapsed, the resource stayed exact)");
  if (safety.overlaps_serialized_by_fence > 0)
    verdict.reasons.push_back(std::to_string(safety.overlaps_serialized_by_fence) +
                              " overlapping pairs serialized by the fence (the resource accepted their accesses "
                              "in token order, one after the other)");

  if (!safety.stalls.empty()) {
    std::int64_t longest = 0;
    for (const auto& stall : safety.stalls) longest = std::max(longest, stall.to_ns - stall.from_ns);
    const std::string what = std::to_string(safety.stalls.size()) + " stall(s), longest " +
                             std::to_string(longest / 1'000'000) + " ms with clients waiting";
    if (safety.keys_left.without_ttl > 0) {
      // Mutual exclusion failures are the worse finding; a deadlock is reported
      // as the verdict only when the run was otherwise safe.
      verdict.reasons.push_back(what + " and a lock key with no expiry left behind");
      if (verdict.verdict == "safe") verdict.verdict = "deadlock";
    } else {
      verdict.reasons.push_back(what + " (liveness, not a safety violation)");
    }
  } else if (safety.dead_owner.client >= 0) {
    // No stall reached the threshold (the run ended first), but the evidence
    // is all there: nothing will ever free that key.
    verdict.reasons.push_back("a lock key with no expiry left behind by client " +
                              std::to_string(safety.dead_owner.client) + ", which died inside its section; " +
                              std::to_string(safety.dead_owner.kept_out) +
                              " other client(s) kept out after it (the run ended before a stall reached the threshold)");
    if (verdict.verdict == "safe") verdict.verdict = "deadlock";
  }
  if (verdict.verdict == "safe" && safety.exposed) {
    verdict.exposed = true;
    verdict.reasons.push_back("lease lost under a holder; nobody entered: safe by luck, not by design");
  }
  return verdict;
}

}  // namespace locklab::harness
