// support/text.h: the one-line message and the shell word every recorded
// command line is made of.
#include <gtest/gtest.h>

#include "support/text.h"

namespace locklab::testing {
namespace {

using harness::one_line;
using harness::shell_word;

TEST(SupportText, OneLineTurnsNewlinesAndCarriageReturnsIntoSpaces) {
  EXPECT_EQ(one_line("a\nb\r\nc"), "a b  c");
  EXPECT_EQ(one_line("plain"), "plain");
}

TEST(SupportText, ShellWordQuotesOnlyWhatAShellWouldSplitOrExpand) {
  EXPECT_EQ(shell_word("--clients"), "--clients");
  EXPECT_EQ(shell_word("holder-crash:at=cs-enter"), "holder-crash:at=cs-enter");
  EXPECT_EQ(shell_word("a b"), "'a b'");
  EXPECT_EQ(shell_word("$HOME"), "'$HOME'");
  EXPECT_EQ(shell_word("a|b"), "'a|b'");
  EXPECT_EQ(shell_word("(x)"), "'(x)'");
}

TEST(SupportText, ShellWordKeepsAnInnerQuoteReadable) {
  // 'it'\''s' is read back by a shell as it's.
  EXPECT_EQ(shell_word("it's"), "'it'\\''s'");
}

}  // namespace
}  // namespace locklab::testing
