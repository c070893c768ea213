// What a narrated line claims, as data (StepDetail::claims): the narration
// test (tests/narration_claims_test.py) checks every claim of every step
// against the story's recorded events -- the steps' times, requests and
// replies, and the server's own record of the lock key (the witness's
// keyspace feed, "server_log" in the document) -- for every lock, flag and
// language, so a new scenario's claims are checked without a new test.
//
// A claim names events by reference (REF):
//   "this"                       the claiming step
//   {"step": N}                  step N
//   {"death": W}                 the step that claims W's death
//   {"who": W, "which": "last" | "next" | "first", ...filters}
//                                W's last step before the claim, first after
//                                it, or first of the story, that matches every
//                                filter given: "kind" (command, enter, leave,
//                                narration), "command" (the request's first
//                                word, or a list of them), "effect" (the start
//                                of the step's effect on the lock key:
//                                "acquired", "refused")
//
// The claims:
//   {"dead": W}                  W died at this step: no step of W (nor of
//                                its threads, "W/...") follows it
//   {"before": [A, B]}           A happened before B: for commands, in the
//                                order the server ran them
//   {"unordered": [A, B]}        what was recorded cannot order A and B
//                                (the test checks that it indeed cannot)
//   {"within_lease": [E, ACQ]}   E happened before the lease ACQ took ran out
//   {"after_lease": [E, ACQ]}    E happened after the lease ACQ took ran out
//                                (the server's "expired" event came first)
//   {"none": SELECTOR}           no step of the story matches (a "who" and
//                                the filters above): "A never sends its DEL"
//   {"inside": W}                W is inside its critical section at this
//                                step: "while index2 still believes it holds it"
#pragma once

#include <initializer_list>
#include <string>

#include <nlohmann/json.hpp>

namespace locklab::harness::claim {

using nlohmann::json;

// References.
inline json this_step() { return "this"; }
inline json step(int number) { return {{"step", number}}; }
inline json death(const std::string& who) { return {{"death", who}}; }
// `filters`: {"kind", ...}, {"command", ...}, {"effect", ...} (see above).
inline json last(const std::string& who, json filters = json::object()) {
  filters["who"] = who;
  filters["which"] = "last";
  return filters;
}
inline json next(const std::string& who, json filters = json::object()) {
  filters["who"] = who;
  filters["which"] = "next";
  return filters;
}

// Claims.
inline json dead(const std::string& who) { return {{"dead", who}}; }
inline json before(json first, json then) { return {{"before", json::array({std::move(first), std::move(then)})}}; }
inline json unordered(json one, json other) {
  return {{"unordered", json::array({std::move(one), std::move(other)})}};
}
inline json within_lease(json event, json acquire) {
  return {{"within_lease", json::array({std::move(event), std::move(acquire)})}};
}
inline json after_lease(json event, json acquire) {
  return {{"after_lease", json::array({std::move(event), std::move(acquire)})}};
}
inline json inside(const std::string& who) { return {{"inside", who}}; }
inline json none(const std::string& who, json filters) {
  filters["who"] = who;
  return {{"none", std::move(filters)}};
}

}  // namespace locklab::harness::claim
