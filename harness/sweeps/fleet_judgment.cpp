#include "sweeps/fleet_judgment.h"

#include <string>
#include <utility>
#include <vector>

namespace locklab::harness {
namespace {

const PairMember& other_of(const FleetPair& pair, const PairMember& member) {
  return &member == &pair.members[0] ? pair.members[1] : pair.members[0];
}

// WRONGTYPE is the server's own word that the key holds another type: the two
// locks clash whatever the adapter made of the failed call (node-redisson's
// script error is `unknown` to its adapter: the script may have run in part).
bool type_clash(const PairMember& member) {
  const LockCounts& counts = member.counts;
  return counts.errors + counts.release_errors + counts.unknown > 0 &&
         counts.last_error.find("WRONGTYPE") != std::string::npos;
}

bool lock_failed(const PairMember& member) {
  return member.counts.errors + member.counts.release_errors > 0 || type_clash(member);
}

bool any_lock_failed(const FleetPair& pair) { return lock_failed(pair.members[0]) || lock_failed(pair.members[1]); }

// An `error` verdict no lock's failed acquire or release explains: the harness
// could not judge the run (oracles that disagree, a client that failed, an
// adapter that broke, outcomes a lock could not tell).
bool unjudged(const FleetPair& pair) { return pair.verdict == "error" && !any_lock_failed(pair); }

bool broken(const FleetPair& pair) {
  return pair.overlaps > 0 || pair.counter_expected != pair.counter_actual || any_lock_failed(pair) ||
         pair.verdict != "safe";
}

// A lock that waited out its bound at least as often as it got in.
bool starved(const PairMember& member) {
  return member.counts.timeouts > 0 && member.counts.timeouts >= member.counts.acquired;
}

bool too_few(const PairMember& member) { return member.counts.acquired < kFleetMinSections; }

// "once", "2 times".
std::string times(std::int64_t count) { return count == 1 ? "once" : std::to_string(count) + " times"; }

std::string code_span(const std::string& text) { return "`" + text + "`"; }

// "ext:node-redlock takes a majority of the 5 lock servers, ext:redis-py only the first".
std::string servers_text(const FleetPair& pair, const PairMember& many, const PairMember& one) {
  return "different servers: " + many.lock + " takes a majority of the " + std::to_string(pair.lock_servers) +
         " lock servers, " + one.lock + " only the first, so a majority without the first admits both";
}

// What the catalog says makes the two unable to exclude each other, whatever the run showed.
std::vector<PairReason> catalog_reasons(const FleetPair& pair) {
  const PairMember& a = pair.members[0];
  const PairMember& b = pair.members[1];
  std::vector<PairReason> reasons;
  if (a.multi_node != b.multi_node)
    reasons.push_back({"servers", a.multi_node ? servers_text(pair, a, b) : servers_text(pair, b, a)});
  if (!a.key.empty() && !b.key.empty() && a.key != b.key)
    reasons.push_back({"key", "different keys: " + a.lock + " locks " + code_span(a.key) + ", " + b.lock + " " +
                                  code_span(b.key) + ": neither sees the other's lock"});
  return reasons;
}

// "38 of 738 acquires", "1 release", both joined by "and", then "(2 more of unknown outcome)".
std::string failed_counts(const PairMember& member) {
  const LockCounts& counts = member.counts;
  std::string text;
  if (counts.errors > 0) text = std::to_string(counts.errors) + " of " + std::to_string(counts.attempts) + " acquires";
  if (counts.release_errors > 0)
    text += (text.empty() ? "" : " and ") + std::to_string(counts.release_errors) +
            (counts.release_errors == 1 ? " release" : " releases");
  if (counts.unknown > 0 && text.empty())
    text = std::to_string(counts.unknown) + " of " + std::to_string(counts.attempts) + " acquires, of unknown outcome,";
  else if (counts.unknown > 0)
    text += " (" + std::to_string(counts.unknown) + " more of unknown outcome)";
  return text;
}

void add_error_reasons(FleetPair& pair) {
  for (const auto& member : pair.members) {
    if (!lock_failed(member)) continue;
    if (type_clash(member))
      pair.why.push_back({"type", "different value types: " + member.lock + " got WRONGTYPE on the shared key (" +
                                      failed_counts(member) + " failed): " + other_of(pair, member).lock +
                                      " keeps another Redis type there"});
    else
      pair.why.push_back({"errors", member.lock + " failed " + failed_counts(member) +
                                        " with no fault injected: " + member.counts.last_error});
  }
}

std::string first_reason(const FleetPair& pair) {
  return pair.verdict_reasons.empty() ? "verdict " + pair.verdict : pair.verdict_reasons.front();
}

// "a got in 700 times and timed out 0 times, b got in 0 times and timed out 2 times".
std::string counts_text(const FleetPair& pair) {
  std::string text;
  for (const auto& member : pair.members)
    text += (text.empty() ? "" : ", ") + member.lock + " got in " + times(member.counts.acquired) +
            " and timed out " + times(member.counts.timeouts);
  return text;
}

// Whether the run showed what the catalog says: an overlap or a lost update, none, or nothing it could judge.
PairReason catalog_remark(const FleetPair& pair) {
  if (unjudged(pair)) return {"unconfirmed", "this run could not be judged: " + first_reason(pair)};
  if (pair.overlaps > 0 || pair.counter_expected != pair.counter_actual)
    return {"confirmed", "this run showed it: " + std::to_string(pair.overlaps) + " overlapping pairs of sections, " +
                             "the counter " + std::to_string(pair.counter_actual) + " for " +
                             std::to_string(pair.counter_expected) + " sections"};
  return {"unconfirmed", "this run showed no overlap: " + counts_text(pair)};
}

void judge_by_catalog(FleetPair& pair, std::vector<PairReason> catalog) {
  pair.sharing = Sharing::cannot;
  pair.why = std::move(catalog);
  add_error_reasons(pair);
  pair.why.push_back(catalog_remark(pair));
}

void judge_unjudged(FleetPair& pair) {
  pair.sharing = Sharing::not_measured;
  for (const auto& member : pair.members)
    if (const LockCounts& counts = member.counts; counts.unknown > 0)
      pair.why.push_back({"run", member.lock + " could not tell the outcome of " + std::to_string(counts.unknown) +
                                     " of " + std::to_string(counts.attempts) + " acquires (unknown) with no fault " +
                                     "injected, so nobody can say who held the key: " + counts.last_error});
  if (pair.why.empty()) pair.why.push_back({"run", "the run could not be judged: " + first_reason(pair)});
}

void judge_broken(FleetPair& pair) {
  pair.sharing = Sharing::cannot;
  add_error_reasons(pair);
  if (pair.why.empty())
    pair.why.push_back({"unexplained", "not explained by the catalog or the locks' errors: " + first_reason(pair)});
}

// Why `member` got in rarely, where the catalog knows it: whose release wakes whom.
std::string wake_text(const PairMember& member, const PairMember& other) {
  if (other.notifies_waiters)
    return "; " + other.lock + "'s release wakes its own waiters, who take the key before " + member.lock +
           (member.notifies_waiters ? " hears of it" : " polls again");
  if (member.notifies_waiters) return "; its waiters wait for a wake-up that " + other.lock + "'s release does not send";
  return "";
}

void add_few_reasons(FleetPair& pair) {
  for (const auto& member : pair.members) {
    if (!too_few(member)) continue;
    const PairMember& other = other_of(pair, member);
    pair.why.push_back({"few", member.lock + " got in " + times(member.counts.acquired) + " and timed out " +
                                   times(member.counts.timeouts) + ", " + other.lock + " got in " +
                                   times(other.counts.acquired) + ": with fewer than " +
                                   std::to_string(kFleetMinSections) + " sections of a lock, no overlap does not " +
                                   "show that the two exclude each other" + wake_text(member, other)});
  }
}

void add_starved_reasons(FleetPair& pair) {
  for (const auto& member : pair.members) {
    if (!starved(member)) continue;
    const PairMember& other = other_of(pair, member);
    pair.why.push_back({"starved", member.lock + " starved: it got in " + times(member.counts.acquired) +
                                       " and timed out " + times(member.counts.timeouts) + ", " + other.lock +
                                       " got in " + times(other.counts.acquired) + wake_text(member, other)});
  }
}

void add_shared_reason(FleetPair& pair) {
  const PairMember& a = pair.members[0];
  const std::string key = !a.key.empty() ? a.key : !pair.members[1].key.empty() ? pair.members[1].key : "?";
  const std::string where =
      a.multi_node ? "the same " + std::to_string(pair.lock_servers) + " lock servers (a majority each)" : "one server";
  pair.why.push_back({"same", "same key " + code_span(key) + " on " + where + ": the counter exact over " +
                                  std::to_string(a.counts.acquired) + " + " +
                                  std::to_string(pair.members[1].counts.acquired) + " sections, no overlap, no error"});
}

// A pair whose run held: not shown, one-sided or shares.
void judge_held(FleetPair& pair) {
  if (too_few(pair.members[0]) || too_few(pair.members[1])) {
    pair.sharing = Sharing::not_shown;
    add_few_reasons(pair);
  } else if (starved(pair.members[0]) || starved(pair.members[1])) {
    pair.sharing = Sharing::one_sided;
    add_starved_reasons(pair);
  } else {
    pair.sharing = Sharing::shares;
    add_shared_reason(pair);
  }
}

}  // namespace

void judge_pair(FleetPair& pair) {
  pair.why.clear();
  if (!pair.error.empty() || pair.members.size() != 2) {
    pair.sharing = Sharing::not_measured;
    pair.why.push_back({"run", pair.error.empty() ? "a pair has two locks" : pair.error});
    return;
  }
  if (auto catalog = catalog_reasons(pair); !catalog.empty()) judge_by_catalog(pair, std::move(catalog));
  else if (unjudged(pair)) judge_unjudged(pair);
  else if (broken(pair)) judge_broken(pair);
  else judge_held(pair);
}

}  // namespace locklab::harness
