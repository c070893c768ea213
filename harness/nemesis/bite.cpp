#include "nemesis/bite.h"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace locklab::harness {

namespace {

// A client's waits: each recorded section's [want, enter], and the wait it
// was still in when it finished (ClientSlot::open_wait_ns is its length).
std::vector<WaitSpan> waits_of(const SharedHistory& history, const std::vector<CsRecord>& records, int client) {
  std::vector<WaitSpan> spans;
  for (const auto& record : records)
    if (static_cast<int>(record.client) == client && record.want_ns > 0) spans.push_back({record.want_ns, record.enter_ns});
  const ClientSlot& slot = history.slot(client);
  const std::int64_t finished = slot.finished_ns.load(), open = slot.open_wait_ns.load();
  if (finished > 0 && open > 0) spans.push_back({finished - open, finished});
  return spans;
}

}  // namespace

BiteEvidence BiteEvidence::from(const SharedHistory& history, std::chrono::milliseconds ttl, bool auto_extends) {
  BiteEvidence evidence;
  evidence.auto_extends = auto_extends;
  evidence.records = history.records();
  evidence.go_ns = history.header().go_ns.load();
  evidence.end_ns = monotonic_ns();
  evidence.ttl = ttl;
  for (int c = 0; c < history.clients(); ++c) evidence.waits.push_back(waits_of(history, evidence.records, c));
  return evidence;
}

std::int64_t BiteEvidence::latest_lease_end(const CsRecord& section, std::int64_t stopped_ns) const {
  const std::int64_t lease = std::chrono::nanoseconds(ttl).count();
  if (!auto_extends || stopped_ns == 0) return section.enter_ns + lease;
  return std::max(section.enter_ns, stopped_ns) + lease;
}

std::int64_t BiteEvidence::earliest_lease_end(const CsRecord& section) const {
  return section.invoke_ns + std::chrono::nanoseconds(ttl - kServerClockSlack).count();
}

std::string BiteEvidence::at(std::int64_t ns) const {
  char text[48];
  std::snprintf(text, sizeof text, "%.1f ms", static_cast<double>(ns - go_ns) / 1e6);
  return text;
}

std::optional<CsRecord> BiteEvidence::section_of(int client, std::int64_t ns) const {
  for (const auto& record : records)
    if (static_cast<int>(record.client) == client && record.enter_ns <= ns && ns <= record.exit_ns) return record;
  return std::nullopt;
}

std::optional<std::int64_t> BiteEvidence::waiting(int client, std::int64_t from, std::int64_t to) const {
  if (client < 0 || static_cast<std::size_t>(client) >= waits.size() || to < from) return std::nullopt;
  std::optional<std::int64_t> first;
  for (const auto& span : waits[static_cast<std::size_t>(client)])
    if (span.from_ns <= to && span.to_ns >= from) {
      const std::int64_t moment = std::max(span.from_ns, from);
      if (!first || moment < *first) first = moment;
    }
  return first;
}

std::optional<BiteEvidence::Hit> BiteEvidence::other_waiting(int except, std::int64_t from, std::int64_t to) const {
  std::optional<Hit> first;
  for (int c = 0; c < static_cast<int>(waits.size()); ++c) {
    if (c == except) continue;
    if (auto moment = waiting(c, from, to); moment && (!first || *moment < first->ns)) first = Hit{c, *moment};
  }
  return first;
}

std::optional<CsRecord> BiteEvidence::other_entered(int except, std::int64_t from, std::int64_t to) const {
  for (const auto& record : records)
    if (static_cast<int>(record.client) != except && record.enter_ns >= from && record.enter_ns <= to) return record;
  return std::nullopt;
}

std::optional<std::pair<CsRecord, CsRecord>> BiteEvidence::first_overlap_after(std::int64_t after_ns) const {
  const auto leaves = [&](const CsRecord& r) { return r.exit_ns != 0 ? r.exit_ns : end_ns; };
  std::optional<CsRecord> open;  // of the sections entered after after_ns so far, the one that leaves last
  for (const CsRecord& record : records) {  // by enter_ns
    if (record.enter_ns <= after_ns) continue;
    if (open && open->client != record.client && record.enter_ns < leaves(*open)) return std::pair{*open, record};
    if (!open || leaves(record) > leaves(*open)) open = record;
  }
  return std::nullopt;
}

