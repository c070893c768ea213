#include "sweeps/fleet_judgment.h"

#include <string>

namespace locklab::harness {
namespace {

bool broken(const FleetPair& pair) {
  if (pair.overlaps > 0 || pair.counter_expected != pair.counter_actual) return true;
  for (const auto& member : pair.members)
    if (member.errors + member.release_errors > 0) return true;
  return pair.verdict != "safe";
}

// A lock that waited out its bound at least as often as it got in.
bool starved(const PairMember& member) { return member.timeouts > 0 && member.timeouts >= member.acquired; }

// "once", "2 times".
std::string times(std::int64_t count) { return count == 1 ? "once" : std::to_string(count) + " times"; }

std::string code_span(const std::string& text) { return "`" + text + "`"; }

// "ext:node-redlock takes a majority of the 5 lock servers, ext:redis-py only the first".
std::string servers_text(const FleetPair& pair, const PairMember& many, const PairMember& one) {
  return "different servers: " + many.lock + " takes a majority of the " + std::to_string(pair.lock_servers) +
         " lock servers, " + one.lock + " only the first, so a majority without the first admits both";
}

void add_catalog_reasons(FleetPair& pair) {
  const PairMember& a = pair.members[0];
  const PairMember& b = pair.members[1];
  if (a.multi_node != b.multi_node)
    pair.why.push_back({"servers", a.multi_node ? servers_text(pair, a, b) : servers_text(pair, b, a)});
  if (!a.key.empty() && !b.key.empty() && a.key != b.key)
    pair.why.push_back({"key", "different keys: " + a.lock + " locks " + code_span(a.key) + ", " + b.lock + " " +
                                   code_span(b.key) + ": neither sees the other's lock"});
}

// "38 of 738 acquires", "1 release", or both joined by "and".
std::string failed_counts(const PairMember& member) {
  std::string text;
  if (member.errors > 0) text = std::to_string(member.errors) + " of " + std::to_string(member.attempts) + " acquires";
  if (member.release_errors > 0)
    text += (text.empty() ? "" : " and ") + std::to_string(member.release_errors) +
            (member.release_errors == 1 ? " release" : " releases");
  return text;
}

void add_error_reasons(FleetPair& pair) {
  for (const auto& member : pair.members) {
    if (member.errors + member.release_errors == 0) continue;
    const PairMember& other = &member == &pair.members[0] ? pair.members[1] : pair.members[0];
    if (member.last_error.find("WRONGTYPE") != std::string::npos)
      pair.why.push_back({"type", "different value types: " + member.lock + " got WRONGTYPE on the shared key (" +
                                      failed_counts(member) + " failed): " + other.lock +
                                      " keeps another Redis type there"});
    else
      pair.why.push_back({"errors", member.lock + " failed " + failed_counts(member) +
                                        " with no fault injected: " + member.last_error});
  }
}

std::string sections_text(const FleetPair& pair) {
  return std::to_string(pair.members[0].acquired) + " + " + std::to_string(pair.members[1].acquired) + " sections";
}

// Why a pair that did not break still starved one lock, as far as the catalog says.
void add_starved_reasons(FleetPair& pair) {
  for (const auto& member : pair.members) {
    if (!starved(member)) continue;
    const PairMember& other = &member == &pair.members[0] ? pair.members[1] : pair.members[0];
    std::string text = member.lock + " starved: it got in " + times(member.acquired) + " and timed out " +
                       times(member.timeouts) + ", " + other.lock + " got in " + times(other.acquired);
    if (other.notifies_waiters)
      text += "; " + other.lock + "'s release wakes its own waiters, who take the key before " + member.lock +
              (member.notifies_waiters ? " hears of it" : " polls again");
    else if (member.notifies_waiters)
      text += "; its waiters wait for a wake-up that " + other.lock + "'s release does not send";
    pair.why.push_back({"starved", text});
  }
}

void add_shared_reason(FleetPair& pair) {
  const PairMember& a = pair.members[0];
  const std::string where =
      a.multi_node ? "the same " + std::to_string(pair.lock_servers) + " lock servers (a majority each)" : "one server";
  pair.why.push_back({"same", "same key " + code_span(a.key.empty() ? "?" : a.key) + " on " + where +
                                  ": the counter exact over " + sections_text(pair) + ", no overlap, no error"});
}

void judge_broken(FleetPair& pair) {
  pair.sharing = Sharing::cannot;
  add_catalog_reasons(pair);
  add_error_reasons(pair);
  if (!pair.why.empty()) return;
  const std::string first = pair.verdict_reasons.empty() ? "verdict " + pair.verdict : pair.verdict_reasons.front();
  pair.why.push_back({"unexplained", "not explained by the catalog or the locks' errors: " + first});
}

// A pair that held: shares, or one-sided. Where the catalog says the two cannot
// exclude each other (different keys or servers), a starved lock is why the run
// showed no overlap: the pair cannot share, as the catalog says. A pair where
// both got in and still no overlap showed contradicts the catalog: flagged.
void judge_held(FleetPair& pair) {
  const bool one_sided = starved(pair.members[0]) || starved(pair.members[1]);
  FleetPair predicted = pair;
  predicted.why.clear();
  add_catalog_reasons(predicted);
  if (one_sided) add_starved_reasons(pair);
  if (one_sided && !predicted.why.empty()) {
    pair.sharing = Sharing::cannot;
    for (auto& reason : pair.why) reason = {"unconfirmed", "this run showed no overlap: " + reason.text};
    pair.why.insert(pair.why.begin(), predicted.why.begin(), predicted.why.end());
    return;
  }
  pair.sharing = one_sided ? Sharing::one_sided : Sharing::shares;
  if (!one_sided) add_shared_reason(pair);
  for (const auto& reason : predicted.why)
    pair.why.push_back({"unconfirmed", "the catalog says " + reason.text + ", yet this run showed no overlap"});
}

}  // namespace

void judge_pair(FleetPair& pair) {
  pair.why.clear();
  if (!pair.error.empty() || pair.members.size() != 2) {
    pair.sharing = Sharing::not_measured;
    pair.why.push_back({"run", pair.error.empty() ? "a pair has two locks" : pair.error});
    return;
  }
  if (broken(pair)) judge_broken(pair);
  else judge_held(pair);
}

}  // namespace locklab::harness
