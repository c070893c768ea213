// What `locklab scale` measured (one point per lock and client count) and its
// renderings: scale.json, the scale.md table, the scale.svg chart, the
// scale.html page and the progress line. The sweep itself is scale.h.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace locklab::harness {

// CPU used during one run, in seconds, and the wall time it used them in.
struct CpuShare {
  double wall_s = 0;
  double coordinator_s = 0;  // this process (in thread mode: the clients too)
  double clients_s = 0;      // reaped children: the client processes
  double servers_s = 0;      // INFO cpu of every server, delta
  unsigned cores = 1;
  // Percent of wall x cores.
  double percent(double seconds) const;
};

struct ScalePoint {
  std::string lock;
  int clients = 0;
  nlohmann::json run;  // the run's locklab.run/1 document
  CpuShare cpu;
};

// The renderings, from the points (also used by tests).
nlohmann::json scale_document(const std::vector<ScalePoint>& points);
std::string scale_markdown(const std::vector<ScalePoint>& points);
std::string scale_svg(const std::vector<ScalePoint>& points);
std::string scale_html(const std::vector<ScalePoint>& points);
// One point for the sweep's progress on stderr: throughput, fairness, verdict.
std::string scale_progress_line(const ScalePoint& point);

}  // namespace locklab::harness
