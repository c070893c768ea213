// The witness's evidence joined with the history: for each recorded section,
// whether the lock servers saw its lease end while its holder was inside,
// whatever the lock said (docs/harness.md, "The server as witness").
//
// Pure: the node logs (servers/keyspace_feed.h) and the records in, one
// finding per record out; no Redis, no clock.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "history/history.h"
#include "servers/keyspace_feed.h"

namespace locklab::harness {

// What one node says about one section's key.
enum class NodeSaw {
  unknown,  // no read of the key inside the section, or the node's feed went blind before it could tell
  held,     // the key stayed the holder's until it left
  lost,     // absent at the read, or expired / deleted / evicted before the holder left
};

struct SectionWitness {
  bool judged = false;  // at least one node could tell (else the lock's own word stands)
  bool lost = false;
  int nodes_lost = 0;
  int nodes_unknown = 0;
};

// One node's view of `section` on `key`. `marker_at[r]` is the position of
// read r's marker in log.items (-1: never came back).
NodeSaw judge_node(const FeedLog& log, const std::vector<int>& marker_at, const CsRecord& section,
                   const std::string& key);

// Every record, in order. `key_of(client)` is the key its lock holds ("": not
// known, not judged); `quorum` the nodes that must keep the key for the lease
// to hold (1 for one server; N/2+1 for a quorum lock over N): a node nobody
// could judge counts as keeping it, so only evidence makes a lease lost.
std::vector<SectionWitness> witness_sections(const std::vector<FeedLog>& logs, const std::vector<CsRecord>& records,
                                             const std::function<std::string(int)>& key_of, int quorum);

// Where each read's marker is in the log's stream (-1: not there).
std::vector<int> marker_positions(const FeedLog& log);

}  // namespace locklab::harness
