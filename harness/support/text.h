// One-line text for messages and commands: an error printed as one line (a
// reply or a server log can carry newlines), a word quoted so that a recorded
// command can be pasted back into a shell, a number with fixed decimals.
#pragma once

#include <string>

namespace locklab::harness {

// `message` with every newline and carriage return turned into a space.
std::string one_line(std::string message);

// "PROGRAM: MESSAGE" on stderr, as one line; returns `code` (the exit status).
int complain(const char* program, int code, const std::string& message);

// `word` as a shell reads it back: quoted in '' when it holds a blank, a quote
// or a shell metacharacter ($ | & ; < > ( )), an inner ' written '\'', else as it is.
std::string shell_word(const std::string& word);

// `value` with `decimals` digits after the point ("12.50"), as reports and narrations print numbers.
std::string fixed(double value, int decimals);

}  // namespace locklab::harness
