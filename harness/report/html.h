// The frame every HTML page of the reports shares: the head (doctype, charset,
// title, inline CSS: the pages stay self-contained), the CSS rules the pages
// have in common, the tail, and the escape for text inside elements and
// attribute values.
#pragma once

#include <string>

namespace locklab::harness {

// "<!DOCTYPE html>...<title>TITLE</title><style>CSS</style></head><body>\n".
// title and css are written as given (both are ours, not measured text); lang is the
// page's HTML language ("en", "zh-CN": a browser picks the font for its script by it).
std::string html_head(const std::string& title, const std::string& css, const std::string& lang = "en");
// "</body></html>\n".
std::string html_tail();

// The body rule a page's CSS starts with: the system font, dark grey text, `margin` around, at most
// max_width_px wide (0: no limit; the index page, which holds two pages, has none and a narrower margin).
std::string body_css(int max_width_px, const std::string& margin = "2em");
// A page of number tables (the comparison, the scale sweep): body_css(max_width_px), then collapsed tables
// of bordered, right-aligned cells under grey headings. The page appends its own rules (which column is text).
std::string page_css(int max_width_px);

// Text made safe inside HTML/SVG elements and attribute values (<, >, &, ").
std::string html_escape(const std::string& raw);

}  // namespace locklab::harness
