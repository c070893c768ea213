#include "counter_table.h"

#include <atomic>
#include <thread>

#include "registry.h"

namespace locklab::scenarios {

std::vector<DemoRow> demo_rows(const std::string& only) {
  std::vector<DemoRow> rows = {
      {"no lock", "no-lock", 1, "6", true},
      // The article's 106 is 100 increments from 6: its counter was not reset after the no-lock run.
      {"local mutex, 1 instance", "local-mutex", 1, "106 (from 6)", false},
      {"local mutex, 3 instances", "local-mutex", 3, "58", true},
  };
  for (const auto& generation : generations())
    if (generation.capabilities.uses_redis) rows.push_back({generation.name + ", 3 instances", generation.name, 3, "-", false});
  if (only.empty()) return rows;
  std::vector<DemoRow> chosen;
  for (auto& row : rows)
    if (row.lock_name == only) chosen.push_back(std::move(row));
  return chosen;
}

namespace {

// The lock setup of one instance (see the header: local-mutex gets a key per instance).
CounterSetup instance_setup(const CounterSetup& base, const DemoRow& row, int instance) {
  CounterSetup setup = base;
  setup.lock_name = row.lock_name;
  setup.lock.key = base.lock.key + ":" + row.lock_name;
  if (row.lock_name == "local-mutex") setup.lock.key += ":instance-" + std::to_string(instance);
  return setup;
}

}  // namespace

RowResult run_row(const CounterSetup& base, const DemoRow& row, const DemoLoad& load) {
  RowResult result;
  result.expected = 1 + load.requests;
  if (!reset_counter(base)) return result;

  std::vector<CounterSetup> instances;
  for (int i = 0; i < row.instances; ++i) instances.push_back(instance_setup(base, row, i));

  // ab's model: `concurrency` workers, each sending the next request as soon as its last one returns.
  std::atomic<int> next_request{0};
  std::atomic<std::size_t> incremented{0}, not_taken{0}, failed{0};
  std::vector<std::jthread> workers;
  for (int w = 0; w < load.concurrency; ++w)
    workers.emplace_back([&] {
      for (int request = next_request++; request < load.requests; request = next_request++) {
        // The front is round-robin: request i goes to instance i mod N.
        switch (increment_counter(instances[static_cast<std::size_t>(request % row.instances)])) {
          case RequestOutcome::incremented: ++incremented; break;
          case RequestOutcome::lock_not_taken: ++not_taken; break;
          default: ++failed; break;
        }
      }
    });
  workers.clear();  // joins

  result.incremented = incremented;
  result.lock_not_taken = not_taken;
  result.failed = failed;
  auto counter = read_counter(base);
  if (counter) {
    try {
      result.got = std::stoll(*counter);
    } catch (const std::exception&) {
      result.got = -1;
    }
  }
  const bool every_request_ran = result.incremented == static_cast<std::size_t>(load.requests);
  result.as_lesson = every_request_ran && (row.lesson_loses_updates ? result.got >= 1 && result.got < result.expected
                                                                    : result.got == result.expected);
  return result;
}

}  // namespace locklab::scenarios
