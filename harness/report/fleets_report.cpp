#include "report/fleets_report.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "support/files.h"
#include "support/text.h"

namespace locklab::harness {
namespace {

using nlohmann::json;

json optional_number(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

json member_json(const PairMember& member) {
  json noop = nullptr;
  if (member.noop_p50_us) noop = {{"p50", optional_number(member.noop_p50_us)}, {"p99", optional_number(member.noop_p99_us)}};
  json entry = lock_counts_json(member.counts);
  entry["lock"] = member.lock;
  entry["key"] = member.key;
  entry["multi_node"] = member.multi_node;
  entry["notifies_waiters"] = member.notifies_waiters;
  entry["clients"] = member.clients;  // a count (the run document's `fleet` names the first and last)
  entry["noop_us"] = noop;
  return entry;
}

json pair_json(const FleetPair& pair) {
  json members = json::array(), why = json::array();
  for (const auto& member : pair.members) members.push_back(member_json(member));
  for (const auto& reason : pair.why) why.push_back({{"code", reason.code}, {"text", reason.text}});
  return {{"spec", pair.spec},
          {"sharing", sharing_name(pair.sharing)},
          {"why", why},
          {"verdict", pair.verdict},
          {"verdict_reasons", pair.verdict_reasons},
          {"overlaps", pair.overlaps},
          {"counter", {{"expected", pair.counter_expected}, {"actual", pair.counter_actual}}},
          {"lock_servers", pair.lock_servers},
          {"wall_s", pair.wall_s},
          {"error", pair.error.empty() ? json(nullptr) : json(pair.error)},
          {"members", members}};
}

// The codes of a pair's reasons, each once, in kCodeOrder ("unconfirmed" is a remark, not a reason).
constexpr const char* kCodeOrder[] = {"key", "servers", "type", "errors", "unexplained", "starved", "same", "run"};

std::vector<std::string> reason_codes(const FleetPair& pair) {
  std::vector<std::string> codes;
  for (const char* code : kCodeOrder)
    for (const auto& reason : pair.why)
      if (reason.code == code) {
        codes.push_back(code);
        break;
      }
  return codes;
}

// What the grid shows of a pair: "shares", "one-sided", "no: key + servers", "not shown", "not measured".
std::string grid_word(const FleetPair& pair) {
  if (pair.sharing == Sharing::shares) return "**shares**";
  if (pair.sharing != Sharing::cannot) return sharing_name(pair.sharing);
  std::string codes;
  for (const auto& code : reason_codes(pair)) codes += (codes.empty() ? "" : " + ") + code;
  return "no: " + codes;
}

// The locks met at `position` in a pair, in order, after those already in `locks`.
void add_locks_at(const FleetsResult& result, std::size_t position, std::vector<std::string>& locks) {
  for (const auto& pair : result.pairs)
    if (position < pair.members.size() &&
        std::find(locks.begin(), locks.end(), pair.members[position].lock) == locks.end())
      locks.push_back(pair.members[position].lock);
}

const FleetPair* find_pair(const FleetsResult& result, const std::string& a, const std::string& b) {
  for (const auto& pair : result.pairs) {
    if (pair.members.size() != 2) continue;
    const auto& x = pair.members[0].lock;
    const auto& y = pair.members[1].lock;
    if ((x == a && y == b) || (x == b && y == a)) return &pair;
  }
  return nullptr;
}

std::string grid(const FleetsResult& result) {
  std::vector<std::string> rows, columns;  // rows: the locks met second; columns: first, then second
  add_locks_at(result, 1, rows);
  add_locks_at(result, 0, columns);
  add_locks_at(result, 1, columns);
  std::ostringstream out;
  out << "| |";
  for (const auto& column : columns) out << " " << column << " |";
  out << "\n|---|";
  for (std::size_t i = 0; i < columns.size(); ++i) out << "---|";
  out << "\n";
  for (const auto& row : rows) {
    out << "| **" << row << "** |";
    for (const auto& column : columns) {
      const FleetPair* pair = column == row ? nullptr : find_pair(result, row, column);
      out << " " << (column == row ? "–" : pair ? grid_word(*pair) : "") << " |";
    }
    out << "\n";
  }
  return out.str();
}

// "a / b" of one count over the pair's two members.
std::string per_member(const FleetPair& pair, std::int64_t LockCounts::*count) {
  std::string text;
  for (const auto& member : pair.members) text += (text.empty() ? "" : " / ") + std::to_string(member.counts.*count);
  return text;
}

std::string round_trips(const FleetPair& pair) {
  std::string text;
  for (const auto& member : pair.members) {
    if (!member.noop_p50_us) continue;
    text += (text.empty() ? "" : "; ") + member.lock + " " + fixed(*member.noop_p50_us, 0) + " / " +
            fixed(member.noop_p99_us.value_or(0), 0) + " µs";
  }
  return text.empty() ? "–" : text;
}

std::string why_text(const FleetPair& pair) {
  std::string text;
  for (const auto& reason : pair.why) text += (text.empty() ? "" : "; ") + reason.text;
  std::replace(text.begin(), text.end(), '|', '/');  // a table cell
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

std::string pair_table(const FleetsResult& result) {
  std::ostringstream out;
  out << "| pair | shares a key? | why | sections | timeouts | errors | unknown | overlaps | counter expected / final "
         "| adapter no-op p50 / p99 | run |\n|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|\n";
  for (const auto& pair : result.pairs) {
    out << "| " << pair.locks_text() << " | " << sharing_name(pair.sharing) << " | " << why_text(pair) << " | "
        << per_member(pair, &LockCounts::acquired) << " | " << per_member(pair, &LockCounts::timeouts) << " | "
        << per_member(pair, &LockCounts::errors) << " | " << per_member(pair, &LockCounts::unknown) << " | "
        << pair.overlaps << " | " << pair.counter_expected << " / " << pair.counter_actual << " | "
        << round_trips(pair) << " | " << fixed(pair.wall_s, 1) << " s |\n";
  }
  return out.str();
}

// "key 62, servers 48, ...": over the pairs that cannot share, how many give each reason.
std::string reason_counts(const FleetsResult& result) {
  std::map<std::string, int> counts;
  for (const auto& pair : result.pairs)
    if (pair.sharing == Sharing::cannot)
      for (const auto& code : reason_codes(pair)) ++counts[code];
  std::string text;
  for (const char* code : kCodeOrder)
    if (counts.count(code) > 0) text += (text.empty() ? "" : ", ") + std::string(code) + " " + std::to_string(counts[code]);
  return text;
}

std::string pairs_with(const FleetsResult& result, Sharing sharing) {
  std::string text;
  for (const auto& pair : result.pairs)
    if (pair.sharing == sharing) text += (text.empty() ? "" : ", ") + pair.locks_text();
  return text.empty() ? "none" : text;
}

}  // namespace

const char* sharing_name(Sharing sharing) {
  switch (sharing) {
    case Sharing::shares: return "shares";
    case Sharing::one_sided: return "one-sided";
    case Sharing::cannot: return "cannot";
    case Sharing::not_shown: return "not shown";
    case Sharing::not_measured: return "not measured";
  }
  return "?";
}

std::string FleetPair::locks_text() const {
  std::string text;
  for (const auto& member : members) text += (text.empty() ? "" : " + ") + member.lock;
  return text;
}

int FleetsResult::count(Sharing sharing) const {
  return static_cast<int>(std::count_if(pairs.begin(), pairs.end(), [&](const FleetPair& p) { return p.sharing == sharing; }));
}

json fleets_json(const FleetsResult& result) {
  json pairs = json::array();
  for (const auto& pair : result.pairs) pairs.push_back(pair_json(pair));
  return {{"schema", kFleetsSchema},
          {"command", result.command},
          {"date", result.date},
          {"key", result.key},
          {"workload", result.workload},
          {"wall_s", result.wall_s},
          {"counts",
           {{"pairs", result.pairs.size()},
            {"shares", result.count(Sharing::shares)},
            {"one_sided", result.count(Sharing::one_sided)},
            {"cannot", result.count(Sharing::cannot)},
            {"not_shown", result.count(Sharing::not_shown)},
            {"not_measured", result.count(Sharing::not_measured)}}},
          {"pairs", pairs}};
}

std::string fleets_summary(const FleetsResult& result) {
  std::ostringstream out;
  out << result.pairs.size() << " pairs, " << result.workload << "; the sweep took " << fixed(result.wall_s, 0)
      << " s. " << result.count(Sharing::shares) << " share a key, " << result.count(Sharing::one_sided)
      << " one-sided, " << result.count(Sharing::cannot) << " cannot";
  if (const std::string counts = reason_counts(result); !counts.empty()) out << " (" << counts << ")";
  out << ", " << result.count(Sharing::not_shown) << " not shown";
  if (const int missing = result.count(Sharing::not_measured); missing > 0) out << ", " << missing << " not measured";
  out << ".\n\n- Share a key: " << pairs_with(result, Sharing::shares) << ".\n";
  out << "- One-sided (they exclude each other, but one starves): " << pairs_with(result, Sharing::one_sided) << ".\n";
  out << "- Not shown (a lock got in fewer than " << kFleetMinSections << " times: no evidence either way): "
      << pairs_with(result, Sharing::not_shown) << ".\n";
  return out.str();
}

namespace {

// What each class and reason code means: the paragraph above the summary.
std::string legend() {
  std::ostringstream out;
  out << "**shares**: the counter exact, no overlap, no error, each lock got in at least " << kFleetMinSections
      << " times; **one-sided**: the same, but one lock starved (it timed out at least as often as it got in); "
      << "**not shown**: no overlap and no error, but a lock got in fewer than " << kFleetMinSections
      << " times, too few to show that the two exclude each other; **cannot**: the lock catalog says the two "
      << "cannot exclude each other (`key`, `servers`: always, and `confirmed` or `unconfirmed` says whether this "
      << "run showed an overlap), or the run showed an overlap, a lost update or a lock's errors; **not measured**: "
      << "the run could not be made, or its verdict is error for the harness's own reasons (oracles that disagree, a "
      << "client that failed, outcomes a lock could not tell). Why: `key` different keys (the lock catalog's), "
      << "`servers` a majority of the lock servers beside only the first, `type` WRONGTYPE (different Redis types on "
      << "the key), `errors` a lock's own errors on the shared key, `unexplained` none of these explains it. "
      << "`unknown`: acquires whose outcome the lock could not tell, counted apart from its errors.";
  return out.str();
}

}  // namespace

std::string fleets_markdown(const FleetsResult& result) {
  std::ostringstream out;
  out << "# Which locks can share a key: `locklab fleets`\n\n";
  out << "Made by `" << result.command << "` (" << result.date << "). Each pair: one fault-free `locklab run "
      << "--fleet A:N,B:N` on the key `" << result.key << "` and one counter. " << legend() << "\n\n";
  out << fleets_summary(result) << "\n### The grid\n\n" << grid(result) << "\n### Every pair\n\n" << pair_table(result);
  return out.str();
}

Status write_fleets_report(const FleetsResult& result) {
  const std::filesystem::path dir(result.dir);
  if (auto written = write_file_atomically((dir / "fleets.md").string(), fleets_markdown(result)); !written)
    return written;
  return write_json_atomically((dir / "fleets.json").string(), fleets_json(result));
}

}  // namespace locklab::harness
