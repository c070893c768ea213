// One scenario run as a step-through page (story_page.h).
#include "report/story_page.h"

#include <sstream>

#include "report/html.h"
#include "report/page_words.h"
#include "report/story_page_assets.h"
#include "support/json_read.h"
#include "support/text.h"

namespace locklab::harness {
namespace {

using nlohmann::json;

std::string verdict_class(const std::string& verdict) {
  if (verdict == "race shown") return "race";
  if (verdict == "fix holds") return "fix";
  return "unexpected";
}

// The document's text in the story's language: "/race_text" etc. when the story wrote them
// (scenario.cpp, in its --lang), else the English field ("/race").
std::string told(const json& document, const char* pointer) {
  const std::string shown = text_at(document, (std::string(pointer) + "_text").c_str());
  return shown.empty() ? text_at(document, pointer) : shown;
}

std::string header_html(const json& document, const std::string& lang) {
  const std::string lock = text_at(document, "/lock");
  std::string flags;
  for (const auto& flag : document.value("flags", json::array()))
    if (flag.is_string()) flags += " --" + flag.get<std::string>();
  const bool race_expected = document.value("race_expected", true);
  const std::string verdict = text_at(document, "/verdict");
  const std::string expects = race_expected ? page_word(lang, "the race: {0}", {told(document, "/race")})
                                            : page_word(lang, "the race not to happen");
  std::ostringstream out;
  out << "<header><h1>" << html_escape(text_at(document, "/scenario")) << "<span class=\"lock\">--lock "
      << html_escape(lock + flags) << "</span></h1>\n<p class=\"story\">" << html_escape(text_at(document, "/story"))
      << "</p>\n<p class=\"source\">" << html_escape(told(document, "/source")) << " &middot; "
      << html_escape(page_word(lang, "the lesson expects {0}", {expects})) << "</p>\n<p class=\"verdict "
      << verdict_class(verdict) << "\">" << html_escape(page_word(lang, "verdict: {0}", {told(document, "/verdict")}))
      << " &mdash; " << html_escape(told(document, "/detail")) << "</p></header>\n";
  return out.str();
}

std::string controls_html(std::size_t count, const std::string& lang) {
  std::ostringstream out;
  out << "<nav id=\"controls\"><button id=\"back\" type=\"button\">&#9664; " << page_word(lang, "Back") << "</button>"
      << "<button id=\"next\" type=\"button\">" << page_word(lang, "Next") << " &#9654;</button><span id=\"position\">"
      << page_word(lang, "{0} steps", {std::to_string(count)}) << "</span><button id=\"spacing\" type=\"button\">"
      << page_word(lang, "spacing: one step each") << "</button><button id=\"ahead\" type=\"button\">"
      << page_word(lang, "ahead: hidden") << "</button><span class=\"hint\">&larr; &rarr; " << page_word(lang, "one step")
      << " &middot; Home / End &middot; " << page_word(lang, "click a step") << "</span></nav>\n<noscript>"
      << page_word(lang, "This page steps through the story with JavaScript; without it only the list of steps shows.")
      << "</noscript>\n";
  return out.str();
}

bool wrong_owner_delete(const std::string& effect) {
  return effect.rfind("deleted ", 0) == 0 && effect.find("'s lock") != std::string::npos;
}

std::string step_html(const json& step) {
  const int number = step.value("step", 0);
  const std::string kind = text_at(step, "/kind");
  std::ostringstream out;
  out << "<li class=\"step kind-" << html_escape(kind.empty() ? "narration" : kind) << "\" id=\"step-" << number
      << "\" data-step=\"" << number << "\"><span class=\"n\">" << number << "</span><span class=\"t\">"
      << fixed(step.value("t_ms", 0.0), 1) << " ms</span><span class=\"who\">"
      << html_escape(text_at(step, "/who") == "--" ? "--" : text_at(step, "/who")) << "</span><span class=\"text\">"
      << html_escape(text_at(step, "/text")) << "</span>";
  if (const auto lock = step.find("lock"); lock != step.end() && lock->is_object()) {
    const std::string effect = text_at(*lock, "/effect");
    out << "<span class=\"effect" << (wrong_owner_delete(effect) ? " bad" : "") << "\">" << html_escape(text_at(*lock, "/key"))
        << ": " << html_escape(effect) << "</span>";
  }
  out << "</li>\n";
  return out.str();
}

std::string legend_item(const std::string& lang, const char* swatch, const char* english) {
  return std::string("<span>") + swatch + html_escape(page_word(lang, english)) + "</span>";
}

std::string view_html(const std::string& lang) {
  return "<section id=\"view-pane\"><div id=\"now\"></div><svg id=\"timeline\" role=\"img\" aria-label=\"" +
         html_escape(page_word(lang, "timeline: a lane per client and per lock key")) + "\"></svg>\n<div id=\"legend\">" +
         legend_item(lang, "<i style=\"background:#1f77b466;border:1px solid #1f77b4\"></i>", "a client in the critical section") +
         legend_item(lang, "<i style=\"background:#d6272830\"></i>", "two holders at once") +
         legend_item(lang, "<i style=\"background:#1f77b499\"></i>", "a lock key: whose value the server holds") +
         legend_item(lang, "<i style=\"background:#c8e6c9;border:1px solid #558b2f\"></i>", "its lease, running down to its end") +
         legend_item(lang, "<i style=\"background:#ffcdd2;border:1px dashed #999\"></i>", "no TTL") +
         legend_item(lang, "<i style=\"background:#ffe0b2\"></i>", "an expiry stamp in the value (generation 2)") +
         legend_item(lang, "&#10005; ", "the key went away (expired, released, deleted)") +
         legend_item(lang, "&#9679; ", "a command (line: sent → answered)") +
         legend_item(lang, "&#9675; ", "a line of the story") + "</div></section>\n";
}

// What the script needs, as JSON safe inside <script>: no '<', '>' or '&' unescaped.
std::string page_data(const json& document) {
  json steps = json::array();
  for (const auto& step : document.value("steps", json::array())) {
    json slim = {{"step", step.value("step", 0)},
                 {"t_ms", step.value("t_ms", 0.0)},
                 {"who", text_at(step, "/who")},
                 {"kind", text_at(step, "/kind")},
                 {"state", step.value("state", json{{"inside", json::array()}, {"keys", json::array()}})}};
    if (step.contains("sent_ms")) slim["sent_ms"] = step["sent_ms"];
    if (step.contains("lock")) slim["lock"] = step["lock"];
    steps.push_back(std::move(slim));
  }
  json view = document.value("view", json::object());
  for (const char* field : {"clients", "sections", "overlaps", "keys"})
    if (!view.contains(field)) view[field] = json::array();
  if (!view.contains("end_ms")) view["end_ms"] = 0.0;
  std::string text = json{{"steps", steps}, {"view", view}, {"words", page_words(text_at(document, "/lang"))}}.dump();
  std::string safe;
  safe.reserve(text.size());
  for (char c : text) {
    if (c == '<') safe += "\\u003c";
    else if (c == '>') safe += "\\u003e";
    else if (c == '&') safe += "\\u0026";
    else safe += c;
  }
  return safe;
}

}  // namespace

std::string story_page(const json& document) {
  const json steps = document.value("steps", json::array());
  const std::string lang = text_at(document, "/lang");
  std::ostringstream out;
  // The body starts hiding what lies ahead of the current step; without the script nothing is hidden.
  out << html_head(html_escape(text_at(document, "/scenario") + " (" + text_at(document, "/lock") + ")"),
                   story_page_css(), html_lang(lang))
      << "<script>document.body.className = 'hide-ahead';</script>\n" << header_html(document, lang) << controls_html(steps.size(), lang) << "<main><section id=\"steps-pane\"><ol id=\"steps\">\n";
  for (const auto& step : steps) out << step_html(step);
  out << "</ol></section>\n"
      << view_html(lang) << "</main>\n<script type=\"application/json\" id=\"story\">" << page_data(document)
      << "</script>\n<script>" << story_page_script() << "</script>\n"
      << html_tail();
  return out.str();
}

}  // namespace locklab::harness
