#include "servers/clock_jump.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace locklab::harness {

Status write_clock_offset(const std::string& offset_file, std::chrono::milliseconds offset) {
  const std::string temp = offset_file + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::trunc);
    out << offset.count() << '\n';
    out.close();
    if (!out) return Error{ErrorKind::io, "cannot write " + temp};
  }
  if (std::rename(temp.c_str(), offset_file.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temp.c_str());
    return Error{ErrorKind::io, "cannot replace " + offset_file + ": " + why};
  }
  return Done{};
}

std::string clock_shim_path() { return LOCKLAB_CLOCK_SHIM_PATH; }

std::vector<std::string> clock_shim_environment(const std::string& offset_file) {
  return {"LD_PRELOAD=" + clock_shim_path(), std::string(LOCKLAB_CLOCK_OFFSET_ENV "=") + offset_file};
}

bool runs_clock_shim(pid_t pid) {
  std::error_code ec;
  const auto shim = std::filesystem::canonical(clock_shim_path(), ec);
  if (ec) return false;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.ends_with(shim.string())) return true;
  return false;
}

Status jump_clock(const RedisServer& server, std::chrono::milliseconds offset) {
  if (!server.under_clock_shim())
    return Error{ErrorKind::usage, "server " + server.endpoint().to_string() +
                                       " was not started under the clock shim (ServerOptions::clock_shim)"};
  return write_clock_offset(server.clock_offset_file(), offset);
}

}  // namespace locklab::harness
