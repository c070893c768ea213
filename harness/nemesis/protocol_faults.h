// The holder faults at a protocol step point (docs/faults.md, "Protocol step
// points"): `holder-pause:at=resp:PATTERN` and `holder-crash:at=resp:PATTERN`
// stop or kill a client at a named moment of its algorithm without a step
// point in its code -- a library behind an adapter -- because the fault proxy
// parks the request that marks the moment (servers/resp_watch.h: GET>DEL is
// the delete after the owner check, SETNX>EXPIRE the expiry after the key).
//
//   pause  the request parks and the proxy SIGSTOPs the client at once (the
//          coordinator confirms the stop); the request stays parked; when the
//          pause ends (ms=, until=, max=: the same rules as at an in-process
//          point, counted from the arrival) the request goes on to the server,
//          then the process is SIGCONTed
//   crash  the request parks and the proxy SIGKILLs the client at once; once
//          it is dead (it and every member of its group) the request is
//          dropped and its links reset: it never reaches the server
// At once: a client whose own request timeout is shorter than a coordinator's
// tick (Redlock's per-node 5 ms) would otherwise give up on the reply and go on.
// A client that leads a process group of its own is signalled with its group
// (the adapter it started).
//
// Each client's links to every lock server are armed together (one ParkGroup,
// so for a multi-node lock the first match parks and the client's other links
// hold from then on); client=N arms only client N's. When: when=start (the
// default) arms them before the clients start (the SETNX/EXPIRE gap is inside
// the first acquire); when=holder arms a client's links once it first holds
// the lock, so only its release (or later) can match -- a Redlock client that
// loses a race runs the very release script to undo its partial acquire, and
// that undo must not be taken for the release. when=holder needs a critical
// section longer than the coordinator's tick (2 ms).
//
// Acted: a request parked and the client was stopped (pause: the stop
// confirmed from /proc) or killed (crash: its death and its group's seen
// within 2 s; a SIGKILL whose death was not seen does not count, and the
// request is dropped all the same). They need per-client proxies, so lock
// servers of our own, and client processes.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "redis/result.h"

#include "nemesis/fault.h"
#include "nemesis/fault_env.h"
#include "nemesis/fault_spec.h"
#include "nemesis/nemesis.h"

namespace locklab::harness {

// at=resp:PATTERN names a protocol step point; anything else is a step point in the client.
inline constexpr std::string_view kProtocolPointPrefix = "resp:";
bool is_protocol_point(std::string_view at);

// `at` is "resp:PATTERN"; client -1: any client (the first to match).
Result<std::unique_ptr<Fault>> make_protocol_pause(const FaultSpec& spec, const FaultEnv& options,
                                                   const std::string& at, int client, PauseRule rule);
Result<std::unique_ptr<Fault>> make_protocol_crash(const FaultSpec& spec, const FaultEnv& options,
                                                   const std::string& at, int client, int times);

}  // namespace locklab::harness
