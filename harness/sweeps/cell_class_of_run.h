// What a run document says of its matrix cell: its class, why (where the
// counts do not say it), the "exposed" mark, and whether the fault's race ran
// at all. Read from the document alone; the cell's expectation is elsewhere
// (matrix_expectations.h).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "report/cell_class.h"

namespace locklab::harness {

// The class of one run document:
//   error        verdict "error" (the run could not judge)
//   me-violation overlapping sections, lost updates, or two live holders
//                (or any other violation the checker found that is not a wrong-owner release)
//   wrong-owner  wrong-owner releases and no mutual-exclusion violation
//   deadlock     verdict deadlock (a stall behind a key that never expires)
//   liveness     safe, but a stall, an unavailability window of half a lease or more, or a
//                library call blocked past the harness's bound (safety.blocked_calls)
//   safe         none of the above
CellClass classify(const nlohmann::json& run);

// Why the class, where the counts do not say it: the longest blocked library call, the
// adapters that exited ("" otherwise). The cell's observed_reason.
std::string observed_reason(const nlohmann::json& run);

// The "exposed" mark, apart from the class: the verdict is safe, yet a lease
// was lost under a holder and nobody happened to enter (the run document's
// `exposed`, or its `safety.leases_lost_nobody_entered`): safe by luck, not
// by design (docs/harness.md, "exposed").
bool exposed(const nlohmann::json& run);

// "not exercised: SPEC: what its bite saw" when a fault of the run did not
// bite (docs/harness.md, "Bite"): the cell cannot be at any class, its own
// expected one included; nullopt when every fault bit (or a client's adapter
// died on its own: that is the cell's finding).
std::optional<std::string> not_exercised(const nlohmann::json& run);

}  // namespace locklab::harness
