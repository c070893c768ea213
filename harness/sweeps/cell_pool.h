// The matrix's worker pool: runs `count` tasks, each named by its index, in
// up to `workers` forked processes that take the next index from a queue in
// shared memory when they are free (so a worker that drew long tasks does not
// keep the others waiting at the end). A worker dies with the process that
// forked it (PR_SET_PDEATHSIG), so a matrix stopped by a signal leaves no
// worker running cells behind it.
#pragma once

#include <cstddef>
#include <functional>

#include "redis/result.h"

namespace locklab::harness {

// Runs task(0) .. task(count - 1): in this process for one worker, else in
// `workers` forked ones (at most one per task), waited for. A task runs in a
// child, so it reports through files, not through memory. An Error when the
// queue cannot be mapped or a fork fails (the workers already started are
// waited for first).
Status run_pool(std::size_t count, int workers, const std::function<void(std::size_t)>& task);

}  // namespace locklab::harness
