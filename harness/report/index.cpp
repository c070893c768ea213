// The index page of a full run (index.h): one HTML page, the matrix then the comparison, and index.md.
#include "report/index.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/html.h"
#include "report/matrix_report.h"
#include "support/files.h"

namespace locklab::harness {
namespace {

// The page's own rules; each section brings its page's CSS, scoped to it (scoped_css).
std::string index_css() {
  return body_css(0, "1.5em") + "nav p{font-size:15px}section{border-top:1px solid #ccc;margin-top:2em}";
}

// Each rule of a page's CSS ("a,b{...}c{...}") limited to the section it is
// in: "#id a,#id b{...}"; the page's body rule becomes the section's. The two
// pages style table, th and td differently; on one page each keeps its own.
std::string scoped_css(const std::string& css, const std::string& id) {
  std::string out;
  std::size_t at = 0;
  while (at < css.size()) {
    const std::size_t open = css.find('{', at), close = css.find('}', open);
    if (open == std::string::npos || close == std::string::npos) break;
    std::istringstream selectors(css.substr(at, open - at));
    std::string selector, scoped;
    while (std::getline(selectors, selector, ',')) {
      if (!scoped.empty()) scoped += ',';
      scoped.append("#").append(id);
      if (selector != "body") scoped.append(" ").append(selector);
    }
    out += scoped + css.substr(open, close - open + 1);
    at = close + 1;
  }
  return out;
}

Result<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{ErrorKind::io, "cannot read " + path};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string index_html(const MatrixResult& matrix, const RunDocuments& comparison) {
  std::ostringstream out;
  out << html_head("locklab: fault matrix and comparison",
                   index_css() + scoped_css(matrix_html_css(), "matrix") + scoped_css(comparison_html_css(), "comparison"))
      << "<h1>locklab</h1>\n<nav><p>1. <a href=\"#matrix\">The fault matrix</a>: every generation against every "
         "fault.\n2. <a href=\"#comparison\">The comparison</a>: every generation through the same workload, no "
         "faults.</p></nav>\n"
      << "<section id=\"matrix\">\n" << matrix_html_body(matrix)
      << "<p><a href=\"#comparison\">Next: the comparison</a></p>\n</section>\n"
      << "<section id=\"comparison\">\n" << comparison_html_body(comparison)
      << "<p><a href=\"#matrix\">Back to the fault matrix</a></p>\n</section>\n"
      << html_tail();
  return out.str();
}

Status write_index(const std::string& dir, const MatrixResult& matrix, const RunDocuments& comparison) {
  const std::filesystem::path base(dir);
  auto matrix_md = read_text((std::filesystem::path(matrix.dir) / "matrix.md").string());
  if (!matrix_md) return matrix_md.error();
  auto report_md = read_text((base / "report.md").string());
  if (!report_md) return report_md.error();
  if (auto written = write_file_atomically((base / "index.md").string(), *matrix_md + "\n" + *report_md); !written)
    return written;
  return write_file_atomically((base / "index.html").string(), index_html(matrix, comparison));
}

}  // namespace locklab::harness
