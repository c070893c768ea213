#include "report/matrix_cells.h"

#include <algorithm>

namespace locklab::harness {

using nlohmann::json;

const std::vector<FaultColumn>& fault_columns() {
  static const std::vector<FaultColumn> all = {
      {"holder-crash", "holder crash", "1", "holder-crash: SIGKILL-like death inside the critical section", false,
       "the holder died inside its section (or after it, before its release returned), and another client tried "
       "afterwards"},
      {"holder-pause", "pause > TTL", "2", "holder-pause: SIGSTOP the holder process until another client acquired",
       false, "the holder was stopped inside its section past its lease's earliest end, while another client tried"},
      {"slow-holder", "slow CS > TTL", "3", "slow-holder: one critical section lasts 3 x ttl, process alive", false,
       "the section outlived its lease's earliest end while another client tried"},
      {"release-race", "check-then-DEL", "4",
       "holder-pause at the release window until another client got in and is inside", false,
       "the holder was stopped in its release window until another client had entered, and that client was still inside when it went on"},
      {"expire-gap", "SETNX/EXPIRE gap", "5", "holder-crash at after-setnx-before-expire", false,
       "the holder died between the two commands, leaving a key with no TTL, and another client tried afterwards"},
      {"clock-skew", "client clock skew", "6", "clock-skew: client 1's wall clock 5 x ttl ahead", false,
       "the skewed client, its clock ahead, tried while another client's lease was live and its clock read that lease as over"},
      {"failover", "failover", "7", "failover: replication held, master killed, replica promoted after the first acquire",
       /*topology=*/true, "the master was failed over while the holder was inside, and another client tried while it still was"},
      {"node-minority", "minority crash", "8", "node-crash: 2 of 5 nodes killed at start, never restarted",
       /*topology=*/true, "a minority of the lock's nodes was down while clients tried to acquire"},
      {"node-restart", "restart, no persistence", "9",
       "node-crash: the holder's node (Redlock: a majority) killed and restarted empty at once", /*topology=*/true,
       "the restarted node(s) came back without the holder's key (a majority of them lost it) while it was inside, and another client tried while it still was"},
      {"clock-jump", "node clock jump", "10",
       "clock-jump: node 0's wall clock +10 x ttl while a holder is inside (Redlock: one of its 3 nodes); waiters "
       "poll every 30 ms",
       /*topology=*/true, "a node holding the holder's key jumped past a lease of one ttl while the holder was inside, and another client tried while it still was"},
      {"net-cut", "net: holder cut", "11a", "net cut: the holder loses its lock-server links while it works 2 x ttl",
       /*topology=*/true, "the holder was cut off past its lease's earliest end while another client tried"},
      {"unavailable-release", "unavailable: release", "12", "unavailable: the release is refused", /*topology=*/true,
       "the holder's release could not reach the server, and another client tried from then on"},
  };
  return all;
}

const FaultColumn* find_column(std::string_view name) {
  for (const auto& column : fault_columns())
    if (column.name == name) return &column;
  return nullptr;
}

namespace {
// The classes whose verdict was "safe": the only ones the exposed mark applies to.
bool verdict_was_safe(CellClass cell_class) { return cell_class == CellClass::safe || cell_class == CellClass::liveness; }
}  // namespace

bool Cell::matches() const {
  if (unwritten) return true;
  const bool class_matches = observed == expected || std::ranges::find(also_expected, observed) != also_expected.end();
  return class_matches && (!verdict_was_safe(observed) || expected_exposed_either || exposed == expected_exposed);
}

std::string Cell::expected_text() const {
  if (unwritten) return "none written (a lock of your own)";
  std::string text = class_name(expected);
  for (CellClass also : also_expected) text += std::string(" or ") + class_name(also);
  if (expected_exposed_either) text += ", exposed or not";
  else if (expected_exposed) text += ", exposed";
  return text;
}

std::string Cell::observed_text() const {
  return std::string(class_name(observed)) + (exposed ? ", exposed" : "");
}

int MatrixResult::mismatches() const {
  return static_cast<int>(std::count_if(cells.begin(), cells.end(), [](const Cell& c) { return !c.matches(); }));
}

int MatrixResult::errors() const {
  return static_cast<int>(
      std::count_if(cells.begin(), cells.end(), [](const Cell& c) { return c.observed == CellClass::error; }));
}

const Cell* MatrixResult::find(std::string_view lock, std::string_view fault) const {
  for (const auto& cell : cells)
    if (cell.lock == lock && cell.fault == fault) return &cell;
  return nullptr;
}

json cell_json(const Cell& cell) {
  return {{"schema", kCellSchema},
          {"lock", cell.lock},
          {"fault", cell.fault},
          {"faults", cell.specs},
          {"observed", class_name(cell.observed)},
          {"exposed", cell.exposed},
          {"expected", cell.expected_text()},
          {"expected_reason", cell.expected_reason},
          {"matches", cell.matches()},
          {"not_applicable", cell.not_applicable.empty() ? json(nullptr) : json(cell.not_applicable)},
          {"error", cell.error.empty() ? json(nullptr) : json(cell.error)},
          {"observed_reason", cell.observed_reason.empty() ? json(nullptr) : json(cell.observed_reason)},
          {"run", cell.run}};
}

}  // namespace locklab::harness
