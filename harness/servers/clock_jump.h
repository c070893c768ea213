// Jump a Redis node's wall clock: the node must run under the clock shim
// (ServerOptions::clock_shim). Redis expires keys by CLOCK_REALTIME, so a jump
// forward past a key's remaining TTL expires it at once, on that node only.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

#include "servers/redis_server.h"
#include "redis/result.h"

namespace locklab::harness {

// Replace the offset file atomically (temp file + rename): the shim in the
// server reads either the old offset or the new one. The offset is absolute
// (relative to the real clock), not added to the previous one: 0 undoes every jump.
Status write_clock_offset(const std::string& offset_file, std::chrono::milliseconds offset);

// The built clock shim (harness/servers/clock_shim/): the shared library that
// LD_PRELOAD puts into a process to shift its CLOCK_REALTIME by the offset in
// $LOCKLAB_CLOCK_OFFSET_FILE (redis-servers, and the clock-skew fault's adapters).
std::string clock_shim_path();
// Whether process `pid` has the clock shim mapped (/proc/PID/maps): its
// gettimeofday, time and clock_gettime are the shim's.
bool runs_clock_shim(pid_t pid);

// Set `server`'s wall-clock offset. The shim notices within about a millisecond;
// callers wait for the effect they need (TIME moved, a key gone), not for a time.
Status jump_clock(const RedisServer& server, std::chrono::milliseconds offset);

}  // namespace locklab::harness
