// Whether the two locks of a fault-free mixed-fleet run can share a key, and
// why (`locklab fleets`, docs/peers.md "In one fleet"): derived from what the
// lock catalog says of each lock (the key it locks for K, whether it takes a
// majority of several servers, whether its release wakes its waiters) and from
// the run (its verdict, overlaps, counter, each lock's counts and last error),
// never written per pair.
//
// In this order:
//   not_measured  the run could not be made (FleetPair::error)
//   cannot        the catalog says the two cannot exclude each other: `key`
//                 (they lock different Redis keys for the same K) or `servers`
//                 (one takes a majority of the lock servers, the other only the
//                 first). A fact about the locks, so always; the run only adds
//                 `confirmed` (it showed an overlap or a lost update) or
//                 `unconfirmed` (it showed none, or could not be judged), with
//                 any errors of the locks (`type`, `errors`)
//   not_measured  the verdict is error and no lock failed an acquire or a
//                 release: the harness's own reasons (oracles that disagree, a
//                 client that failed, outcomes the lock could not tell): the
//                 run's first reason
//   cannot        an overlap, the counter off, a lock's failed acquires or
//                 releases, or a verdict other than safe; why: `type` (a lock
//                 got WRONGTYPE: the other keeps another Redis type there),
//                 `errors` (a lock's other errors, with its last one),
//                 `unexplained` (none of these: the run's first verdict reason)
//   not_shown     none of that, but a lock got in fewer than kFleetMinSections
//                 times (`few`): no overlap is no evidence that they exclude
//                 each other
//   one_sided     none of that, but a lock starved: it timed out at least as
//                 often as it got in (`starved`)
//   shares        none of that (`same`)
// `few` and `starved` say, where the catalog knows it, whose release wakes
// its own waiters first.
#pragma once

#include "report/fleets_report.h"

namespace locklab::harness {

// Sets pair.sharing and pair.why from the pair's run and members.
void judge_pair(FleetPair& pair);

}  // namespace locklab::harness
