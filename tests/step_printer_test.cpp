// The story printer's presenter (harness/scenario/step_through.h) and the
// threads that narrate while it ends: every line a narrator shows is printed
// exactly once and in order, whether it came before the presenter left, while
// it was leaving, or after (review #9: a line queued after the presenter left
// was lost, and show() read the thread object finish() was joining).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "scenario/step_through.h"

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