namespace {

std::string span_text(const BiteEvidence& e, const PauseSpan& span) {
  return "client " + std::to_string(span.client) + " was stopped at " + span.at + " from " + e.at(span.since_ns) +
         " to " + e.at(span.until_ns);
}

// Another client got in while it was stopped: its lease had lapsed, the race
// ran (whatever the arithmetic below would have allowed). Else the stop must
// outlast the latest moment its lease can have lapsed while a contender tried.
Bite pause_inside_bite(const BiteEvidence& e, const PauseSpan& span, const CsRecord& section) {
  const std::string stopped = span_text(e, span) + ", inside its section";
  if (const auto entered = e.other_entered(span.client, span.since_ns, span.until_ns))
    return {true, stopped + "; client " + std::to_string(entered->client) + " got in at " + e.at(entered->enter_ns)};
  const std::int64_t lapse = e.latest_lease_end(section, span.since_ns);
  const std::string until = " (its lease had ended by " + e.at(lapse) + ")";
  if (span.until_ns <= lapse) return {false, stopped + until + ": it went on before that"};
  const auto hit = e.other_waiting(span.client, lapse, span.until_ns);
  if (!hit) return {false, stopped + until + ", but no other client was trying meanwhile"};
  return {true, stopped + until + "; " + contender_text(e, *hit)};
}

// Its last section before `ns` was left but its release never returned: it died still holding.
bool released_never(const BiteEvidence& e, int client, std::int64_t ns) {
  const CsRecord* last = nullptr;
  for (const auto& record : e.records)
    if (static_cast<int>(record.client) == client && record.enter_ns <= ns) last = &record;
  return last != nullptr && last->stage != CsStage::closed;
}

// The late release must meet a new holder inside: one that entered while the
// holder was stopped and was still inside when it went on.
Bite pause_outside_bite(const BiteEvidence& e, const PauseSpan& span) {
  const std::string stopped = span_text(e, span) + ", outside its section";
  std::optional<CsRecord> left;
  for (const auto& record : e.records) {
    if (static_cast<int>(record.client) == span.client || record.enter_ns < span.since_ns ||
        record.enter_ns > span.until_ns)
      continue;
    if (record.exit_ns > span.until_ns)
      return {true, stopped + "; client " + std::to_string(record.client) + " entered at " + e.at(record.enter_ns) +
                        " and was still inside when it went on"};
    if (!left) left = record;
  }
  if (left)
    return {false, stopped + "; client " + std::to_string(left->client) + " entered at " + e.at(left->enter_ns) +
                       " but left at " + e.at(left->exit_ns) + ", before it went on: its release met no holder"};
  return {false, stopped + ", and no other client entered meanwhile"};
}

}  // namespace

Bite pause_bite(const BiteEvidence& evidence, const std::vector<PauseSpan>& spans) {
  if (spans.empty()) return {false, "no client was stopped"};
  const PauseSpan& span = spans.front();
  if (auto section = evidence.section_of(span.client, span.since_ns)) return pause_inside_bite(evidence, span, *section);
  return pause_outside_bite(evidence, span);
}

Bite crash_bite(const BiteEvidence& e, int client, std::int64_t died_ns, const std::string& key_without_ttl) {
  std::string died = "client " + std::to_string(client) + " died at " + e.at(died_ns);
  if (e.section_of(client, died_ns)) died += " inside its section";
  else if (released_never(e, client, died_ns)) died += " after its section, before its release returned";
  else if (!key_without_ttl.empty()) died += ", leaving " + key_without_ttl + " with no TTL";
  else return {false, died + ", neither inside its section nor leaving a key with no TTL"};
  const auto hit = e.other_waiting(client, died_ns, e.end_ns);
  if (!hit) return {false, died + ", and no other client tried afterwards"};
  return {true, died + "; " + contender_text(e, *hit)};
}

std::string contender_text(const BiteEvidence& evidence, const BiteEvidence::Hit& hit) {
  return "client " + std::to_string(hit.client) + " was trying to acquire at " + evidence.at(hit.ns);
}

}  // namespace locklab::harness
