// The shared HTML frame of the report pages (html.h).
#include "report/html.h"

namespace locklab::harness {

std::string html_head(const std::string& title, const std::string& css, const std::string& lang) {
  return "<!DOCTYPE html>\n<html lang=\"" + lang + "\"><head><meta charset=\"utf-8\"><title>" + title + "</title><style>" +
         css + "</style></head><body>\n";
}

std::string html_tail() { return "</body></html>\n"; }

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
