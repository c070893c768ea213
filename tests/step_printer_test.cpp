// The story printer's presenter (harness/scenario/step_through.h) and the
// threads that narrate while it ends: every line a narrator shows is printed
// exactly once and in order, whether it came before the presenter left, while
// it was leaving, or after (review #9: a line queued after the presenter left
// was lost, and show() read the thread object finish() was joining).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "scenario/step_through.h"
#include "support/conditions.h"

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;

// Everything written to fd 1 while it lives goes to a file of its own.
class CapturedStdout {
 public:
  CapturedStdout() : path_(::testing::TempDir() + "locklab-step-printer-" + std::to_string(::getpid())) {
    std::fflush(stdout);
    saved_ = ::dup(STDOUT_FILENO);
    std::FILE* file = std::fopen(path_.c_str(), "w");
    if (file != nullptr) {
      ::dup2(::fileno(file), STDOUT_FILENO);
      std::fclose(file);
    }
  }
  ~CapturedStdout() {
    restore();
    std::remove(path_.c_str());
  }
  // What was written so far, without ending the capture.
  std::string so_far() const {
    std::ifstream in(path_);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::vector<std::string> lines() {
    restore();
    std::ifstream in(path_);
    std::vector<std::string> all;
    for (std::string line; std::getline(in, line);) all.push_back(line);
    return all;
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stdout);
    ::dup2(saved_, STDOUT_FILENO);
    ::close(saved_);
    saved_ = -1;
  }
  std::string path_;
  int saved_ = -1;
};

// fd 0 is a pipe while it lives: the test presses Enter for the presenter.
class StdinPipe {
 public:
  StdinPipe() {
    saved_ = ::dup(STDIN_FILENO);
    if (::pipe(keys_) == 0) ::dup2(keys_[0], STDIN_FILENO);
  }
  ~StdinPipe() {
    ::dup2(saved_, STDIN_FILENO);
    ::close(saved_);
    ::close(keys_[0]);
    ::close(keys_[1]);
  }
  StdinPipe(const StdinPipe&) = delete;
  StdinPipe& operator=(const StdinPipe&) = delete;
  void press_enter() { [[maybe_unused]] const ssize_t n = ::write(keys_[1], "\n", 1); }

 private:
  int saved_ = -1;
  int keys_[2] = {-1, -1};
};

std::string without(std::string text, const std::string& prompt) {
  for (auto at = text.find(prompt); at != std::string::npos; at = text.find(prompt)) text.erase(at, prompt.size());
  return text;
}

// Deterministic, in the order that lost a line before review #9: the presenter
// waits at the verdict prompt (step-through, Enter from a pipe), a narrator
// shows a line then, and only then is Enter pressed. The line is printed
// before finish() returns, after the steps; a line shown once finish()
// returned is printed at once, after it.
TEST(StepPrinter, ALineShownAtTheVerdictPromptIsPrintedBeforeFinishReturns) {
  StdinPipe keys;
  CapturedStdout captured;
  StepPrinter printer;
  printer.start(Playback::step_through, 0ms);
  printer.show("step 1");
  keys.press_enter();
  std::thread ender([&printer] { printer.finish(); });
  const bool at_verdict = wait_until([&] { return captured.so_far().find("the verdict") != std::string::npos; },
                                     10'000ms, 1ms);
  printer.show("late");  // the presenter is waiting for Enter: queued
  keys.press_enter();
  ender.join();
  printer.show("after");
  const std::vector<std::string> lines = captured.lines();
  ASSERT_TRUE(at_verdict) << "the presenter never reached the verdict prompt";
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  // Less the prompts, and the escape that erases each once Enter was pressed.
  text = without(without(text, "     [Enter] next step   [q Enter] play the rest "), "     [Enter] the verdict ");
  text = without(text, "\x1b[1A\r\x1b[2K");
  EXPECT_EQ(text, "step 1\nlate\nafter\n");
}

// The same under load: many narrators' lines, shown while the presenter ends.
TEST(StepPrinter, LinesShownWhileThePresenterEndsAreAllPrintedInOrder) {
  constexpr int kRounds = 200, kLines = 20;
  std::vector<std::string> printed;
  {
    CapturedStdout captured;
    for (int round = 0; round < kRounds; ++round) {
      StepPrinter printer;
      printer.start(Playback::paced, 1ms);
      std::thread narrator([&printer, round] {
        for (int i = 0; i < kLines; ++i) printer.show(std::to_string(round) + " " + std::to_string(i));
      });
      printer.finish();  // while the narrator may still be showing
      narrator.join();
    }
    printed = captured.lines();
  }
  ASSERT_EQ(printed.size(), static_cast<std::size_t>(kRounds * kLines)) << "lines were lost";
  for (int round = 0; round < kRounds; ++round)
    for (int i = 0; i < kLines; ++i)
      EXPECT_EQ(printed[static_cast<std::size_t>(round * kLines + i)], std::to_string(round) + " " + std::to_string(i));
}

}  // namespace
}  // namespace locklab::harness
