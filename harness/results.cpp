#include "results.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace locklab::harness {


Status write_file_atomically(const std::string& path, const std::string& text) {
  const std::filesystem::path target(path);
  const auto dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  // Built by append: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
  std::string name(".");
  name.append(target.filename().string()).append(".XXXXXX.tmp");
  std::string temp = (dir / name).string();
  const int fd = ::mkstemps(temp.data(), 4);
  if (fd < 0) return Error{ErrorKind::io, "cannot write " + path + ": " + std::strerror(errno)};
  auto fail = [&](const char* what) {
    const int saved = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    return Error{ErrorKind::io, "cannot write " + path + " (" + what + "): " + std::strerror(saved)};
  };
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("write");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0) return fail("chmod");
  if (::fsync(fd) != 0) return fail("fsync");
  if (::close(fd) != 0) {
    const int saved = errno;
    ::unlink(temp.c_str());
    return Error{ErrorKind::io, "cannot write " + path + " (close): " + std::strerror(saved)};
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temp.c_str());
    return Error{ErrorKind::io, "cannot write " + path + " (rename): " + std::strerror(saved)};
  }
  return Done{};
}

Status write_json_atomically(const std::string& path, const nlohmann::json& document) {
  return write_file_atomically(path, document.dump(2) + "\n");
}

const std::vector<std::string>& required_run_keys() {
  static const std::vector<std::string> keys = {
      "/schema", "/lock", "/config", "/redis/version", "/redis/endpoints", "/machine/cores",
      "/totals/attempts", "/totals/acquired", "/totals/timeouts", "/totals/errors", "/totals/unknown",
      "/throughput/acquisitions_per_s",
      "/latency/acquire_us/p50", "/latency/acquire_us/p90", "/latency/acquire_us/p99", "/latency/acquire_us/max",
      "/fairness/jain", "/fairness/max_wait_us", "/fairness/per_client_acquired",
      "/cost/round_trips_per_acquisition", "/cost/server_commands_per_acquisition",
      "/counter/expected", "/counter/actual",
      "/safety/overlaps", "/safety/max_concurrent_holders", "/safety/overlap_ms", "/safety/lost_updates",
      "/safety/wrong_owner_releases", "/safety/stalls", "/safety/keys_left", "/safety/stale_writes_rejected",
      "/handoff_us/p50", "/handoff_us/p90", "/leases_lost",
      "/verdict", "/verdict_reasons",
  };
  return keys;
}

std::vector<std::string> missing_run_keys(const nlohmann::json& document) {
  std::vector<std::string> missing;
  if (!document.is_object()) return {"(not a JSON object)"};
  for (const auto& key : required_run_keys())
    if (!document.contains(nlohmann::json::json_pointer(key))) missing.push_back(key);
  if (document.contains("schema") && document["schema"] != kRunSchema) missing.push_back("/schema = " + std::string(kRunSchema));
  return missing;
}

Result<nlohmann::json> load_run(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{ErrorKind::usage, "cannot read " + path + ": " + std::strerror(errno)};
  nlohmann::json document = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return Error{ErrorKind::usage, path + " is not valid JSON"};
  const auto missing = missing_run_keys(document);
  if (!missing.empty())
    return Error{ErrorKind::usage, path + " is not a locklab run result (missing " + missing.front() + ")"};
  return document;
}

}  // namespace locklab::harness
