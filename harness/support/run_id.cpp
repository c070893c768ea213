#include "support/run_id.h"

#include <ctime>
#include <filesystem>

namespace locklab::harness {

std::string new_run_id(const std::string& parent) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  std::string id = stamp;
  for (int n = 2; std::filesystem::exists(std::filesystem::path(parent) / id); ++n) id = std::string(stamp) + "-" + std::to_string(n);
  return id;
}

Result<std::string> result_dir(const std::string& out, const std::string& parent) {
  const std::string dir = out.empty() ? (std::filesystem::path(parent) / new_run_id(parent)).string() : out;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error{ErrorKind::io, "cannot create " + dir + ": " + ec.message()};
  return dir;
}

}  // namespace locklab::harness
