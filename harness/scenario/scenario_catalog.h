// Every scenario binary, in teaching order: its name, where the story is told,
// one line of story, the race in the articles' terms and the generations it is
// told with. The one list `locklab scenarios` prints and docs/scenarios.md
// follows; the scenario mains take their ScenarioSpec from here
// (scenario_spec()), so the summary a class reads is the one the binary runs.
#pragma once

#include <string_view>
#include <vector>

#include "scenario/scenario.h"

namespace locklab::harness {

const std::vector<ScenarioSpec>& scenario_catalog();

// nullptr when no scenario has that name.
const ScenarioSpec* find_scenario(std::string_view name);

// The catalog's spec for a scenario main; a missing name is a build mistake
// (the main and the catalog disagree): one line on stderr, exit 1.
const ScenarioSpec& scenario_spec(std::string_view name);

}  // namespace locklab::harness
