#include "report/matrix_likeness.h"

#include <algorithm>
#include <optional>
#include <sstream>

#include "report/html.h"
#include "report/page_words.h"

namespace locklab::harness {
namespace {

using nlohmann::json;

bool is_library(const std::string& lock) { return lock.rfind("ext:", 0) == 0; }

// "generation 3 set-nx-px-token" when the sweep knew its number, else its name.
std::string generation_title(const MatrixResult& result, const std::string& lock) {
  const auto number = result.numbers.find(lock);
  if (number == result.numbers.end() || number->second.empty()) return lock;
  return "generation " + number->second + " " + lock;
}

// A generation's cell: measured in this matrix, else as written down (MatrixResult::written).
const Cell* generation_cell(const MatrixResult& result, const std::string& generation, const std::string& fault) {
  if (const Cell* measured = result.find(generation, fault)) return measured;
  for (const auto& cell : result.written)
    if (cell.lock == generation && cell.fault == fault) return &cell;
  return nullptr;
}

// Whether `generation` was not measured here: its row is its written expectations.
bool written_only(const MatrixResult& result, const std::string& generation) {
  return std::find(result.locks.begin(), result.locks.end(), generation) == result.locks.end();
}

// The generation rows to compare with: the measured ones, then the written ones, each once, in order.
std::vector<std::string> generation_rows(const MatrixResult& result) {
  std::vector<std::string> rows;
  for (const auto& lock : result.locks)
    if (!is_library(lock)) rows.push_back(lock);
  for (const auto& cell : result.written)
    if (std::find(rows.begin(), rows.end(), cell.lock) == rows.end()) rows.push_back(cell.lock);
  return rows;
}

bool accepts(const Cell& cell, CellClass observed) {
  return cell.expected == observed || std::ranges::find(cell.also_expected, observed) != cell.also_expected.end();
}

// The same class, or classes each cell accepts (matrix_likeness.h). Both cells measured.
bool alike(const Cell& mine, const Cell& theirs) {
  return mine.observed == theirs.observed || (accepts(mine, theirs.observed) && accepts(theirs, mine.observed));
}

// `library` against `generation`, column by column.
Likeness compare_rows(const MatrixResult& result, const std::string& library, const std::string& generation) {
  Likeness likeness;
  likeness.library = library;
  likeness.generation = generation;
  for (const auto& fault : result.faults) {
    const Cell* mine = result.find(library, fault);
    const Cell* theirs = generation_cell(result, generation, fault);
    if (mine == nullptr || theirs == nullptr) continue;
    // The shape is the lock's (whether the fault applies), known even where the run was not measured.
    if ((mine->observed == CellClass::not_applicable) == (theirs->observed == CellClass::not_applicable))
      ++likeness.same_shape;
    // An error cell says nothing of how the lock behaves: neither alike nor a difference.
    if (mine->observed == CellClass::error || theirs->observed == CellClass::error) {
      likeness.not_measured.push_back(fault);
      continue;
    }
    ++likeness.compared;
    if (alike(*mine, *theirs)) {
      ++likeness.equal;
      continue;
    }
    likeness.differing.push_back({fault, mine->observed, theirs->observed});
  }
  return likeness;
}

// A library row beside no generation it shares a measured column with: no
// nearest generation; its own error cells are what was not measured.
Likeness without_generation(const MatrixResult& result, const std::string& library) {
  Likeness none;
  none.library = library;
  for (const auto& fault : result.faults)
    if (const Cell* mine = result.find(library, fault); mine != nullptr && mine->observed == CellClass::error)
      none.not_measured.push_back(fault);
  return none;
}

// The closest generation to `library` (the most equal cells, then the same
// shape, then row order); `also` names the others with as many equal cells.
// Nothing when the matrix has no generation row.
std::optional<Likeness> nearest(const MatrixResult& result, const std::string& library) {
  std::vector<Likeness> candidates;
  const std::vector<std::string> generations = generation_rows(result);
  const bool any_generation = !generations.empty();
  for (const auto& generation : generations) {
    if (Likeness candidate = compare_rows(result, library, generation); candidate.compared > 0)
      candidates.push_back(std::move(candidate));
  }
  if (!any_generation) return std::nullopt;
  if (candidates.empty()) return without_generation(result, library);
  std::size_t best = 0;
  for (std::size_t i = 1; i < candidates.size(); ++i) {
    const Likeness& a = candidates[i];
    const Likeness& b = candidates[best];
    if (a.equal > b.equal || (a.equal == b.equal && a.same_shape > b.same_shape)) best = i;
  }
  Likeness chosen = candidates[best];
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (i != best && candidates[i].equal == chosen.equal) chosen.also.push_back(candidates[i].generation);
  return chosen;
}

// "failover, net-cut".
std::string faults_text(const std::vector<std::string>& faults) {
  std::string text;
  for (const auto& fault : faults) text += (text.empty() ? "" : ", ") + fault;
  return text;
}

// "except release-race (safe where the generation is me-violation) and ...", "in every cell" or
// "in every measured cell".
std::string differences_text(const Likeness& likeness) {
  if (likeness.differing.empty()) return likeness.not_measured.empty() ? "in every cell" : "in every measured cell";
  std::string text = "except ";
  for (std::size_t i = 0; i < likeness.differing.size(); ++i) {
    if (i > 0) text += i + 1 == likeness.differing.size() ? " and " : ", ";
    const Difference& one = likeness.differing[i];
    text += one.fault + " (" + class_name(one.library) + " where the generation is " + class_name(one.generation) + ")";
  }
  return text;
}

std::string sentence(const MatrixResult& result, const Likeness& likeness) {
  if (likeness.generation.empty())
    return likeness.library + " has no nearest generation: none of its cells was measured beside a generation's" +
           (likeness.not_measured.empty() ? "" : " (not measured: " + faults_text(likeness.not_measured) + ")") + ".";
  std::string text = likeness.library + " behaves like " + generation_title(result, likeness.generation) +
                     (written_only(result, likeness.generation) ? " as written down (not measured in this matrix)" : "") +
                     " " + differences_text(likeness);
  if (!likeness.not_measured.empty()) text += "; not measured: " + faults_text(likeness.not_measured);
  if (!likeness.also.empty()) {
    text += "; as close: ";
    for (std::size_t i = 0; i < likeness.also.size(); ++i)
      text += (i > 0 ? ", " : "") + generation_title(result, likeness.also[i]);
  }
  return text + ".";
}

// "release-race: safe (set-nx-px-token: me-violation)"
std::string difference_text(const Likeness& likeness, const Difference& one) {
  return one.fault + ": " + class_name(one.library) + " (" + likeness.generation + ": " + class_name(one.generation) + ")";
}

std::string differing_cell(const Likeness& likeness) {
  std::string text;
  for (const auto& one : likeness.differing) text += (text.empty() ? "" : "; ") + difference_text(likeness, one);
  if (text.empty() && !likeness.generation.empty()) text = "nowhere";
  if (!likeness.not_measured.empty())
    text += (text.empty() ? "" : "; ") + std::string("not measured: ") + faults_text(likeness.not_measured);
  return text.empty() ? "–" : text;
}

// The table's generation cell: its title, or why there is none.
std::string generation_text(const MatrixResult& result, const Likeness& likeness) {
  if (likeness.generation.empty()) return "none: nothing measured";
  return generation_title(result, likeness.generation) +
         (written_only(result, likeness.generation) ? " (as written down)" : "");
}

// What "closest" means, above the table (matrix_likeness.h).
constexpr const char* kLegend =
    "The generation whose observed row is closest to the library's, cell by cell: the most columns with the same "
    "class, among those measured in both rows (an error cell is not measured: not compared, and listed as not "
    "measured). Between generations as close, the one n/a in the same columns wins (the same shape), then the first "
    "in teaching order; the others as close are named.";
// Added only where a generation was not measured: older pages stay as they were.
constexpr const char* kWrittenLegend =
    " A generation this matrix did not measure is compared as its expected classes are written down "
    "(docs/faults.md), and said so.";

std::string legend(const MatrixResult& result) {
  return std::string(kLegend) + (result.written.empty() ? "" : kWrittenLegend);
}

}  // namespace

std::vector<Likeness> nearest_generations(const MatrixResult& result) {
  std::vector<Likeness> all;
  for (const auto& lock : result.locks)
    if (is_library(lock))
      if (auto found = nearest(result, lock)) all.push_back(std::move(*found));
  return all;
}

std::string likeness_markdown(const MatrixResult& result) {
  const auto all = nearest_generations(result);
  if (all.empty()) return "";
  std::ostringstream out;
  out << "\n## Which generation is each library?\n\n" << legend(result)
      << "\n\n| library | nearest generation | equal cells | where it differs |\n|---|---|---:|---|\n";
  for (const auto& likeness : all)
    out << "| " << likeness.library << " | " << generation_text(result, likeness) << " | "
        << likeness.equal << " of " << likeness.compared << " | " << differing_cell(likeness) << " |\n";
  out << "\n";
  for (const auto& likeness : all) out << "- " << sentence(result, likeness) << "\n";
  return out.str();
}

std::string likeness_html(const MatrixResult& result) {
  const auto all = nearest_generations(result);
  if (all.empty()) return "";
  std::ostringstream out;
  const std::string& lang = result.lang;
  out << "<h2>" << page_word(lang, "Which generation is each library?") << "</h2>\n<p class=\"note\">"
      << html_escape(legend(result)) << "</p>\n<table><tr><th>" << page_word(lang, "library") << "</th><th>"
      << page_word(lang, "nearest generation") << "</th><th>" << page_word(lang, "equal cells") << "</th><th>"
      << page_word(lang, "where it differs") << "</th></tr>\n";
  for (const auto& likeness : all)
    out << "<tr><td class=\"lock\">" << html_escape(likeness.library) << "</td><td>"
        << html_escape(generation_text(result, likeness)) << "</td><td>" << likeness.equal << " of "
        << likeness.compared << "</td><td>" << html_escape(differing_cell(likeness)) << "</td></tr>\n";
  out << "</table>\n<ul>\n";
  for (const auto& likeness : all) out << "<li>" << html_escape(sentence(result, likeness)) << "</li>\n";
  out << "</ul>\n";
  return out.str();
}

json likeness_json(const MatrixResult& result) {
  json all = json::array();
  for (const auto& likeness : nearest_generations(result)) {
    json differing = json::array();
    for (const auto& one : likeness.differing)
      differing.push_back({{"fault", one.fault}, {"library", class_name(one.library)},
                           {"generation", class_name(one.generation)}});
    all.push_back({{"library", likeness.library},
                   {"generation", likeness.generation.empty() ? json(nullptr) : json(likeness.generation)},
                   {"also", likeness.also},
                   {"equal", likeness.equal},
                   {"compared", likeness.compared},
                   {"differing", differing},
                   {"not_measured", likeness.not_measured},
                   {"sentence", sentence(result, likeness)}});
  }
  return all;
}

}  // namespace locklab::harness
