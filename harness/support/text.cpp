#include "support/text.h"

#include <cstdio>

namespace locklab::harness {

std::string one_line(std::string message) {
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  return message;
}

int complain(const char* program, int code, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", program, one_line(message).c_str());
  return code;
}

std::string shell_word(const std::string& word) {
  if (word.find_first_of(" \t'\"$|&;<>()") == std::string::npos) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);  // ' ends, \' is one, ' reopens
  return quoted + "'";
}

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

}  // namespace locklab::harness
