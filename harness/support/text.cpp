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
  return word.find_first_of(" \t'\"$|&;<>()") == std::string::npos ? word : "'" + word + "'";
}

}  // namespace locklab::harness
