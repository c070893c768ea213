// Who held the lock when, drawn: one timeline as inline SVG (the comparison
// draws one per run, the matrix page one per cell), the same made a file of its
// own, and the CSS its lane labels need on a page.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace locklab::harness {

// One timeline: {clients, sections: [[lane, from_ms, to_ms, fenced_off?]...], overlaps: [[from_ms, to_ms]...],
// labels?: [lane names], marks?, stalls?} -- a run's timeline_of() (run_header.h) or a scenario's.
std::string render_timeline(const nlohmann::json& timeline);
// An inline <svg> made a file of its own (namespace and XML declaration added).
std::string standalone_svg(std::string inline_svg);
// The rules a page with timelines adds to its CSS: SVG text in the page's font, the lanes' small grey labels.
std::string timeline_css();

}  // namespace locklab::harness
