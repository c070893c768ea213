#include "report/scale_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "report/html.h"
#include "support/json_read.h"
#include "support/text.h"

namespace locklab::harness {
namespace {

using nlohmann::json;

// Locks in first-seen order, and the client counts in increasing order.
std::vector<std::string> locks_of(const std::vector<ScalePoint>& points) {
  std::vector<std::string> locks;
  for (const auto& point : points)
    if (std::find(locks.begin(), locks.end(), point.lock) == locks.end()) locks.push_back(point.lock);
  return locks;
}
std::vector<int> counts_of(const std::vector<ScalePoint>& points) {
  std::vector<int> counts;
  for (const auto& point : points) counts.push_back(point.clients);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}
const ScalePoint* find_point(const std::vector<ScalePoint>& points, const std::string& lock, int clients) {
  for (const auto& point : points)
    if (point.lock == lock && point.clients == clients) return &point;
  return nullptr;
}
// The run's verdict; `otherwise` when it has none (a point whose run failed to start).
std::string verdict_of(const json& run, const std::string& otherwise) {
  const std::string verdict = text_at(run, "/verdict");
  return verdict.empty() ? otherwise : verdict;
}
double throughput(const ScalePoint& point) { return number_at(point.run, "/throughput/acquisitions_per_s"); }

// Percent of the serial limit; 0 when the limit was not measured.
double percent_of_limit(const ScalePoint& point, const SerialLimit& limit) {
  return limit.per_s() > 0 ? 100.0 * throughput(point) / limit.per_s() : 0;
}

// "Serial limit: 1 / (hold 1 ms + 4 x 35.2 us) = 877 acquisitions/s"; empty when not measured.
std::string limit_line(const SerialLimit& limit) {
  if (limit.per_s() <= 0) return "";
  return "Serial limit: 1 / (hold " + fixed(limit.hold_ms, 0) + " ms + 4 × " + fixed(limit.round_trip_us, 1) +
         " µs round trip) = " + fixed(limit.per_s(), 0) +
         " acquisitions/s (the round trip: median of plain GETs on the lock server, measured before the sweep)";
}

// "redlock: 32 clients keep 83 % of its 8-client throughput" (issue 11's target: >= 70 %).
std::vector<std::string> keep_lines(const ScaleSweep& sweep) {
  const auto& points = sweep.points;
  std::vector<std::string> lines;
  for (const auto& lock : locks_of(points)) {
    const ScalePoint* eight = find_point(points, lock, 8);
    const ScalePoint* many = find_point(points, lock, 32);
    if (eight == nullptr || many == nullptr || throughput(*eight) <= 0) continue;
    std::string line = lock + ": 32 clients keep " + fixed(100.0 * throughput(*many) / throughput(*eight), 0) +
                       " % of the 8-client throughput";
    if (sweep.limit.per_s() > 0) {
      line += "; of the serial limit: " + fixed(percent_of_limit(*eight, sweep.limit), 0) + " % at 8 clients";
      const int most = counts_of(points).back();
      if (const ScalePoint* widest = find_point(points, lock, most); widest != nullptr && most > 8)
        line += ", " + fixed(percent_of_limit(*widest, sweep.limit), 0) + " % at " + std::to_string(most);
    }
    lines.push_back(line);
  }
  return lines;
}

std::string svg_line_chart(const ScaleSweep& sweep) {
  const auto& points = sweep.points;
  static const char* const kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                         "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939"};
  constexpr int kLeft = 70, kTop = 30, kWidth = 560, kHeight = 300, kLegend = 190;
  const auto locks = locks_of(points);
  const auto counts = counts_of(points);
  double max = 0;
  for (const auto& point : points) max = std::max(max, throughput(point));
  max = std::max(max, sweep.limit.per_s());
  if (max <= 0) max = 1;
  // Clients on a log2 axis: 1, 2, 4 ... 64 evenly spaced.
  const double lo = counts.empty() ? 0 : std::log2(std::max(1, counts.front()));
  const double hi = counts.empty() ? 1 : std::max(lo + 1, std::log2(std::max(1, counts.back())));
  auto x = [&](int clients) { return kLeft + (std::log2(std::max(1, clients)) - lo) / (hi - lo) * kWidth; };
  auto y = [&](double value) { return kTop + kHeight - value / max * kHeight; };

