#include "sweeps/matrix.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "nemesis/fault_registry.h"
#include "report/matrix_report.h"
#include "run/run_document.h"
#include "support/json_read.h"
#include "support/run_id.h"
#include "support/text.h"
#include "sweeps/adapter_declaration.h"
#include "sweeps/cell_class_of_run.h"
#include "sweeps/cell_pool.h"
#include "sweeps/matrix_expectations.h"

namespace locklab::harness {
namespace {

using nlohmann::json;

// The workload every cell starts from: small enough that ~120 cells fit in a
// few minutes on 2 cores, large enough that every fault meets a contender.
// The ttl leaves 480 ms of slack over the 20 ms hold: a client starved of CPU
// that long on a loaded machine is rare; at 200 ms it was not (a fair-queue
// holder lost its lease to scheduling alone, load average 15 on 2 cores).
constexpr int kTtlMs = 500;

RunOptions cell_workload(const LockDescription& generation, bool quick) {
  RunOptions options;
  options.lock = generation.name;
  options.clients = 3;
  options.ops = quick ? 9 : 30;
  // A lock whose lease is coarser than kTtlMs (setnx-expire's EXPIRE takes
  // whole seconds: 1 s) runs with the lease it gets, so every time derived from
  // the ttl (a slow section of 3 x ttl, a pause) is measured against that lease.
  const int resolution = std::max(generation.capabilities.ttl_resolution_ms, 1);
  options.ttl_ms = (kTtlMs + resolution - 1) / resolution * resolution;
  options.hold_ms = 20;      // << ttl: without the fault every Redis lock is safe
  options.wait_ms = 2 * options.ttl_ms;  // a contender outwaits one lapsed lease
  options.retry_ms = 5;
  options.mode = ClientMode::process;  // crash and pause need a process of its own
  options.nodes = 5;
  options.key = "locklab:matrix";
  options.own_oracle = true;  // every cell judged by both oracles: they must agree
  return options;
}

std::string duration_text(double seconds) {
  std::ostringstream out;
  out << seconds;
  return out.str();
}

// The `locklab run` line that replays one cell on its own.
std::string replay_command(const CellPlan& plan) {
  const RunOptions& o = plan.options;
  std::string line = "locklab run --lock " + o.lock + " --clients " + std::to_string(o.clients) +
                     (o.ops ? " --ops " + std::to_string(*o.ops) : " --duration " + duration_text(o.duration_s)) +
                     " --ttl " + std::to_string(o.ttl_ms) + " --hold " +
                     std::to_string(o.hold_ms) + " --wait " + std::to_string(o.wait_ms) + " --retry " +
                     std::to_string(o.retry_ms) + " --key " + o.key;
  if (o.stall_ms > 0) line += " --stall " + std::to_string(o.stall_ms);
  if (o.own_oracle) line += " --oracle";
  if (o.cluster) line += " --cluster";
  for (const auto& spec : plan.faults) line += " --fault " + shell_word(spec);
  if (const LockDescription* own = o.user_adapters.find(o.lock)) line += " " + own->given_as;
  return line;
}

// A row that is an adapter of the user's own: not a generation, not shipped.
bool users_row(const std::string& lock) { return lock.starts_with(kAdapterPrefix) && !is_shipped(lock); }

std::string cell_path(const std::string& dir, const std::string& lock, const std::string& fault) {
  return (std::filesystem::path(dir) / "cells" / (lock + "__" + fault + ".json")).string();
}

// A user's row: unwritten (what it does is the finding), unless --expect
// names the cell: then it is checked as a shipped one (sweeps/user_expectations.h).
Cell expected_of(Cell cell, std::span<const MatrixColumn> table, const UserExpectations* expect = nullptr) {
  if (users_row(cell.lock)) {
    cell.unwritten = true;
    cell.expected = cell.observed;
    cell.expected_reason = "a lock of your own: no class is written down for it; the observed one is the finding";
    return expect != nullptr ? with_user_expectation(std::move(cell), *expect) : cell;
  }
  if (auto expectation = expected_cell(cell.lock, cell.fault, table)) {
    cell.expected = expectation->expected;
    cell.also_expected = expectation->or_else;
    cell.expected_exposed = expectation->exposed;
    cell.expected_exposed_either = expectation->exposed_either;
    cell.expected_reason = expectation->reason;
  } else {
    cell.expected = CellClass::error;
    cell.expected_reason = "no expectation written down for this cell (a generation's: its column's record, harness/sweeps/matrix_columns.cpp; a library row's: its catalog entry, " + peers_dir() + "/catalog.json)";
  }
  return cell;
}

// Measures one cell (or records why it is N/A) and writes its file.
Cell measure_cell(const std::string& dir, const LockDescription& generation, const MatrixColumn& column,
                  const MatrixOptions& options) {
  Cell cell;
  cell.lock = generation.name;
  cell.fault = column.heading.name;
  CellPlan plan = plan_cell(generation, column, options.quick);
  if (generation.is_adapter() && !generation.shipped) plan.options.user_adapters.locks = {generation};
  cell.specs = plan.faults;
  if (!plan.not_applicable.empty()) {
    cell.observed = CellClass::not_applicable;
    cell.not_applicable = plan.not_applicable;
  } else if (plan.faults.empty()) {  // a run with no fault has no race to judge: never `safe`
    cell.observed = CellClass::error;
    cell.error = "the column injected no fault (its record has no plan), so its race cannot have run";
  } else {
    plan.options.command = replay_command(plan);
    plan.options.faults = plan.faults;
    auto document = measure(plan.options);
    if (!document) {
      cell.observed = CellClass::error;
      cell.error = one_line(document.error().message);
    } else {
      (*document)["config"]["json"] = cell_path(dir, cell.lock, cell.fault);
      cell.observed = classify(*document);
      cell.observed_reason = observed_reason(*document);
      cell.exposed = exposed(*document);
      if (auto why = not_exercised(*document)) {  // whatever it read, the race never ran
        cell.observed = CellClass::error;
        cell.error = *why;
      }
      cell.run = std::move(*document);
    }
  }
  cell = expected_of(std::move(cell), options.columns, &options.expect);
  if (auto written = write_json_atomically(cell_path(dir, cell.lock, cell.fault), cell_json(cell)); !written) {
    cell.observed = CellClass::error;
    cell.error = written.error().message;
  }
  return cell;
}

// The --expect check a user's cell file records (its expected_reason names
// the file, its `expected` the classes: "safe" or "safe or liveness", then
// ", exposed or not"), as an expectation of that one cell; nullopt for any other.
std::optional<UserExpectations> expectation_in_file(const std::string& lock, const std::string& fault,
                                                    const json& document) {
  const std::string reason = text_at(document, "/expected_reason");
  if (!users_row(lock) || !reason.starts_with(kExpectReason)) return std::nullopt;
  std::string text = text_at(document, "/expected");
  text = text.substr(0, text.find(','));
  const auto split = text.find(" or ");
  const auto first = parse_class(text.substr(0, split));
  if (!first) return std::nullopt;
  UserExpectations expect;
  // The file name runs to the reason's fixed end (a path may hold a ':').
  const std::size_t from = std::string_view(kExpectReason).size();
  expect.file = reason.substr(from, reason.rfind(kExpectReasonEnd) - from);
  expect.rows[lock][fault].expected = *first;
  if (split != std::string::npos) expect.rows[lock][fault].or_else = parse_class(text.substr(split + 4));
  return expect;
}

Result<Cell> load_cell(const std::string& path, std::span<const MatrixColumn> table) {
  std::ifstream in(path);
  if (!in) return Error{ErrorKind::io, "cannot read " + path};
  const json document = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || document.value("schema", "") != kCellSchema)
    return Error{ErrorKind::io, path + " is not a " + kCellSchema + " document"};
  Cell cell;
  cell.lock = text_at(document, "/lock");
  cell.fault = text_at(document, "/fault");
  cell.specs = document.value("faults", std::vector<std::string>{});
  cell.observed = parse_class(text_at(document, "/observed")).value_or(CellClass::error);
  cell.exposed = document.value("exposed", false);
  cell.not_applicable = text_at(document, "/not_applicable");
  cell.error = text_at(document, "/error");
  cell.observed_reason = text_at(document, "/observed_reason");
  cell.run = document.value("run", json());
  const auto expect = expectation_in_file(cell.lock, cell.fault, document);
  return expected_of(std::move(cell), table, expect ? &*expect : nullptr);
}

void announce(const Cell& cell, std::size_t index, std::size_t total) {
  std::string detail = cell.error.empty() ? "" : " (" + cell.error + ")";
  std::fprintf(stderr, "locklab matrix: [%zu/%zu] %s x %s: %s%s%s\n", index + 1, total, cell.lock.c_str(),
               cell.fault.c_str(), cell.observed_text().c_str(),
               cell.matches() ? "" : (" -- expected " + cell.expected_text()).c_str(), detail.c_str());
}

struct Job {
  LockDescription generation;  // a generation, or a library through its adapter (workload/lock_catalog.h)
  const MatrixColumn* column;
};

// Why this build cannot inject the column's faults (a fault or key the
// registry does not know), or nullopt when it can.
std::optional<std::string> column_not_injectable(const MatrixColumn& column) {
  for (const auto& generation : generations())
    for (const auto& spec : plan_cell(generation, column, true).faults)
      if (auto problem = fault_spec_problem(spec)) return *problem;
  return std::nullopt;
}

// The default rows: every generation (and, in a matrix of every row, each
// generation's variant rows), then every shipped peer whose adapter can run
// here (one line on stderr names the peers left out and why), then the user's
// own adapters.
std::vector<std::string> default_rows(const UserAdapters& user, bool all_libraries) {
  std::vector<std::string> locks;
  for (const auto& generation : generations()) locks.push_back(generation.name);
  if (all_libraries)  // a variant, as the catalog's: in the full matrix and --libraries all
    for (const auto& variant : generation_variants()) locks.push_back(variant.name);
  std::string skipped, why;
  for (const auto& peer : catalog_peers()) {
    if (!all_libraries && !peer.main_row) continue;  // a variant: in the full matrix and --libraries all
    if (const std::string missing = missing_prerequisite(peer); !missing.empty()) {
      skipped += (skipped.empty() ? "" : ", ") + peer.name;
      // Each reason once: the npm modules' for every JavaScript row, a Go binary's or the Java build's for each of theirs.
      if (why.find(missing) == std::string::npos) why += (why.empty() ? "" : "; ") + missing;
      continue;
    }
    locks.push_back(peer.name);
  }
  if (!skipped.empty()) std::fprintf(stderr, "locklab matrix: peers skipped (%s): %s\n", skipped.c_str(), why.c_str());
  for (const auto& own : user.locks) locks.push_back(own.name);
  return locks;
}

// The rows: the --lock names, or default_rows(); a usage Error names an
// unknown one, or a peer whose adapter cannot run here.
Result<std::vector<std::string>> select_rows(const MatrixOptions& options) {
  if (!options.libraries.empty() && options.libraries != "main" && options.libraries != "all")
    return Error{ErrorKind::usage, option_problem("--libraries", "'" + options.libraries + "' is not main or all")};
  const bool all = options.libraries.empty() ? !options.quick : options.libraries == "all";
  const std::vector<std::string> locks = options.locks.empty() ? default_rows(options.user, all) : options.locks;
  for (const auto& lock : locks) {
    if (std::count(locks.begin(), locks.end(), lock) > 1)
      return Error{ErrorKind::usage, option_problem("--lock", lock + " is given twice")};
    auto found = find_lock(lock, options.user);
    if (!found) return Error{ErrorKind::usage, option_problem("--lock", found.error().message)};
    if (const std::string missing = missing_prerequisite(*found); !missing.empty())
      return Error{ErrorKind::usage, "--lock " + lock + ": " + missing};
  }
  return locks;
}

// Each variant row's note for the page: "variant of ext:BASE: why", or of a
// generation "variant of BASE: why" (lock_catalog.h).
std::map<std::string, std::string> variant_notes(const std::vector<std::string>& locks) {
  std::map<std::string, std::string> notes;
  for (const auto& lock : locks)
    if (auto found = find_lock(lock); found && !found->variant_of.empty())
      notes[lock] = "variant of " + std::string(found->is_adapter() ? kAdapterPrefix : "") + found->variant_of + ": " +
                    found->variant_reason;
  return notes;
}

// Each row's generation number ("ext" for a library, the user's too), and
// every generation's, for the report.
std::map<std::string, std::string> row_numbers(const std::vector<std::string>& locks) {
  std::map<std::string, std::string> numbers;
  for (const auto& generation : generations()) numbers[generation.name] = generation.number;
  for (const auto& lock : locks)
    if (lock.starts_with(kAdapterPrefix)) numbers[lock] = "ext";
    else if (const Generation* variant = find_generation(lock)) numbers[lock] = variant->number;
  return numbers;
}

// The generations the matrix did not measure, as their written expectations
// say they behave (MatrixResult::written): a library row, a user's above all
// (`--lock ext:mine` alone), still gets a nearest generation without a
// generation row measured beside it. None without a library row.
std::vector<Cell> written_rows(const MatrixResult& result, std::span<const MatrixColumn> table) {
  std::vector<Cell> written;
  const auto has = [&](const std::string& lock) {
    return std::find(result.locks.begin(), result.locks.end(), lock) != result.locks.end();
  };
  if (std::none_of(result.locks.begin(), result.locks.end(), [](const auto& l) { return l.starts_with(kAdapterPrefix); }))
    return written;
  for (const auto& generation : generations()) {
    if (has(generation.name)) continue;
    for (const auto& fault : result.faults) {
      Cell cell;
      cell.lock = generation.name;
      cell.fault = fault;
      if (const MatrixColumn* column = find_matrix_column(fault, table);
          column && !column_not_applicable(generation, *column).empty())
        cell.observed = CellClass::not_applicable;
      else if (auto expectation = expected_cell(generation.name, fault, table))
        cell.observed = expectation->expected;
      else
        continue;  // nothing written: not compared
      cell = expected_of(std::move(cell), table);
      cell.exposed = cell.expected_exposed;
      written.push_back(std::move(cell));
    }
  }
  return written;
}

// The columns, in the columns' order whatever the flags' order: the --fault
// names (a usage Error for an unknown or uninjectable one), or every column
// this build can inject (the others left out with a line on stderr).
Result<std::vector<std::string>> select_columns(const MatrixOptions& options) {
  for (const auto& fault : options.faults) {
    const MatrixColumn* column = find_matrix_column(fault, options.columns);
    if (column == nullptr) {
      std::string known;
      for (const auto& each : options.columns) known += (known.empty() ? "" : ", ") + each.heading.name;
      return Error{ErrorKind::usage, "--fault: unknown matrix column '" + fault + "' (one of: " + known + ")"};
    }
    if (auto missing = column_not_injectable(*column))
      return Error{ErrorKind::usage, "--fault: " + fault + " cannot be injected by this build (" + *missing + ")"};
  }
  std::vector<std::string> faults;
  if (options.faults.empty()) {
    for (const auto& column : options.columns) {
      if (auto missing = column_not_injectable(column)) {
        std::fprintf(stderr, "locklab matrix: column %s left out: %s\n", column.heading.name.c_str(), missing->c_str());
        continue;
      }
      faults.push_back(column.heading.name);
    }
  } else {
    for (const auto& column : options.columns)
      if (std::find(options.faults.begin(), options.faults.end(), column.heading.name) != options.faults.end())
        faults.push_back(column.heading.name);
  }
  return faults;
}

// The matrix to measure, without its cells: rows, columns and a directory
// with its cells/ folder made; or a usage Error (bad options), an io one.
Result<MatrixResult> select_cells(const MatrixOptions& options) {
  MatrixResult result;
  result.quick = options.quick;
  result.lang = options.lang;
  result.command = options.command;
  if (options.jobs < 1 || options.jobs > 8) return Error{ErrorKind::usage, "--jobs: must be between 1 and 8"};
  auto locks = select_rows(options);
  if (!locks) return locks.error();
  result.locks = std::move(*locks);
  result.numbers = row_numbers(result.locks);
  result.variant_notes = variant_notes(result.locks);
  auto faults = select_columns(options);
  if (!faults) return faults.error();
  result.faults = std::move(*faults);
  for (const auto& fault : result.faults) result.columns.push_back(find_matrix_column(fault, options.columns)->heading);
  auto dir = result_dir(options.out, "results/matrix");
  if (!dir) return dir.error();
  result.dir = *dir;
  if (auto cells = result_dir((std::filesystem::path(result.dir) / "cells").string(), ""); !cells) return cells.error();
  return result;
}

// A rough weight of a cell's wall time, for the order the workers take them
// in: a topology column runs for a time and waits on its fault's patience, an
// adapter starts an interpreter per client, an n/a cell measures nothing.
int cell_weight(const Job& job) {
  if (!column_not_applicable(job.generation, *job.column).empty()) return 0;
  return (job.column->timed ? 3 : 1) * (job.generation.is_adapter() ? 2 : 1);
}

// Every cell, the heaviest first (then row-major): the last cells to start are
// short ones, so the workers finish together.
std::vector<Job> jobs_of(const MatrixResult& result, const UserAdapters& user, std::span<const MatrixColumn> table) {
  std::vector<Job> jobs;
  for (const auto& lock : result.locks)
    for (const auto& fault : result.faults) jobs.push_back({find_lock(lock, user).value(), find_matrix_column(fault, table)});
  std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return cell_weight(a) > cell_weight(b); });
  return jobs;
}

