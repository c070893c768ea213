#include "run/witness_join.h"

#include <algorithm>

namespace locklab::harness {
namespace {

// The key ended on the node: let lapse, deleted (by someone else while the
// holder was inside: its own release comes after it left), evicted, renamed away.
bool ends_key(const std::string& event) {
  return event == "expired" || event == "del" || event == "evicted" || event == "rename_from";
}

// The first read of `key` asked for this section's holder that was sent after
// it entered and answered before it left: the key the node held then is the
// holder's (it was inside, so in a safe run nobody else held the lock).
const KeyRead* read_inside(const FeedLog& log, const CsRecord& section, const std::string& key, int* index) {
  for (std::size_t r = 0; r < log.reads.size(); ++r) {
    const KeyRead& read = log.reads[r];
    if (read.client != static_cast<int>(section.client) || read.key != key || read.replied_ns == 0) continue;
    if (read.sent_ns < section.enter_ns || read.replied_ns > section.exit_ns) continue;
    *index = static_cast<int>(r);
    return &read;
  }
  return nullptr;
}

// The lease's end by the read's PTTL, at the latest: the server measured it
// before its reply came back. -1: no expiry (nothing lapses by itself).
std::int64_t lease_end(const KeyRead& read) {
  // PTTL is in whole ms, rounded down: the key lives up to 1 ms longer.
  return read.pttl >= 0 ? read.replied_ns + (read.pttl + 1) * 1'000'000 : -1;
}

bool lapsed_before(const KeyRead& read, std::int64_t exit_ns) {
  const std::int64_t end = lease_end(read);
  return end >= 0 && end < exit_ns;
}

}  // namespace

std::vector<int> marker_positions(const FeedLog& log) {
  std::vector<int> at(log.reads.size(), -1);
  for (std::size_t i = 0; i < log.items.size(); ++i) {
    const int read = log.items[i].read;
    if (read >= 0 && static_cast<std::size_t>(read) < at.size()) at[static_cast<std::size_t>(read)] = static_cast<int>(i);
  }
  return at;
}

// After the read's marker the stream says, in server order, what happened to
// the key next. An end stamped before the holder left happened while it was
// inside. The first change being an end (no renewal before it), or no change
// at all in a stream that held to the end, leaves the read's PTTL standing:
// the lease ended then, and counts if that was before the holder left.
NodeSaw judge_node(const FeedLog& log, const std::vector<int>& marker_at, const CsRecord& section,
                   const std::string& key) {
  int index = -1;
  const KeyRead* read = read_inside(log, section, key, &index);
  if (read == nullptr || marker_at[static_cast<std::size_t>(index)] < 0) return NodeSaw::unknown;
  if (read->type == "none") return NodeSaw::lost;  // gone while its holder was inside
  bool renewed = false;
  for (std::size_t i = static_cast<std::size_t>(marker_at[static_cast<std::size_t>(index)]) + 1; i < log.items.size(); ++i) {
    const FeedItem& item = log.items[i];
    if (item.read >= 0 || item.key != key) continue;
    if (ends_key(item.event)) {
      if (item.stamp_ns <= section.exit_ns) return NodeSaw::lost;
      // Ended after it left: a lapse before it left when nothing renewed the
      // lease first, else its own release (or a lapse after it). An expiry
      // after renewals cannot be dated: Redis reports it late (lazily, or at
      // its sampling), and no read gave the renewed lease's end.
      if (renewed && item.event == "expired") return NodeSaw::unknown;
      return !renewed && lapsed_before(*read, section.exit_ns) ? NodeSaw::lost : NodeSaw::held;
    }
    renewed = true;  // expire, set, hset...: the lease may have been extended
  }
  // A stream that went blind (a restart, a failover) may miss the very change
  // that took the key: no renewal seen before it proves the key was kept.
  if (!log.ended_cleanly || log.blind_from_ns != 0) return NodeSaw::unknown;
  if (renewed) return NodeSaw::held;
  return lapsed_before(*read, section.exit_ns) ? NodeSaw::lost : NodeSaw::held;
}

std::vector<SectionWitness> witness_sections(const std::vector<FeedLog>& logs, const std::vector<CsRecord>& records,
                                             const std::function<std::string(int)>& key_of, int quorum) {
  std::vector<std::vector<int>> markers;
  for (const auto& log : logs) markers.push_back(marker_positions(log));
  std::vector<SectionWitness> found(records.size());
  for (std::size_t s = 0; s < records.size(); ++s) {
    const std::string key = key_of(static_cast<int>(records[s].client));
    if (key.empty() || records[s].stage != CsStage::closed) continue;  // a died section: its exit is a bound, not a leave
    SectionWitness& witness = found[s];
    for (std::size_t n = 0; n < logs.size(); ++n) {
      const NodeSaw saw = judge_node(logs[n], markers[n], records[s], key);
      witness.nodes_lost += saw == NodeSaw::lost ? 1 : 0;
      witness.nodes_unknown += saw == NodeSaw::unknown ? 1 : 0;
    }
    // Lost for sure when the nodes not seen losing it cannot make a quorum;
    // kept for sure when the nodes seen keeping it can. Otherwise the servers
    // could not tell, and the lock's own word stands.
    const int nodes = static_cast<int>(logs.size());
    const int kept = nodes - witness.nodes_lost - witness.nodes_unknown;
    witness.lost = nodes - witness.nodes_lost < quorum;
    witness.judged = witness.lost || kept >= quorum;
  }
  return found;
}

}  // namespace locklab::harness
