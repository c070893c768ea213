// The shared HTML frame of the report pages (html.h).
#include "report/html.h"

namespace locklab::harness {

std::string html_head(const std::string& title, const std::string& css, const std::string& lang) {
  return "<!DOCTYPE html>\n<html lang=\"" + lang + "\"><head><meta charset=\"utf-8\"><title>" + title + "</title><style>" +
         css + "</style></head><body>\n";
}

std::string html_tail() { return "</body></html>\n"; }

std::string body_css(int max_width_px, const std::string& margin) {
  return "body{font-family:system-ui,sans-serif;margin:" + margin + ";color:#222" +
         (max_width_px > 0 ? ";max-width:" + std::to_string(max_width_px) + "px" : std::string()) + "}";
}

std::string page_css(int max_width_px) {
  return body_css(max_width_px) +
         "table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #ccc;padding:3px 6px;text-align:right}"
         "th{background:#f3f3f3}";
}

std::string html_escape(const std::string& raw) {
  std::string out;
  for (char c : raw) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace locklab::harness