// Measures the cells, each into its file: in this process for one worker,
// else in options.jobs forked workers (sweeps/cell_pool.h), waited for.
Status measure_cells(const std::string& dir, const std::vector<Job>& jobs, const MatrixOptions& options) {
  return run_pool(jobs.size(), options.jobs, [&](std::size_t i) {
    const Cell cell = measure_cell(dir, jobs[i].generation, *jobs[i].column, options);
    if (options.progress) announce(cell, i, jobs.size());
  });
}

// One cell from its file. A file that is missing or unreadable is a cell of
// class error saying why.
Cell cell_from_file(const std::string& dir, const std::string& lock, const std::string& fault,
                    std::span<const MatrixColumn> table) {
  auto cell = load_cell(cell_path(dir, lock, fault), table);
  if (cell) return std::move(*cell);
  Cell lost;
  lost.lock = lock;
  lost.fault = fault;
  lost.error = cell.error().message;
  return expected_of(std::move(lost), table);
}

// Every cell from its file: one path for one worker or several.
std::vector<Cell> collect_cells(const std::string& dir, const std::vector<Job>& jobs, std::span<const MatrixColumn> table) {
  std::vector<Cell> cells;
  for (const auto& job : jobs) cells.push_back(cell_from_file(dir, job.generation.name, job.column->heading.name, table));
  return cells;
}

