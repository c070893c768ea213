// A timeline drawn as SVG (timeline_svg.h): the lanes, the fault rows above
// them, the overlaps and the stalls on one time axis.
#include "report/timeline_svg.h"

#include <algorithm>
#include <sstream>
#include <utility>
#include <vector>

#include "report/html.h"
#include "support/text.h"

namespace locklab::harness {
namespace {

using nlohmann::json;

// The axis: every section, and every fault act and stall, however far from the
// sections they lie (a 994 ms stall after 7 ms of sections is the story).
std::pair<double, double> time_span(const json& t) {
  const json sections = t.value("sections", json::array());
  double from = sections.front()[1].get<double>(), to = from;
  for (const auto& s : sections) to = std::max(to, s[2].get<double>());
  for (const auto& m : t.value("marks", json::array())) {
    from = std::min(from, m.value("t_ms", from));
    to = std::max(to, m.value("t_ms", to));
  }
  for (const auto& st : t.value("stalls", json::array())) {
    from = std::min(from, st[0].get<double>());
    to = std::max(to, st[1].get<double>());
  }
  if (to <= from) to = from + 1;
  return {from, to};
}

// The rows above the clients' lanes: one per fault, a band from its first
// recorded act to its last and a tick at each (hover: what, when); then the
// stalls, an amber band each.
template <class X>
void fault_rows(std::ostringstream& svg, const json& t, const std::vector<std::string>& faults, X x, int left, int lane) {
  for (std::size_t f = 0; f < faults.size(); ++f) {
    const int y = static_cast<int>(f) * lane;
    double first = -1, last = -1;
    for (const auto& m : t["marks"])
      if (m.value("fault", std::string()) == faults[f]) {
        const double at = m.value("t_ms", 0.0);
        if (first < 0) first = at;
        last = at;
      }
    svg << "<text x=\"" << left - 6 << "\" y=\"" << y + 11 << "\" text-anchor=\"end\" class=\"lane\">"
        << html_escape(faults[f].substr(0, 14)) << "</text><rect x=\"" << fixed(x(first), 2) << "\" y=\"" << y + 3
        << "\" width=\"" << fixed(std::max(1.0, x(last) - x(first)), 2) << "\" height=\"" << lane - 6
        << "\" fill=\"#9467bd\" fill-opacity=\"0.3\"><title>" << html_escape(faults[f]) << ": " << fixed(first, 1)
        << "–" << fixed(last, 1) << " ms</title></rect>";
    for (const auto& m : t["marks"]) {
      if (m.value("fault", std::string()) != faults[f]) continue;
      svg << "<rect x=\"" << fixed(x(m.value("t_ms", 0.0)) - 1, 2) << "\" y=\"" << y + 1 << "\" width=\"2\" height=\""
          << lane - 2 << "\" fill=\"#6a3d9a\"><title>" << html_escape(faults[f]) << " at " << fixed(m.value("t_ms", 0.0), 2)
          << " ms: " << html_escape(m.value("what", std::string())) << "</title></rect>";
    }
  }
}

std::vector<std::string> fault_names(const json& t) {
  std::vector<std::string> names;
  for (const auto& m : t.value("marks", json::array())) {
    const std::string name = m.value("fault", std::string("?"));
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

template <class X>
void stall_bands(std::ostringstream& svg, const json& t, X x, int top, int height) {
  for (const auto& st : t.value("stalls", json::array())) {
    const double x0 = x(st[0].get<double>()), x1 = x(st[1].get<double>());
    svg << "<rect x=\"" << fixed(x0, 2) << "\" y=\"" << top << "\" width=\"" << fixed(std::max(2.0, x1 - x0), 2)
        << "\" height=\"" << height << "\" fill=\"#ff7f0e\" fill-opacity=\"0.25\" stroke=\"#ff7f0e\"><title>stall "
        << fixed(st[0].get<double>(), 0) << "–" << fixed(st[1].get<double>(), 0)
        << " ms: nobody inside while clients waited</title></rect>";
    if (x1 - x0 > 80)  // named where it is wide enough; the hover says it either way
      svg << "<text x=\"" << fixed(x0 + 4, 2) << "\" y=\"" << top + 11 << "\" class=\"lane\">stall "
          << fixed(st[1].get<double>() - st[0].get<double>(), 0) << " ms</text>";
  }
}

}  // namespace

// Who held the lock when (a run's "timeline" object): one lane per client, a bar per critical section,
// red bands where two or more were inside at once; above the lanes, a row per fault (its acts: when it
// began and ended) and the stalls, amber across the lanes (timeline_of() in run_header.h adds both).
std::string render_timeline(const json& t) {
  const json sections = t.value("sections", json::array());
  const json overlaps = t.value("overlaps", json::array());
  const int clients = std::clamp(t.value("clients", 1), 1, 256);  // the harness allows 256; a bigger number is no run of ours
  if (sections.empty())
    return "<svg width=\"300\" height=\"20\" role=\"img\"><text x=\"4\" y=\"14\">"
           "no critical sections recorded</text></svg>";
  const auto [from, to] = time_span(t);
  constexpr int kLeft = 90, kWidth = 800, kLane = 14;
  const std::vector<std::string> faults = fault_names(t);
  const int top = static_cast<int>(faults.size()) * kLane;  // the clients' lanes start below the fault rows
  const int height = top + clients * kLane + 26;
  auto x = [&](double ms) { return kLeft + (ms - from) / (to - from) * kWidth; };
  std::ostringstream svg;
  svg << "<svg width=\"" << kLeft + kWidth + 10 << "\" height=\"" << height << "\" role=\"img\">";
  fault_rows(svg, t, faults, x, kLeft, kLane);
  stall_bands(svg, t, x, top, clients * kLane);
  const json labels = t.value("labels", json::array());
  auto label = [&](int c) {
    return c < static_cast<int>(labels.size()) ? labels[static_cast<std::size_t>(c)].get<std::string>()
                                               : "client " + std::to_string(c);
  };
  for (int c = 0; c < clients; ++c)
    svg << "<text x=\"" << kLeft - 6 << "\" y=\"" << top + c * kLane + 11 << "\" text-anchor=\"end\" class=\"lane\">"
        << html_escape(label(c)) << "</text>";
  for (const auto& o : overlaps) {
    const double x0 = x(o[0].get<double>()), x1 = x(o[1].get<double>());
    svg << "<rect x=\"" << fixed(x0, 2) << "\" y=\"" << top << "\" width=\"" << fixed(std::max(1.0, x1 - x0), 2)
        << "\" height=\"" << clients * kLane << "\" fill=\"#d62728\" fill-opacity=\"0.25\"/>";
  }
  for (const auto& s : sections) {
    const int c = s[0].get<int>();
    const double x0 = x(s[1].get<double>()), x1 = x(s[2].get<double>());
    const bool fenced_off = s.size() > 3 && s[3].get<int>() != 0;
    bool overlapping = false;
    for (const auto& o : overlaps)
      if (s[1].get<double>() < o[1].get<double>() && o[0].get<double>() < s[2].get<double>()) overlapping = true;
    const char* colour = fenced_off ? "#aaaaaa" : overlapping ? "#d62728" : "#1f77b4";
    svg << "<rect x=\"" << fixed(x0, 2) << "\" y=\"" << top + c * kLane + 2 << "\" width=\"" << fixed(std::max(0.8, x1 - x0), 2)
        << "\" height=\"" << kLane - 4 << "\" fill=\"" << colour << "\"><title>" << html_escape(label(c)) << ": "
        << fixed(s[1].get<double>(), 2) << "–" << fixed(s[2].get<double>(), 2) << " ms"
        << (fenced_off ? " (stale token: refused by the resource)" : "") << "</title></rect>";
  }
  svg << "<text x=\"" << kLeft << "\" y=\"" << height - 6 << "\" class=\"lane\">" << fixed(from, 1)
      << " ms</text><text x=\"" << kLeft + kWidth << "\" y=\"" << height - 6 << "\" text-anchor=\"end\" class=\"lane\">"
      << fixed(to, 1) << " ms</text></svg>";
  return svg.str();
}

std::string standalone_svg(std::string inline_svg) {
  const std::string open = "<svg ";
  if (inline_svg.compare(0, open.size(), open) == 0)
    inline_svg.insert(open.size(), "xmlns=\"http://www.w3.org/2000/svg\" ");
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + inline_svg + "\n";
}

std::string timeline_css() {
  return "svg text{font-size:12px;font-family:system-ui,sans-serif}.lane{font-size:10px;fill:#555}";
}

}  // namespace locklab::harness
