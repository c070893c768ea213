// The step-through page of one scenario run: a `locklab.scenario/1` document
// (its steps as data and its view's lanes: harness/scenario/story_record.h)
// becomes one self-contained HTML page -- inline CSS and script, no network --
// for a teacher to project. The numbered steps sit beside a timeline with a
// lane per client (its critical sections, its steps' numbers) and per lock key
// (whose value the server holds, the lease running down to its end); Next /
// Back and the arrow keys move one step at a time, highlighting the step, its
// marker and its moment on the timeline, and showing who is inside and what
// each key holds at that step. The page's look and behaviour live beside this
// file in story_page.css and story_page.js (built into the binary).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace locklab::harness {

std::string story_page(const nlohmann::json& document);

}  // namespace locklab::harness
