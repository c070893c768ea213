// `locklab fine-grained`: seed 001's advice measured. K products, M client
// threads each locking the product it sells; sales/s per K on one master and on
// a 3-master Redis Cluster, and the check that nothing was oversold. A trial,
// not a sweep: it runs its own clients on its own servers, K lock keys at once,
// where measure() judges one key.
#pragma once

#include <string>
#include <vector>

#include "redis/result.h"

namespace locklab::harness {

struct SalesTrialOptions {
  std::string lock = "lua-safe-delete";
  int clients = 8;
  std::vector<int> keys{1, 16, 256};
  int units = 4096;
  std::string topology = "both";  // single | cluster | both
  std::string cluster;            // HOST:PORT of an existing cluster node
  int retry_ms = 1;
  int hold_ms = 1;  // the work done while holding a product's lock (an order being written)
  int wait_ms = 10'000;
};

// Runs every K on every topology, printing the table row by row and the verdict
// line. true: every run sold exactly the units stocked, no counter below zero;
// false: a run oversold or came up short; an Error: a run could not be made
// (its message names the topology).
Result<bool> run_sales_trial(const SalesTrialOptions& options);

}  // namespace locklab::harness