// The columns' headings a matrix.json recorded; a column it does not record (a
// matrix measured before it recorded them) gets today's heading from the table,
// and one the table does not know none (the report shows its bare name).
std::vector<ColumnHeading> headings_of(const json& summary, const std::vector<std::string>& faults) {
  std::vector<ColumnHeading> recorded;
  if (const auto columns = summary.find("columns"); columns != summary.end() && columns->is_array())
    for (const auto& column : *columns)
      if (auto heading = parse_heading(column)) recorded.push_back(std::move(*heading));
  std::vector<ColumnHeading> headings;
  for (const auto& fault : faults) {
    const auto found = std::find_if(recorded.begin(), recorded.end(), [&](const auto& h) { return h.name == fault; });
    if (found != recorded.end()) headings.push_back(*found);
    else if (const MatrixColumn* column = find_matrix_column(fault)) headings.push_back(column->heading);
  }
  return headings;
}

}  // namespace

CellPlan plan_cell(const LockDescription& generation, const MatrixColumn& column, bool quick) {
  CellPlan plan;
  plan.options = cell_workload(generation, quick);
  plan.not_applicable = column_not_applicable(generation, column);
  if (!plan.not_applicable.empty()) return plan;
  // Topology faults act once and leave the others erroring for a moment (a
  // cut link, a dead node): a budget of attempts would be spent on those
  // errors before the second holder shows, so these cells run for a time.
  if (column.timed) {
    plan.options.ops.reset();
    plan.options.duration_s = quick ? 1.5 : 4.0;
  }
  if (column.plan) column.plan(plan, generation, quick);  // none: no fault, and measure_cell reads `error`
  return plan;
}