  std::ostringstream svg;
  svg << "<svg width=\"" << kLeft + kWidth + kLegend + 20 << "\" height=\"" << kTop + kHeight + 50
      << "\" role=\"img\" aria-label=\"acquisitions per second against clients\">"
      << "<style>text{font-size:12px;font-family:system-ui,sans-serif}</style>"
      << "<text x=\"" << kLeft << "\" y=\"18\" font-weight=\"bold\">Acquisitions/s against clients</text>"
      << "<line x1=\"" << kLeft << "\" y1=\"" << kTop + kHeight << "\" x2=\"" << kLeft + kWidth << "\" y2=\""
      << kTop + kHeight << "\" stroke=\"#444\"/><line x1=\"" << kLeft << "\" y1=\"" << kTop << "\" x2=\"" << kLeft
      << "\" y2=\"" << kTop + kHeight << "\" stroke=\"#444\"/>";
  for (int tick = 0; tick <= 4; ++tick) {
    const double value = max * tick / 4;
    svg << "<text x=\"" << kLeft - 6 << "\" y=\"" << fixed(y(value) + 4, 1) << "\" text-anchor=\"end\">"
        << fixed(value, 0) << "</text><line x1=\"" << kLeft << "\" y1=\"" << fixed(y(value), 1) << "\" x2=\""
        << kLeft + kWidth << "\" y2=\"" << fixed(y(value), 1) << "\" stroke=\"#eee\"/>";
  }
  for (int clients : counts)
    svg << "<text x=\"" << fixed(x(clients), 1) << "\" y=\"" << kTop + kHeight + 16 << "\" text-anchor=\"middle\">"
        << clients << "</text>";
  svg << "<text x=\"" << kLeft + kWidth / 2 << "\" y=\"" << kTop + kHeight + 36
      << "\" text-anchor=\"middle\">clients (log scale)</text>";
  if (const double limit = sweep.limit.per_s(); limit > 0)
    svg << "<line x1=\"" << kLeft << "\" y1=\"" << fixed(y(limit), 1) << "\" x2=\"" << kLeft + kWidth << "\" y2=\""
        << fixed(y(limit), 1) << "\" stroke=\"#000\" stroke-dasharray=\"6 4\"><title>serial limit " << fixed(limit, 0)
        << "/s</title></line><text x=\"" << kLeft + kWidth - 4 << "\" y=\"" << fixed(y(limit) - 5, 1)
        << "\" text-anchor=\"end\">serial limit 1/(hold + 4 RTT)</text>";
  for (std::size_t l = 0; l < locks.size(); ++l) {
    const char* colour = kColours[l % (sizeof kColours / sizeof kColours[0])];
    std::ostringstream path;
    for (int clients : counts) {
      const ScalePoint* point = find_point(points, locks[l], clients);
      if (point == nullptr) continue;
      path << (path.tellp() == 0 ? "" : " ") << fixed(x(clients), 1) << "," << fixed(y(throughput(*point)), 1);
      svg << "<circle cx=\"" << fixed(x(clients), 1) << "\" cy=\"" << fixed(y(throughput(*point)), 1)
          << "\" r=\"3\" fill=\"" << colour << "\"><title>" << locks[l] << ", " << clients
          << " clients: " << fixed(throughput(*point), 0) << "/s</title></circle>";
    }
    svg << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\" points=\"" << path.str() << "\"/>";
    const int ly = kTop + 10 + static_cast<int>(l) * 18;
    svg << "<rect x=\"" << kLeft + kWidth + 20 << "\" y=\"" << ly - 9 << "\" width=\"12\" height=\"12\" fill=\""
        << colour << "\"/><text x=\"" << kLeft + kWidth + 38 << "\" y=\"" << ly + 1 << "\">" << locks[l] << "</text>";
  }
  svg << "</svg>";
  return svg.str();
}

struct Row {
  std::vector<std::string> cells;
};

const std::vector<std::string>& detail_titles() {
  static const std::vector<std::string> titles = {
      "lock", "clients", "verdict", "acq/s", "% serial limit", "Jain", "wait p99 ms", "max wait ms", "abandoned", "RT/acq",
      "srv cmds/acq", "coordinator CPU %", "clients CPU %", "servers CPU %"};
  return titles;
}

std::vector<Row> detail_rows(const ScaleSweep& sweep) {
  const auto& points = sweep.points;
  std::vector<Row> rows;
  for (const auto& lock : locks_of(points))
    for (int clients : counts_of(points)) {
      const ScalePoint* p = find_point(points, lock, clients);
      if (p == nullptr) continue;
      const json& r = p->run;
      rows.push_back({{lock, std::to_string(clients), verdict_of(r, "(no run)"),
                       fixed(throughput(*p), 0),
                       sweep.limit.per_s() > 0 ? fixed(percent_of_limit(*p, sweep.limit), 0) : "—",
                       fixed(number_at(r, "/fairness/jain"), 2),
                       fixed(number_at(r, "/latency/wait_us/p99") / 1000.0, 1),
                       fixed(number_at(r, "/fairness/max_wait_us") / 1000.0, 1), fixed(number_at(r, "/totals/abandoned"), 0),
                       fixed(number_at(r, "/cost/round_trips_per_acquisition"), 1),
                       fixed(number_at(r, "/cost/server_commands_per_acquisition"), 1),
                       fixed(p->cpu.percent(p->cpu.coordinator_s), 1), fixed(p->cpu.percent(p->cpu.clients_s), 1),
                       fixed(p->cpu.percent(p->cpu.servers_s), 1)}});
    }
  return rows;
}

std::string config_line(const std::vector<ScalePoint>& points) {
  for (const auto& point : points) {
    if (!point.run.is_object() || !point.run.contains("config") || !point.run["config"].is_object()) continue;
    const json& c = point.run["config"];
    const json redis = point.run.contains("redis") && point.run["redis"].is_object() ? point.run["redis"] : json::object();
    std::ostringstream out;
    out << c.value("mode", std::string("?")) << " clients, " << c.value("duration_s", 0.0) << " s per point, hold "
        << c.value("hold_ms", 0) << " ms, ttl " << c.value("ttl_ms", 0) << " ms, wait " << c.value("wait_ms", 0)
        << " ms, retry " << c.value("retry_ms", 0) << " ms; Redis " << redis.value("version", std::string("?"))
        << ", " << point.cpu.cores << " cores";
    return out.str();
  }
  return "no run measured";
}

}  // namespace

