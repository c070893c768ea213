// What `locklab scale` measured (one point per lock and client count) and its
// renderings: scale.json, the scale.md table, the scale.svg chart, the
// scale.html page and the progress line. The sweep itself is scale.h.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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
  nlohmann::json run;  // the run's locklab.run document
  CpuShare cpu;
};

// The reference for any one-key lock, measured in the same sweep: one handoff
// takes the hold plus 4 round trips (acquire, GET, SET, release), so
// 1 / (hold + 4 RTT) acquisitions/s (issue 11). Not a hard ceiling: a polling
// lock's next acquire can be in flight while the release runs (about 3 RTT).
struct SerialLimit {
  double round_trip_us = 0;  // median of plain GETs on the lock server, before the sweep
  double hold_ms = 0;
  // 0 when the round trip was not measured.
  double per_s() const;
};

struct ScaleSweep {
  std::vector<ScalePoint> points;
  SerialLimit limit;
};

// The renderings, from the sweep (also used by tests).
nlohmann::json scale_document(const ScaleSweep& sweep);
std::string scale_markdown(const ScaleSweep& sweep);
std::string scale_svg(const ScaleSweep& sweep);
std::string scale_html(const ScaleSweep& sweep);
// One point for the sweep's progress on stderr: throughput, fairness, verdict.
std::string scale_progress_line(const ScalePoint& point);

}  // namespace locklab::harness