Result<std::vector<std::string>> matrix_rows(const MatrixOptions& options) { return select_rows(options); }

// A cell file: a regular file LOCK__COLUMN.json holding a locklab.matrix-cell document.
bool is_cell_file(const std::filesystem::directory_entry& entry) {
  const std::string name = entry.path().filename().string();
  std::error_code error;
  if (!entry.is_regular_file(error) || entry.path().extension() != ".json" || name.find("__") == std::string::npos)
    return false;
  std::ifstream in(entry.path());
  const json document = json::parse(in, nullptr, /*allow_exceptions=*/false);
  return !document.is_discarded() && document.is_object() && document.value("schema", "") == kCellSchema;
}

// A matrix written to an --out that an earlier one used keeps only its own
// cells and report: its matrix.json lists this run's cells, and a cell file an
// earlier run left there (another row, an older schedule) reads as one of
// them to anyone opening the folder (results/reference kept 96 such files for
// a while); an earlier report would describe cells that are gone if this run
// ended early. Only cell documents and the report go; other files stay.
Status remove_earlier_matrix(const std::string& dir) {
  const std::filesystem::path cells = std::filesystem::path(dir) / "cells";
  std::error_code error;
  std::vector<std::filesystem::path> earlier;
  for (auto it = std::filesystem::directory_iterator(cells, error); !error && it != std::filesystem::directory_iterator();
       it.increment(error))
    if (is_cell_file(*it)) earlier.push_back(it->path());
  if (error) return Error{ErrorKind::io, cells.string() + ": cannot list the earlier cells: " + error.message()};
  for (const char* report : {"matrix.json", "matrix.md", "matrix.html"})
    earlier.push_back(std::filesystem::path(dir) / report);
  for (const auto& path : earlier)
    if (std::filesystem::remove(path, error); error)
      return Error{ErrorKind::io, path.string() + ": cannot remove what an earlier matrix left: " + error.message()};
  return Done{};
}