double SerialLimit::per_s() const {
  if (round_trip_us <= 0) return 0;
  return 1e6 / (hold_ms * 1000.0 + 4.0 * round_trip_us);
}

double CpuShare::percent(double seconds_used) const {
  if (wall_s <= 0) return 0;
  return 100.0 * seconds_used / (wall_s * static_cast<double>(std::max(1u, cores)));
}

json scale_document(const ScaleSweep& sweep) {
  json rows = json::array();
  for (const auto& p : sweep.points) {
    rows.push_back({{"lock", p.lock},
                    {"clients", p.clients},
                    {"verdict", verdict_of(p.run, "error")},
                    {"acquisitions_per_s", throughput(p)},
                    {"percent_of_serial_limit", percent_of_limit(p, sweep.limit)},
                    {"jain", number_at(p.run, "/fairness/jain")},
                    {"wait_p99_us", number_at(p.run, "/latency/wait_us/p99")},
                    {"max_wait_us", number_at(p.run, "/fairness/max_wait_us")},
                    {"abandoned", number_at(p.run, "/totals/abandoned")},
                    {"round_trips_per_acquisition", number_at(p.run, "/cost/round_trips_per_acquisition")},
                    {"server_commands_per_acquisition", number_at(p.run, "/cost/server_commands_per_acquisition")},
                    {"cpu", {{"wall_s", p.cpu.wall_s},
                             {"cores", p.cpu.cores},
                             {"coordinator_s", p.cpu.coordinator_s},
                             {"clients_s", p.cpu.clients_s},
                             {"servers_s", p.cpu.servers_s},
                             {"coordinator_percent", p.cpu.percent(p.cpu.coordinator_s)},
                             {"clients_percent", p.cpu.percent(p.cpu.clients_s)},
                             {"servers_percent", p.cpu.percent(p.cpu.servers_s)}}}});
  }
  const json limit = {{"round_trip_us", sweep.limit.round_trip_us},
                      {"hold_ms", sweep.limit.hold_ms},
                      {"acquisitions_per_s", sweep.limit.per_s()}};
  return {{"schema", "locklab.scale/1"}, {"serial_limit", limit}, {"points", rows}, {"keeps", keep_lines(sweep)}};
}

