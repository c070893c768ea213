// The built `locklab` executable as a test's subprocess: its exit code and both
// streams. A test that includes this defines LOCKLAB_BINARY (tests/CMakeLists.txt).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

#ifndef LOCKLAB_BINARY
#error "LOCKLAB_BINARY must name the built locklab executable"
#endif

namespace locklab::testing {

// A fresh directory under the system temp directory, removed with everything in it.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix) {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) != nullptr) dir_ = pattern;
  }

  ~ScratchDir() {
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }

  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // Empty when mkdtemp failed.
  const std::string& str() const noexcept { return dir_; }

  std::string path(const std::string& name) const { return (std::filesystem::path(dir_) / name).string(); }

 private:
  std::string dir_;
};

struct Outcome {
  int exit_code = -1;  // -1: it did not exit normally (or could not be started)
  std::string out;
  std::string err;
};

inline std::string slurp(const std::string& file) {
  std::ifstream in(file);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs `locklab <args>` through the shell (`args` quoted by the caller where it
// needs it). The streams pass through files in a directory of this call's own,
// so concurrent runs do not share them.
inline Outcome run_locklab(const std::string& args) {
  const ScratchDir streams("locklab-streams");
  if (streams.str().empty()) return Outcome{-1, "", "cannot create a directory for locklab's streams"};
  const std::string out = streams.path("stdout"), err = streams.path("stderr");
  const std::string command = std::string("'") + LOCKLAB_BINARY + "' " + args + " >'" + out + "' 2>'" + err + "'";
  const int status = std::system(command.c_str());
  Outcome outcome;
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  outcome.out = slurp(out);
  outcome.err = slurp(err);
  return outcome;
}

}  // namespace locklab::testing