Result<MatrixResult> run_matrix(const MatrixOptions& options) {
  if (auto columns = check_catalog_columns(options.columns); !columns) return columns.error();
  auto selected = select_cells(options);
  if (!selected) return selected.error();
  MatrixResult result = std::move(*selected);
  std::vector<std::string> own_rows;
  std::copy_if(result.locks.begin(), result.locks.end(), std::back_inserter(own_rows), users_row);
  if (auto checked = check_rows(options.expect, own_rows); !checked) return checked.error();
  auto user = with_init_ok_declarations(options.user);
  if (!user) return user.error();
  for (const auto& lock : user->locks)  // the shipped rows': check_catalog_columns
    if (const std::string problem = catalog_plan_problem(lock); !problem.empty())
      return Error{ErrorKind::usage, lock.name + " " + problem};
  if (auto cleared = remove_earlier_matrix(result.dir); !cleared) return cleared.error();
  const std::string declared = (std::filesystem::path(result.dir) / "declared_catalog.json").string();
  if (auto written = write_declared_catalog(*user, declared); !written) return written.error();
  const std::vector<Job> jobs = jobs_of(result, *user, options.columns);
  if (auto pooled = measure_cells(result.dir, jobs, options); !pooled) return pooled.error();
  result.cells = collect_cells(result.dir, jobs, options.columns);
  result.written = written_rows(result, options.columns);
  if (auto written = write_matrix_report(result); !written) return written.error();
  return result;
}

