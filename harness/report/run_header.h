// What a report says about each run of its own, beside the table that sets
// runs side by side: the run's header (its lock, faults, clients, ttl and the
// command that made it), and its timeline with what happened to it in time --
// each fault's acts (the pause and the resume, the crash, the cut and the
// restore, the skew) and the stalls -- so that `locklab report` over runs
// made by different commands does not show one run's setup for all.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace locklab::harness {

// "setnx: fault holder-crash; 3 process clients, 9 attempts, hold 20 ms, ttl 500 ms, wait 1000 ms,
// retry 5 ms. Made by: `locklab run ...`" (no fault: "no fault").
std::string run_header(const nlohmann::json& run);

// How much the clients of a run did, from its "config": "400 attempts" (--ops) or "2.5 s" (--duration; "2.5 s each"
// when `each`, for the comparison's line that speaks of many runs); "" when the config records neither.
std::string workload_text(const nlohmann::json& config, bool each = false);

// Whether every run was made with the same setup (clients, mode, attempts or
// duration, hold, ttl, wait, retry, faults, steps, command): then one line says
// it for all; else each run needs its own header.
bool same_setup(const std::vector<nlohmann::json>& runs);

// The run's "timeline" object with two additions render_timeline() draws:
//   "marks":  [{"t_ms", "fault", "what"}...] every act of every fault, in time order;
//   "stalls": [[from_ms, to_ms]...] the stretches with nobody inside while clients waited.
nlohmann::json timeline_of(const nlohmann::json& run);

// One line per fault act and stall, for the Markdown report: "holder-crash at 3.4 ms: client 2 killed at ...".
std::vector<std::string> timeline_events(const nlohmann::json& run);

}  // namespace locklab::harness
