#include "history/metrics.h"

#include <algorithm>
#include <cmath>

namespace locklab::harness {

std::int64_t percentile(std::vector<std::int64_t> samples, double p) {
  if (samples.empty()) return 0;
  p = std::clamp(p, 0.0, 100.0);
  // Nearest rank: the smallest sample with at least p% of samples <= it.
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(samples.size())));
  rank = std::clamp<std::size_t>(rank, 1, samples.size());
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(rank - 1), samples.end());
  return samples[rank - 1];
}

double jain_index(const std::vector<std::int64_t>& per_client) {
  double sum = 0, sum_squares = 0;
  for (auto x : per_client) {
    sum += static_cast<double>(x);
    sum_squares += static_cast<double>(x) * static_cast<double>(x);
  }
  if (per_client.empty() || sum_squares == 0) return 1.0;
  return sum * sum / (static_cast<double>(per_client.size()) * sum_squares);
}

Quantiles quantiles(const std::vector<std::int64_t>& samples) {
  Quantiles q;
  q.count = static_cast<std::int64_t>(samples.size());
  if (samples.empty()) return q;
  q.p50 = percentile(samples, 50);
  q.p90 = percentile(samples, 90);
  q.p99 = percentile(samples, 99);
  q.max = *std::max_element(samples.begin(), samples.end());
  return q;
}

std::vector<std::int64_t> handoff_samples_ns(const std::vector<CsRecord>& by_enter) {
  std::vector<std::int64_t> samples;
  std::int64_t latest_exit = -1;
  std::uint32_t latest_exit_client = 0;
  for (const auto& section : by_enter) {
    if (latest_exit >= 0 && section.enter_ns >= latest_exit && section.client != latest_exit_client)
      samples.push_back(section.enter_ns - latest_exit);
    if (section.exit_ns > latest_exit) {
      latest_exit = section.exit_ns;
      latest_exit_client = section.client;
    }
  }
  return samples;
}

namespace {
std::vector<std::int64_t> to_us(std::vector<std::int64_t> ns) {
  for (auto& v : ns) v /= 1000;
  return ns;
}
}  // namespace

Metrics compute_metrics(const MetricsInput& input) {
  Metrics metrics;
  if (input.elapsed_ns > 0)
    metrics.acquisitions_per_s = static_cast<double>(input.acquired) * 1e9 / static_cast<double>(input.elapsed_ns);

  std::vector<std::int64_t> acquire, wait, hold;
  for (const auto& section : input.records) {
    acquire.push_back(section.enter_ns - section.invoke_ns);
    wait.push_back(section.enter_ns - section.want_ns);
    hold.push_back(section.exit_ns - section.enter_ns);
  }
  metrics.acquire_us = quantiles(to_us(acquire));
  metrics.wait_us = quantiles(to_us(wait));
  metrics.hold_us = quantiles(to_us(hold));
  metrics.handoff_us = quantiles(to_us(handoff_samples_ns(input.records)));

  std::int64_t max_wait_ns = 0;
  for (auto w : wait) max_wait_ns = std::max(max_wait_ns, w);
  for (auto w : input.open_waits_ns) max_wait_ns = std::max(max_wait_ns, w);
  metrics.max_wait_us = max_wait_ns / 1000;

  metrics.per_client_acquired = input.per_client_acquired;
  metrics.jain = jain_index(input.per_client_acquired);
  return metrics;
}

}  // namespace locklab::harness
