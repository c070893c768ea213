// What an adapter given by `--adapter LABEL='CMD'` alone says of itself,
// asked once before the matrix plans its row, or `fleets` judges its pairs
// (which need its key, multi_node and notifies_waiters). The matrix decides some columns
// (release-race, expire-gap, node-minority) and shapes others (a quorum lock's
// waiters, its servers) from a lock's capabilities and step points before any
// cell runs, while a run hears an adapter's init_ok only once it has begun. So
// the adapter is started once, told init on a redis-server of its own, and its
// init_ok read: the capabilities it claims, the key it locks (`key`, as a
// pattern of the run's key), and the `release_window` and `acquire_gap` it
// may declare as a catalog entry would (docs/adapters.md).
#pragma once

#include "redis/result.h"

#include "workload/user_adapters.h"

namespace locklab::harness {

// `lock` as its init_ok describes it (with_declared), or why it could not be
// asked (the adapter's one line, or the server that would not start).
Result<LockDescription> declared_by_init_ok(const LockDescription& lock);

// Every adapter of `user` that no catalog declares, asked (declared_by_init_ok);
// one that could not be asked stays as it was, and a line on stderr says why
// (its cells' runs then fail with the same line, or its columns are n/a). One
// whose init_ok declares a malformed step point is a usage error, as the same
// entry of a catalog would be: its columns are not n/a for a wrong reason.
// `command` ("matrix", "fleets") names the sweep in that line.
Result<UserAdapters> with_init_ok_declarations(UserAdapters user, const char* command = "matrix");

// The adapters of `user` declared by their init_ok, written to `path` as a
// catalog in the shipped one's format, and given again (`given_as`, the
// replay line of each of their cells) as `--catalog PATH`: a `locklab run`
// with `--adapter` would lay out its servers before it heard init_ok, so a
// lock that declares multi_node there would not replay on the servers its cell
// had. An adapter a catalog cannot name (a key that is not a pattern of the
// run's key, a word of its command with a '/' that is no path here) keeps its
// --adapter; the file is not written when no adapter is declared.
Status write_declared_catalog(UserAdapters& user, const std::string& path);

}  // namespace locklab::harness
