// The frame every HTML page of the reports shares: the head (doctype, charset,
// title, inline CSS: the pages stay self-contained), the tail, and the escape
// for text inside elements and attribute values.
#pragma once

#include <string>

namespace locklab::harness {

// "<!DOCTYPE html>...<title>TITLE</title><style>CSS</style></head><body>\n".
// title and css are written as given (both are ours, not measured text); lang is the
// page's HTML language ("en", "zh-CN": a browser picks the font for its script by it).
std::string html_head(const std::string& title, const std::string& css, const std::string& lang = "en");
// "</body></html>\n".
std::string html_tail();

// Text made safe inside HTML/SVG elements and attribute values (<, >, &, ").
std::string html_escape(const std::string& raw);

}  // namespace locklab::harness