Result<MatrixResult> load_matrix(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "matrix.json").string();
  std::ifstream in(path);
  if (!in) return Error{ErrorKind::io, "cannot read " + path + " (made by: locklab matrix --out " + dir + ")"};
  const json summary = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (summary.is_discarded() || !summary.is_object() || summary.value("schema", "") != kMatrixSchema)
    return Error{ErrorKind::io, path + " is not a " + kMatrixSchema + " document"};
  MatrixResult result;
  result.dir = dir;
  try {
    result.quick = summary.value("quick", false);
    result.command = summary.value("command", "");
    result.locks = summary.value("locks", std::vector<std::string>{});
    result.faults = summary.value("faults", std::vector<std::string>{});
    result.columns = headings_of(summary, result.faults);
  } catch (const json::exception& e) {  // right keys, wrong types
    return Error{ErrorKind::io, path + " is not a " + kMatrixSchema + " document: " + e.what()};
  }
  result.numbers = row_numbers(result.locks);
  result.variant_notes = variant_notes(result.locks);
  for (const auto& lock : result.locks)
    for (const auto& fault : result.faults) result.cells.push_back(cell_from_file(dir, lock, fault, matrix_columns()));
  result.written = written_rows(result, matrix_columns());
  return result;
}

}  // namespace locklab::harness
