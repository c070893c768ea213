// Metrics: speed, latency, fairness, handoff and cost, computed from the
// history. Noise moves the timing figures; the two cost figures (round trips
// and server commands per acquisition) are counts and barely move.
#pragma once

#include <cstdint>
#include <vector>

#include "history/history.h"

namespace locklab::harness {

// Nearest-rank percentile (p in [0, 100]) of unsorted samples; 0 when empty.
std::int64_t percentile(std::vector<std::int64_t> samples, double p);

// Jain's fairness index: (sum x)^2 / (n * sum x^2); 1 = perfectly even, 1/n =
// one client got everything. 1 when nobody got anything (nothing to be unfair about).
double jain_index(const std::vector<std::int64_t>& per_client);

struct Quantiles {
  std::int64_t p50 = 0, p90 = 0, p99 = 0, max = 0;
  std::int64_t count = 0;
};
Quantiles quantiles(const std::vector<std::int64_t>& samples);

// Handoff: from one section's exit (release invoked) to the next section's
// enter by a DIFFERENT client, whenever nobody was inside in between. The
// lock's "release -> next acquire" time under contention (what pub/sub
// wake-ups improve over polling).
std::vector<std::int64_t> handoff_samples_ns(const std::vector<CsRecord>& by_enter);

struct Metrics {
  double acquisitions_per_s = 0;
  Quantiles acquire_us;  // the successful try_acquire() call: invoke -> acquired
  Quantiles wait_us;     // the whole wait: first attempt -> acquired (across timed-out attempts)
  Quantiles hold_us;     // enter -> exit
  Quantiles handoff_us;
  double jain = 1.0;
  std::int64_t max_wait_us = 0;  // includes a wait still open when the run ended
  std::vector<std::int64_t> per_client_acquired;
};

struct MetricsInput {
  std::vector<CsRecord> records;  // sorted by enter_ns
  std::vector<std::int64_t> per_client_acquired;
  std::vector<std::int64_t> open_waits_ns;  // waits that never ended in an acquisition
  std::int64_t acquired = 0;
  std::int64_t elapsed_ns = 0;
};

Metrics compute_metrics(const MetricsInput& input);

}  // namespace locklab::harness
