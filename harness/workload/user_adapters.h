// The adapters a user brings to one command (issue 26, "Your lock,
// first-class"): `--adapter LABEL='CMD ARGS'` once per label, the single
// `--adapter 'CMD ARGS'` of `run --lock ext:LABEL`, and `--catalog FILE`, a
// catalog in the shipped one's format (workload/lock_catalog.h,
// read_catalog). `run`, `matrix` and `fleets` find a lock here before the
// shipped catalog, so two unshipped labels never share one command.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "redis/result.h"

#include "workload/lock_catalog.h"

namespace locklab::harness {

// What the flags said, as given.
struct AdapterFlags {
  std::vector<std::string> adapters;  // each --adapter: "LABEL=CMD ARGS" (LABEL with or without ext:), or one bare "CMD ARGS"
  std::string catalog;                // --catalog FILE; "" = none
  bool empty() const { return adapters.empty() && catalog.empty(); }
};

// The user's adapters of one command, one per label, in the order given
// (the catalog's entries first).
struct UserAdapters {
  std::vector<LockDescription> locks;
  const LockDescription* find(std::string_view name) const;
};

// The user's adapters for a command whose locks are `named` (its --lock or
// --fleet names, "ext:LABEL" among them). A usage Error, one line, for: a
// label given twice (two --adapter, or --adapter and a catalog entry), a
// label the shipped catalog has, an --adapter LABEL no name in `named` asks
// for, a bare command with no or several unshipped ext: names to bind to (or
// beside another bare one), a command that cannot be split, a malformed catalog.
Result<UserAdapters> user_adapters(const AdapterFlags& flags, const std::vector<std::string>& named);

// The first --adapter without a label ("" = none): what a run records as its `adapter`.
std::string bare_command(const AdapterFlags& flags);

// `name` among the user's adapters, else find_lock(name).
Result<LockDescription> find_lock(std::string_view name, const UserAdapters& user);

}  // namespace locklab::harness
