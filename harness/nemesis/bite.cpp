#include "nemesis/bite.h"

#include <algorithm>
#include <cstdio>

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

BiteEvidence BiteEvidence::from(const SharedHistory& history, std::chrono::milliseconds ttl) {
  BiteEvidence evidence;
  evidence.records = history.records();
  evidence.go_ns = history.header().go_ns.load();
  evidence.end_ns = monotonic_ns();
  evidence.ttl = ttl;
  for (int c = 0; c < history.clients(); ++c) evidence.waits.push_back(waits_of(history, evidence.records, c));
  return evidence;
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

std::string contender_text(const BiteEvidence& evidence, const BiteEvidence::Hit& hit) {
  return "client " + std::to_string(hit.client) + " was trying to acquire at " + evidence.at(hit.ns);
}

}  // namespace locklab::harness