std::string scale_markdown(const ScaleSweep& sweep) {
  const auto& points = sweep.points;
  std::ostringstream out;
  const auto counts = counts_of(points);
  out << "# locklab scale\n\n" << config_line(points) << "\n\n";
  if (const auto line = limit_line(sweep.limit); !line.empty()) out << line << "\n\n";
  out << "## Acquisitions/s against clients\n\n| lock |";
  for (int clients : counts) out << " " << clients << " |";
  out << "\n|---|";
  for (std::size_t i = 0; i < counts.size(); ++i) out << "---:|";
  out << "\n";
  for (const auto& lock : locks_of(points)) {
    out << "| " << lock << " |";
    for (int clients : counts) {
      const ScalePoint* p = find_point(points, lock, clients);
      out << " " << (p == nullptr ? "—" : fixed(throughput(*p), 0)) << " |";
    }
    out << "\n";
  }
  const auto keeps = keep_lines(sweep);
  if (!keeps.empty()) {
    out << "\n";
    for (const auto& line : keeps) out << "- " << line << "\n";
  }
  out << "\n## Every point: fairness, tail, cost and CPU\n\n|";
  for (const auto& title : detail_titles()) out << " " << title << " |";
  out << "\n|---|";
  for (std::size_t i = 1; i < detail_titles().size(); ++i) out << (i == 2 ? "---|" : "---:|");
  out << "\n";
  for (const auto& row : detail_rows(sweep)) {
    out << "|";
    for (const auto& cell : row.cells) out << " " << cell << " |";
    out << "\n";
  }
  out << "\nCPU % = CPU seconds / (wall seconds × cores) during the run (server start-up excluded, run set-up "
         "and judging included): coordinator = the harness's own process (in thread mode the clients too), "
         "clients = the client processes it reaped, servers = INFO cpu of the lock and counter servers.\n";
  return out.str();
}

std::string scale_svg(const ScaleSweep& sweep) { return svg_line_chart(sweep); }

std::string scale_html(const ScaleSweep& sweep) {
  const auto& points = sweep.points;
  std::ostringstream out;
  out << html_head("locklab scale", page_css(1200) + "td:first-child{text-align:left}.note{color:#666;font-size:13px}")
      << "<h1>locklab scale</h1>\n<p class=\"note\">"
      << config_line(points) << "</p>\n";
  if (const auto line = limit_line(sweep.limit); !line.empty()) out << "<p>" << line << "</p>\n";
  out << svg_line_chart(sweep) << "\n<ul>";
  for (const auto& line : keep_lines(sweep)) out << "<li>" << line << "</li>";
  out << "</ul>\n<table><tr>";
  for (const auto& title : detail_titles()) out << "<th>" << title << "</th>";
  out << "</tr>\n";
  for (const auto& row : detail_rows(sweep)) {
    out << "<tr>";
    for (const auto& cell : row.cells) out << "<td>" << cell << "</td>";
    out << "</tr>\n";
  }
  out << "</table>\n" << html_tail();
  return out.str();
}

std::string scale_progress_line(const ScalePoint& point) {
  char line[512];
  std::snprintf(line, sizeof line, "%-20s %3d clients %8.0f acq/s  Jain %.2f  max wait %.1f ms  %s", point.lock.c_str(),
                point.clients, throughput(point), number_at(point.run, "/fairness/jain"),
                number_at(point.run, "/fairness/max_wait_us") / 1000.0, verdict_of(point.run, "").c_str());
  return line;
}

}  // namespace locklab::harness
