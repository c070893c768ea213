#include "report/matrix_likeness.h"

#include <optional>
#include <sstream>

#include "report/html.h"

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

bool accepts(const Cell& cell, CellClass observed) {
  return cell.expected == observed || (cell.also_expected && *cell.also_expected == observed);
}

// The same class, or classes each cell accepts (matrix_likeness.h).
bool alike(const Cell& mine, const Cell& theirs) {
  if (mine.observed == CellClass::error || theirs.observed == CellClass::error) return false;
  return mine.observed == theirs.observed || (accepts(mine, theirs.observed) && accepts(theirs, mine.observed));
}

// `library` against `generation`, column by column.
Likeness compare_rows(const MatrixResult& result, const std::string& library, const std::string& generation) {
  Likeness likeness;
  likeness.library = library;
  likeness.generation = generation;
  for (const auto& fault : result.faults) {
    const Cell* mine = result.find(library, fault);
    const Cell* theirs = result.find(generation, fault);
    if (mine == nullptr || theirs == nullptr) continue;
    ++likeness.compared;
    if ((mine->observed == CellClass::not_applicable) == (theirs->observed == CellClass::not_applicable))
      ++likeness.same_shape;
    if (alike(*mine, *theirs)) {
      ++likeness.equal;
      continue;
    }
    likeness.differing.push_back({fault, mine->observed, theirs->observed});
  }
  return likeness;
}

// The closest generation to `library`; `also` names the others with as many
// equal cells (in row order).
std::optional<Likeness> nearest(const MatrixResult& result, const std::string& library) {
  std::vector<Likeness> candidates;
  for (const auto& generation : result.locks)
    if (!is_library(generation))
      if (Likeness candidate = compare_rows(result, library, generation); candidate.compared > 0)
        candidates.push_back(std::move(candidate));
  if (candidates.empty()) return std::nullopt;
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

// "except release-race (safe where the generation is me-violation) and ..." or "in every cell".
std::string differences_text(const Likeness& likeness) {
  if (likeness.differing.empty()) return "in every cell";
  std::string text = "except ";
  for (std::size_t i = 0; i < likeness.differing.size(); ++i) {
    if (i > 0) text += i + 1 == likeness.differing.size() ? " and " : ", ";
    const Difference& one = likeness.differing[i];
    text += one.fault + " (" + class_name(one.library) + " where the generation is " + class_name(one.generation) + ")";
  }
  return text;
}

std::string sentence(const MatrixResult& result, const Likeness& likeness) {
  std::string text = likeness.library + " behaves like " + generation_title(result, likeness.generation) + " " +
                     differences_text(likeness);
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
  if (likeness.differing.empty()) return "nowhere";
  std::string text;
  for (const auto& one : likeness.differing) text += (text.empty() ? "" : "; ") + difference_text(likeness, one);
  return text;
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
  out << "\n## Which generation is each library?\n\nThe generation whose observed row is closest to the library's, "
         "cell by cell (the most columns with the same class; a tie goes to the first in teaching order, the others "
         "are named).\n\n| library | nearest generation | equal cells | where it differs |\n|---|---|---:|---|\n";
  for (const auto& likeness : all)
    out << "| " << likeness.library << " | " << generation_title(result, likeness.generation) << " | "
        << likeness.equal << " of " << likeness.compared << " | " << differing_cell(likeness) << " |\n";
  out << "\n";
  for (const auto& likeness : all) out << "- " << sentence(result, likeness) << "\n";
  return out.str();
}

std::string likeness_html(const MatrixResult& result) {
  const auto all = nearest_generations(result);
  if (all.empty()) return "";
  std::ostringstream out;
  out << "<h2>Which generation is each library?</h2>\n<p class=\"note\">The generation whose observed row is closest "
         "to the library's, cell by cell (the most columns with the same class; a tie goes to the first in teaching "
         "order, the others are named).</p>\n<table><tr><th>library</th><th>nearest generation</th><th>equal "
         "cells</th><th>where it differs</th></tr>\n";
  for (const auto& likeness : all)
    out << "<tr><td class=\"lock\">" << html_escape(likeness.library) << "</td><td>"
        << html_escape(generation_title(result, likeness.generation)) << "</td><td>" << likeness.equal << " of "
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
                   {"generation", likeness.generation},
                   {"also", likeness.also},
                   {"equal", likeness.equal},
                   {"compared", likeness.compared},
                   {"differing", differing},
                   {"sentence", sentence(result, likeness)}});
  }
  return all;
}

}  // namespace locklab::harness
