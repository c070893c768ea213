/* The clock shim's contract, in one place for its two sides: the shim (C,
 * clock_shim.c) reads it, the harness (C++: servers/clock_jump.h, the nodes of
 * servers/redis_server.h, the clock-skew fault) writes it. A process that
 * preloads the shim shifts its CLOCK_REALTIME by the milliseconds written in
 * the file this environment variable names; a missing file means 0. */
#ifndef LOCKLAB_CLOCK_SHIM_CONTRACT_H
#define LOCKLAB_CLOCK_SHIM_CONTRACT_H

/* The environment variable that names the offset file. */
#define LOCKLAB_CLOCK_OFFSET_ENV "LOCKLAB_CLOCK_OFFSET_FILE"

/* What the harness calls that file inside a folder of its own (a node's dir). */
#define LOCKLAB_CLOCK_OFFSET_BASENAME "clock-offset-ms"

#endif
