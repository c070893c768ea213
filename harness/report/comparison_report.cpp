// The comparison of many runs side by side, in Markdown and HTML (comparison_report.h).
#include "report/comparison_report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <sstream>

#include "report/html.h"
#include "report/run_header.h"
#include "report/timeline_svg.h"
#include "support/files.h"
#include "support/json_read.h"
#include "support/text.h"

namespace locklab::harness {
namespace {

using nlohmann::json;

std::string integer(double value) { return fixed(value, 0); }

// Acquire attempts that gave up (timed out, failed, unknown outcome); older
// documents without totals.abandoned: attempts - acquired, the same figure.
double abandoned(const json& r) {
  if (r.contains(json::json_pointer("/totals/abandoned"))) return number_at(r, "/totals/abandoned");
  return std::max(0.0, number_at(r, "/totals/attempts") - number_at(r, "/totals/acquired"));
}

std::string milliseconds(double us) { return fixed(us / 1000.0, us < 10'000 ? 2 : 1); }

struct Column {
  const char* title;
  std::string (*cell)(const json&);
};

// An adapter's no-op round trip (docs/adapters.md, "In a run"), p50 / p99 µs:
// the overhead of the lock's process boundary, shown beside its numbers and
// subtracted from none of them. A fleet names each adapter.
std::string adapter_round_trip(const json& r) {
  const json adapters = r.value("adapters", json::object());
  if (!adapters.is_object() || adapters.empty()) return "—";
  std::string cell;
  for (const auto& [name, probe] : adapters.items()) {
    const std::string one = probe.contains("noop_us") ? integer(number_at(probe, "/noop_us/p50")) + " / " +
                                                            integer(number_at(probe, "/noop_us/p99"))
                                                      : "failed";
    cell += (cell.empty() ? "" : "; ") + (adapters.size() > 1 ? name + ": " : "") + one;
  }
  return cell;
}

bool has_adapter(const json& run) {
  return run.contains("adapters") && run["adapters"].is_object() && !run["adapters"].empty();
}

bool any_adapter(const RunDocuments& runs) {
  return std::any_of(runs.begin(), runs.end(), [](const json& run) { return has_adapter(run); });
}

// A lock behind an adapter sends its commands from the adapter's process,
// which the clients' counters (redis::traffic()) do not see: its round trips
// per acquisition would be the counter's GET and SET alone. "—"; the servers'
// own count (srv cmds/acq) has them all.
std::string round_trips_cell(const json& run) {
  return has_adapter(run) ? "—" : fixed(number_at(run, "/cost/round_trips_per_acquisition"), 1);
}

// Said under a table with an adapter's row.
constexpr const char* kAdapterCostNote =
    " RT/acq is — for a lock behind an adapter: its lock commands go from the adapter's process, which the "
    "clients' counters do not see (srv cmds/acq counts them). adapter round trip = the adapter's no-op request "
    "(p50 / p99 over a few hundred, measured once before the run): its process boundary's cost, in its row's "
    "latencies and throughput, subtracted from none.";

const std::vector<Column>& base_columns() {
  static const std::vector<Column> all = {
      {"lock", [](const json& r) { return text_at(r, "/lock"); }},
      {"verdict", [](const json& r) { return text_at(r, "/verdict"); }},
      {"acq/s", [](const json& r) { return integer(number_at(r, "/throughput/acquisitions_per_s")); }},
      {"acquire p50/p99 µs", [](const json& r) {
         return integer(number_at(r, "/latency/acquire_us/p50")) + " / " + integer(number_at(r, "/latency/acquire_us/p99"));
       }},
      {"Jain", [](const json& r) { return fixed(number_at(r, "/fairness/jain"), 2); }},
      {"wait p99/max ms", [](const json& r) {
         return milliseconds(number_at(r, "/latency/wait_us/p99")) + " / " + milliseconds(number_at(r, "/fairness/max_wait_us"));
       }},
      {"abandoned", [](const json& r) { return integer(abandoned(r)); }},
      {"handoff p50 µs", [](const json& r) { return integer(number_at(r, "/handoff_us/p50")); }},
      {"RT/acq", round_trips_cell},
      {"srv cmds/acq", [](const json& r) { return fixed(number_at(r, "/cost/server_commands_per_acquisition"), 1); }},
      {"overlaps", [](const json& r) { return integer(number_at(r, "/safety/overlaps")); }},
      {"max holders", [](const json& r) { return integer(number_at(r, "/safety/max_concurrent_holders")); }},
      {"lost updates", [](const json& r) { return integer(number_at(r, "/safety/lost_updates")); }},
      {"stale refused", [](const json& r) { return integer(number_at(r, "/safety/stale_writes_rejected")); }},
      {"wrong-owner rel.", [](const json& r) { return integer(number_at(r, "/safety/wrong_owner_releases")); }},
      {"stalls", [](const json& r) { return integer(number_at(r, "/safety/stalls")); }},
      {"keys left", [](const json& r) {  // null: the lock's key is unknown, nothing was looked for
         return r.value("/safety/keys_left"_json_pointer, json()).is_null() ? std::string("—")
                                                                             : integer(number_at(r, "/safety/keys_left"));
       }},
      {"counter exp/act", [](const json& r) {
         return integer(number_at(r, "/counter/expected")) + " / " + integer(number_at(r, "/counter/actual"));
       }},
  };
  return all;
}

// The table's columns: with an adapter among the runs, its round trip beside the acquire latency.
std::vector<Column> columns(const RunDocuments& runs) {
  std::vector<Column> all = base_columns();
  if (any_adapter(runs)) all.insert(all.begin() + 4, Column{"adapter round trip p50/p99 µs", adapter_round_trip});
  return all;
}

// The line above the table: the setup every run shares; when the runs were made
// differently (`locklab report` over runs of different commands), the servers
// alone, and each run's own header follows (runs_list).
std::string config_line(const RunDocuments& runs) {
  if (runs.empty()) return "";
  std::ostringstream out;
  if (!same_setup(runs)) {
    out << "Runs made differently: each run's own header (lock, fault, clients, ttl, the command that made it) "
           "follows. Redis "
        << text_at(runs.front(), "/redis/version") << ", " << number_at(runs.front(), "/machine/cores") << " cores";
    return out.str();
  }
  const json& c = runs.front()["config"];
  out << c.value("clients", 0) << " " << c.value("mode", std::string("?")) << " clients, "
      << workload_text(c, /*each=*/true) << ", hold " << c.value("hold_ms", 0) << " ms, ttl " << c.value("ttl_ms", 0) << " ms, wait "
      << c.value("wait_ms", 0) << " ms, retry " << c.value("retry_ms", 0) << " ms; Redis "
      << text_at(runs.front(), "/redis/version") << ", " << number_at(runs.front(), "/machine/cores") << " cores";
  if (const auto command = c.value("command", std::string()); !command.empty()) out << ". Made by: `" << command << "`";
  return out.str();
}

// Markdown: one item per run made differently, its header, then its faults' acts and stalls in time order.
std::string runs_list(const RunDocuments& runs) {
  std::ostringstream out;
  const bool differ = !same_setup(runs);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::vector<std::string> events = timeline_events(runs[i]);
    if (!differ && events.empty()) continue;
    out << "- run " << i + 1 << ", " << (differ ? run_header(runs[i]) : text_at(runs[i], "/lock")) << "\n";
    for (const auto& event : events) out << "  - " << event << "\n";
  }
  return out.str().empty() ? "" : out.str() + "\n";
}

// ---- SVG pieces -------------------------------------------------------------

std::string bar_chart(const RunDocuments& runs, const std::string& title, double (*value)(const json&),
                      const std::string& colour, int decimals) {
  constexpr int kLabel = 170, kWidth = 520, kRow = 22;
  double max = 0;
  for (const auto& run : runs) max = std::max(max, value(run));
  const int height = kRow * static_cast<int>(runs.size()) + 30;
  std::ostringstream svg;
  svg << "<figure><figcaption>" << html_escape(title) << "</figcaption><svg width=\"" << kLabel + kWidth + 90
      << "\" height=\"" << height << "\" role=\"img\" aria-label=\"" << html_escape(title) << "\">";
  int y = 8;
  for (const auto& run : runs) {
    const double v = value(run);
    const int w = max > 0 ? static_cast<int>(std::lround(v / max * kWidth)) : 0;
    svg << "<text x=\"" << kLabel - 6 << "\" y=\"" << y + 14 << "\" text-anchor=\"end\">" << html_escape(text_at(run, "/lock"))
        << "</text><rect x=\"" << kLabel << "\" y=\"" << y + 2 << "\" width=\"" << w << "\" height=\"" << kRow - 6
        << "\" fill=\"" << colour << "\"/><text x=\"" << kLabel + w + 4 << "\" y=\"" << y + 14 << "\">"
        << fixed(v, decimals) << "</text>";
    y += kRow;
  }
  svg << "</svg></figure>";
  return svg.str();
}

// Three violation kinds side by side, each scaled to its own maximum (their
// magnitudes differ by orders; the numbers are printed next to each bar).
std::string violations_chart(const RunDocuments& runs) {
  struct Kind {
    const char* name;
    const char* pointer;
    const char* colour;
  };
  const Kind kinds[] = {{"overlapping pairs", "/safety/overlaps", "#d62728"},
                        {"lost updates", "/safety/lost_updates", "#ff7f0e"},
                        {"wrong-owner releases", "/safety/wrong_owner_releases", "#9467bd"}};
  constexpr int kLabel = 170, kWidth = 160, kGap = 60, kRow = 22;
  const int height = kRow * static_cast<int>(runs.size()) + 40;
  std::ostringstream svg;
  svg << "<figure><figcaption>Safety violations per generation (each column scaled to its own maximum)</figcaption>"
      << "<svg width=\"" << kLabel + 3 * (kWidth + kGap) << "\" height=\"" << height << "\" role=\"img\">";
  for (int k = 0; k < 3; ++k)
    svg << "<text x=\"" << kLabel + k * (kWidth + kGap) << "\" y=\"14\" font-weight=\"bold\">" << kinds[k].name << "</text>";
  int y = 22;
  for (const auto& run : runs) {
    svg << "<text x=\"" << kLabel - 6 << "\" y=\"" << y + 14 << "\" text-anchor=\"end\">" << html_escape(text_at(run, "/lock"))
        << "</text>";
    for (int k = 0; k < 3; ++k) {
      double max = 0;
      for (const auto& other : runs) max = std::max(max, number_at(other, kinds[k].pointer));
      const double v = number_at(run, kinds[k].pointer);
      const int w = max > 0 ? static_cast<int>(std::lround(v / max * kWidth)) : 0;
      const int x = kLabel + k * (kWidth + kGap);
      svg << "<rect x=\"" << x << "\" y=\"" << y + 2 << "\" width=\"" << w << "\" height=\"" << kRow - 6 << "\" fill=\""
          << kinds[k].colour << "\"/><text x=\"" << x + w + 4 << "\" y=\"" << y + 14 << "\">" << integer(v) << "</text>";
    }
    y += kRow;
  }
  svg << "</svg></figure>";
  return svg.str();
}

double throughput_of(const json& run) { return number_at(run, "/throughput/acquisitions_per_s"); }
double max_wait_ms_of(const json& run) { return number_at(run, "/fairness/max_wait_us") / 1000.0; }

int clients_of(const json& run) { return static_cast<int>(number_at(run, "/config/clients")); }

// Per lock: its cost uncontended (a 1-client run) and under contention (its
// run with the most clients), when the runs include them.
struct CostRow {
  std::string lock;
  const json* uncontended = nullptr;
  const json* contended = nullptr;
};

std::vector<CostRow> cost_rows(const RunDocuments& runs) {
  std::vector<CostRow> rows;
  for (const auto& run : runs) {
    const std::string lock = text_at(run, "/lock");
    auto row = std::find_if(rows.begin(), rows.end(), [&](const CostRow& r) { return r.lock == lock; });
    if (row == rows.end()) row = rows.insert(rows.end(), CostRow{lock});
    const int clients = clients_of(run);
    if (clients == 1 && row->uncontended == nullptr) row->uncontended = &run;
    if (clients > 1 && (row->contended == nullptr || clients > clients_of(*row->contended))) row->contended = &run;
  }
  return rows;
}

std::string cost_cell(const json* run) {
  if (run == nullptr) return "—";
  return round_trips_cell(*run) + " / " + fixed(number_at(*run, "/cost/server_commands_per_acquisition"), 1);
}

std::string contended_title(const CostRow& row) {
  return row.contended == nullptr ? "—" : std::to_string(clients_of(*row.contended));
}
double round_trips_of(const json& run) { return number_at(run, "/cost/round_trips_per_acquisition"); }

}  // namespace

std::string markdown_report(const RunDocuments& runs) {
  std::ostringstream out;
  const std::vector<Column> table = columns(runs);
  out << "# locklab comparison\n\n" << config_line(runs) << "\n\n" << runs_list(runs) << "|";
  for (const auto& column : table) out << " " << column.title << " |";
  out << "\n|";
  for (std::size_t i = 0; i < table.size(); ++i) out << (i == 0 ? "---|" : "---:|");
  out << "\n";
  for (const auto& run : runs) {
    out << "|";
    for (const auto& column : table) out << " " << column.cell(run) << " |";
    out << "\n";
  }
  out << "\nRT/acq = client round trips per acquisition (acquire attempts, critical-section GET/SET and release "
         "included); srv cmds/acq = commands the lock servers executed (INFO commandstats delta, Lua-called commands "
         "included); wait = first attempt → acquired (p99) and the longest wait (max, including one still open at "
         "the end); abandoned = acquire attempts that gave up (timed out or failed)."
      << (any_adapter(runs) ? kAdapterCostNote : "")
      << "\n\n"
      << "## Cost per acquisition: uncontended and under contention\n\n"
      << "| lock | 1 client: RT / srv cmds | contended: clients | contended: RT / srv cmds |\n|---|---:|---:|---:|\n";
  for (const auto& row : cost_rows(runs))
    out << "| " << row.lock << " | " << cost_cell(row.uncontended) << " | " << contended_title(row) << " | "
        << cost_cell(row.contended) << " |\n";
  out << "\nA 1-client run (or `bench/lock_bench`) gives the uncontended cost; the contended one adds failed "
         "attempts, wake-ups and the critical section's GET and SET.";
  // The reasons' heading only above reasons: a comparison where every run had none prints none.
  const bool any_reasons = std::any_of(runs.begin(), runs.end(), [](const json& run) {
    return !run.value("verdict_reasons", json::array()).empty();
  });
  out << (any_reasons ? " Verdict reasons:\n\n" : "\n");
  for (const auto& run : runs) {
    const auto reasons = run.value("verdict_reasons", json::array());
    if (reasons.empty()) continue;
    out << "- **" << text_at(run, "/lock") << "**: ";
    for (std::size_t i = 0; i < reasons.size(); ++i) out << (i ? "; " : "") << reasons[i].get<std::string>();
    out << "\n";
  }
  return out.str();
}

std::string comparison_html_css() {
  return page_css(1200) +
         "td:first-child,td:nth-child(2){text-align:left}"
         ".safe{color:#2a7a2a;font-weight:bold}.violation,.error{color:#c00;font-weight:bold}.deadlock{color:#a60;font-weight:bold}" +
         timeline_css() +
         "figure{margin:1em 0}figcaption{font-weight:bold;margin-bottom:4px}.note{color:#666;font-size:13px}.run{font-size:13px;margin:2px 0}";
}

std::string comparison_html_body(const RunDocuments& runs) {
  std::ostringstream out;
  out << "<h1>locklab comparison</h1>\n<p class=\"note\">"
      << html_escape(config_line(runs)) << "</p>\n<table><tr>";
  const std::vector<Column> table = columns(runs);
  for (const auto& column : table) out << "<th>" << html_escape(column.title) << "</th>";
  out << "</tr>\n";
  for (const auto& run : runs) {
    out << "<tr>";
    for (const auto& column : table) {
      const std::string cell = column.cell(run);
      if (std::string(column.title) == "verdict")
        out << "<td class=\"" << html_escape(cell) << "\">" << html_escape(cell) << "</td>";
      else
        out << "<td>" << html_escape(cell) << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</table>\n<p class=\"note\">RT/acq: round trips the clients made per acquisition (failed attempts, "
         "critical-section GET/SET, pub/sub and release included). srv cmds/acq: commands the lock servers executed "
         "per acquisition (INFO commandstats delta; counts commands a Lua script calls). wait: first attempt → "
         "acquired, p99 and the longest (one still open at the end included). abandoned: acquire attempts that gave "
         "up (timed out or failed)."
      << (any_adapter(runs) ? kAdapterCostNote : "") << "</p>\n";
  out << bar_chart(runs, "Throughput (acquisitions/s)", throughput_of, "#1f77b4", 0);
  out << bar_chart(runs, "Longest acquire wait (ms): a fast lock that starves a client is not fast for that client",
                   max_wait_ms_of, "#8c564b", 1);
  out << violations_chart(runs);
  RunDocuments counted;  // an adapter's client round trips are not its lock's: not drawn
  std::copy_if(runs.begin(), runs.end(), std::back_inserter(counted), [](const json& r) { return !has_adapter(r); });
  if (!counted.empty()) out << bar_chart(counted, "Cost: client round trips per acquisition", round_trips_of, "#2ca02c", 1);
  out << "<h2>Cost per acquisition: uncontended and under contention</h2>\n<table><tr><th>lock</th><th>1 client: RT / "
         "srv cmds</th><th>contended: clients</th><th>contended: RT / srv cmds</th></tr>\n";
  for (const auto& row : cost_rows(runs))
    out << "<tr><td>" << html_escape(row.lock) << "</td><td>" << html_escape(cost_cell(row.uncontended)) << "</td><td>"
        << html_escape(contended_title(row)) << "</td><td>" << html_escape(cost_cell(row.contended)) << "</td></tr>\n";
  out << "</table>\n";
  out << "<h2>Timelines</h2>\n<p class=\"note\">Each bar is one critical section (GET counter … SET counter); red "
         "bands mark moments with two or more holders; grey bars are sections whose stale fencing token the resource refused; "
         "purple rows above the lanes are the faults, a tick at each act (hover: what), the band from the first act to "
         "the last; amber bands are stalls, nobody inside while clients waited. The axis spans them all. A window of up to 400 sections, around the first overlap when "
         "there is one.</p>\n";
  for (const auto& run : runs) {
    out << "<h3>" << html_escape(text_at(run, "/lock")) << " — <span class=\"" << html_escape(text_at(run, "/verdict")) << "\">"
        << html_escape(text_at(run, "/verdict")) << "</span></h3>\n<p class=\"run\">" << html_escape(run_header(run))
        << "</p>\n";
    const auto reasons = run.value("verdict_reasons", json::array());
    if (!reasons.empty()) {
      out << "<p class=\"note\">";
      for (std::size_t i = 0; i < reasons.size(); ++i) out << (i ? "; " : "") << html_escape(reasons[i].get<std::string>());
      out << "</p>\n";
    }
    out << render_timeline(timeline_of(run)) << "\n";
  }
  return out.str();
}

std::string html_report(const RunDocuments& runs) {
  return html_head("locklab comparison", comparison_html_css()) + comparison_html_body(runs) + html_tail();
}

Status write_report(const RunDocuments& runs, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error{ErrorKind::io, "cannot create " + dir + ": " + ec.message()};
  const std::filesystem::path base(dir);
  if (auto written = write_file_atomically((base / "report.md").string(), markdown_report(runs)); !written)
    return written;
  return write_file_atomically((base / "report.html").string(), html_report(runs));
}

}  // namespace locklab::harness
