// A generation's Lua script as what reads the traffic needs to know it: what
// it does (its role), its source and SHA-1 (an EVAL sends the one, an EVALSHA
// the other), and how many KEYS and ARGV it is called with. Each generation
// that runs scripts lists its own (X_scripts() in its header); the registry
// finds one by generation (registry.h, find_script), so a reader of a story
// (harness/scenario/lock_lanes.h) never guesses a script from its argument counts.
#pragma once

#include <string>

namespace locklab {

// What a script does to the lock key; its reply convention is the generation's
// (documented at the top of its .cpp).
enum class ScriptRole {
  compare_and_delete,  // KEYS[1] lock, ARGV[1] token: 1 deleted, 0 someone else's, -1 no key (g4, g6, g7)
  renew,               // KEYS[1] lock, ARGV[1] owner, ARGV[2] ttl ms: 1 lease set, 0 not ours (g5 watchdog, g6 extend)
  fenced_acquire,      // KEYS[1] lock, KEYS[2] counter, ARGV[1] token, ARGV[2] ttl ms: token > 0 acquired, 0 busy (g7)
  reentrant_acquire,   // KEYS lock, waiters; ARGV owner, ttl ms, ...: nil acquired, n busy (the holder's PTTL) (g5)
  reentrant_release,   // KEYS lock, waiters, channel; ARGV owner, ttl ms, ...: > 0 holds left, 0 deleted,
                       // -1 no key, -2 someone else's (g5)
  force_unlock,        // KEYS as reentrant_release, no owner check: 1 deleted, 0 no key (g5)
  leave_queue,         // KEYS as reentrant_release: a waiter leaves the queue; the lock is unchanged (g5)
  fair_acquire,        // KEYS lock, queue, timeouts; ARGV id, ttl ms, ...: nil acquired, n queued (g8)
  fair_release,        // KEYS as fair_acquire: 1 released (handed to the head), 0 someone else's, -1 no lock (g8)
  fair_leave,          // KEYS as fair_acquire: 1 handed to us meanwhile, 0 left the queue (g8)
};

struct ScriptShape {
  ScriptRole role;
  std::string source;
  std::string sha1;  // of source, lowercase hex, as SCRIPT LOAD answers it
  int keys = 0;
  int args = 0;
};

// A shape with its SHA-1 computed from `source`.
ScriptShape script_shape(ScriptRole role, std::string source, int keys, int args);

}  // namespace locklab
