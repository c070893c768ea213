// Whether the two locks of a fault-free mixed-fleet run can share a key, and
// why (`locklab fleets`, docs/peers.md "In one fleet"): derived from the run
// (its overlaps, its counter, each lock's counts and last error) and from what
// the lock catalog says of each lock (the key it locks for K, whether it takes
// a majority of several servers, whether its release wakes its waiters), never
// written per pair.
//
// The class comes from the run alone:
//   cannot       an overlap, the counter off, or a lock's acquire or release failed
//   one_sided    none of that, but a lock starved: it timed out at least as often as it got in
//   shares       none of that, and each lock got in
//   not_measured the run could not be made (FleetPair::error)
// The reasons of a pair that cannot, each only where its fact holds:
//   servers      one lock takes a majority of the lock servers, the other only the first
//   key          the two lock different Redis keys for the same K
//   type         a lock got WRONGTYPE: the other keeps another Redis type on the key
//   errors       a lock's other errors on the shared key, with its last one
//   unexplained  none of these: the run's first verdict reason
// A pair whose run did not break although the catalog says it must (different
// keys or servers) is `cannot` with the catalog's reasons when a lock starved
// (the run could not show the overlap: `unconfirmed` says so), and keeps its
// class with an `unconfirmed` remark when both got in (a contradiction to look at).
#pragma once

#include "report/fleets_report.h"

namespace locklab::harness {

// Sets pair.sharing and pair.why from the pair's run and members.
void judge_pair(FleetPair& pair);

}  // namespace locklab::harness
