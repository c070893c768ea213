// What an adapter given by `--adapter LABEL='CMD'` alone says of itself,
// asked once before the matrix plans its row. The matrix decides some columns
// (release-race, expire-gap, node-minority) and shapes others (a quorum lock's
// waiters, its servers) from a lock's capabilities and step points before any
// cell runs, while a run hears an adapter's init_ok only once it has begun. So
// the adapter is started once, told init on a redis-server of its own, and its
// init_ok read: the capabilities it claims, and the `release_window` and
// `acquire_gap` it may declare as a catalog entry would (docs/adapters.md).
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
Result<UserAdapters> with_init_ok_declarations(UserAdapters user);

}  // namespace locklab::harness
