// Jump a Redis node's wall clock: the node must run under the clock shim
// (ServerOptions::clock_shim). Redis expires keys by CLOCK_REALTIME, so a jump
// forward past a key's remaining TTL expires it at once, on that node only.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "redis/result.h"

#include "servers/clock_shim/contract.h"
#include "servers/redis_server.h"

namespace locklab::harness {

// Replace the offset file atomically (temp file + rename): the shim in the
// server reads either the old offset or the new one. The offset is absolute
// (relative to the real clock), not added to the previous one: 0 undoes every jump.
Status write_clock_offset(const std::string& offset_file, std::chrono::milliseconds offset);

// The built clock shim (harness/servers/clock_shim/): the shared library that
// LD_PRELOAD puts into a process to shift its CLOCK_REALTIME by the offset in
// the file its environment names (servers/clock_shim/contract.h: redis-servers, and the clock-skew fault's adapters).
std::string clock_shim_path();
// The environment that puts a process under the shim, reading `offset_file`:
// LD_PRELOAD=<the shim> and LOCKLAB_CLOCK_OFFSET_ENV=<offset_file>.
std::vector<std::string> clock_shim_environment(const std::string& offset_file);
// Whether process `pid` has the clock shim mapped (/proc/PID/maps): its
// gettimeofday, time and clock_gettime are the shim's.
bool runs_clock_shim(pid_t pid);

// Set `server`'s wall-clock offset. The shim notices within about a millisecond;
// callers wait for the effect they need (TIME moved, a key gone), not for a time.
Status jump_clock(const RedisServer& server, std::chrono::milliseconds offset);

}  // namespace locklab::harness
