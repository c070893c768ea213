// Creates a lock generation by its CLI name ("setnx", "lua-safe-delete", ...).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lock.h"
#include "script_shape.h"

namespace locklab {

// Whom a generation keeps out while it holds the lock.
enum class Exclusion {
  none,              // nobody (no-lock)
  within_process,    // other lock objects of this process only (local-mutex)
  across_processes,  // every client that uses the same servers
};

// What a successful release() call's reply counts, for a story that explains it.
enum class ReleaseReply {
  one_is_released,  // 1 (or "released"): the lock was freed
  holds_left,       // the holds left: > 0 still held, 0 released (generation 5; the reverse of seed 004 §8's script)
};

// What a generation promises, declared once here so that the harness, the
// benchmarks and tests/conformance_test.cpp ask "can it?" instead of "is it
// redlock?". The conformance suite holds every generation to exactly these.
struct Capabilities {
  bool uses_redis = true;                          // false: needs no server at all
  Exclusion exclusion = Exclusion::across_processes;
  bool expires = false;                // a lease: after ttl a stopped holder's lock is free for others
  bool owner_checked_release = false;  // release() never frees another client's hold
  bool reentrant = false;              // the holder may acquire again; released as often
  bool fencing = false;                // fencing_token(): increases from holder to holder
  bool multi_node = false;             // needs N independent masters (Redlock)
  bool notifies_waiters = false;       // a waiter wakes on release, not on its next poll
  bool honours_wait_replicas = false;  // LockConfig::wait_replicas (the failover guard) is implemented
  bool auto_extends = false;           // a holder's lease is renewed while its process runs (a watchdog):
                                       // only a stopped or dead holder loses it to the TTL
  // Where a race can be staged (step points, impls/step_points.h; each
  // generation's header lists its own). Facts about the lock, not about a test:
  // "" = the generation has no such point.
  std::string_view release_window = {};  // between the release's owner check (if any) and the delete;
                                         // a one-script release: the point just before the script
  std::string_view acquire_gap = {};     // between taking the key and giving it its expiry
  std::string_view wait_point = {};      // a waiter, refused, about to sleep until woken or its retry is due
  int ttl_resolution_ms = 1;             // the lease is LockConfig::ttl rounded up to a multiple of this
  ReleaseReply release_reply = ReleaseReply::one_is_released;
};

struct Generation {
  std::string name;      // CLI name
  std::string number;    // "0a", "1", "1b", ... as in docs/generations.md
  std::string summary;   // one line: how it locks
  std::string race;      // one line: what breaks it
  Capabilities capabilities;
  std::function<LockResult(const LockConfig&)> make;
  // A variant row (generation_variants()): the generation it runs, by name, and
  // why the row is kept. Empty for a generation itself.
  std::string variant_of = {};
  std::string variant_reason = {};
};

// All generations, in teaching order.
const std::vector<Generation>& generations();

// Rows that run a generation with one of its LockConfig switches set, each
// named "BASE+WHAT" so that it cannot be taken for its base, with variant_of
// and variant_reason. Not in generations(): what walks the generations (the
// conformance suite, the comparison, the quick matrix) stays as it was; a
// variant runs when named, or in a matrix of every row.
const std::vector<Generation>& generation_variants();

// A generation or a variant row, by name.
const Generation* find_generation(std::string_view name);

// Every step point generation `name` (or a variant row's base) calls (the
// list in its header, "Step points:"), in no particular order; empty for an
// unknown name or a lock with none. The harness refuses a --step at a point the run's lock never reaches.
const std::vector<std::string_view>& step_points(std::string_view name);

// Every Lua script generation `name` (or a variant row's base) runs, listed
// by the generation itself (its header); empty for a lock that runs none.
const std::vector<ScriptShape>& scripts(std::string_view name);

// The script of generation `name` (or a variant row's base) that an EVALSHA or an
// EVAL sent: `sha_or_body` is its SHA-1 (EVALSHA's argument; an EVAL's body
// hashed, redis/sha1.h) or its whole source. nullptr: not one of its scripts
// (or a generation without any).
const ScriptShape* find_script(std::string_view name, std::string_view sha_or_body);

// A lock of generation `name`, or an Error (unknown name, bad config, unreachable server).
LockResult make_lock(std::string_view name, const LockConfig& config);

}  // namespace locklab
