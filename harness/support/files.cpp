#include "support/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

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

std::optional<std::string> json_target_problem(const std::string& path) {
  return output_target_problem("--json", path);
}

std::optional<std::string> output_target_problem(const std::string& flag, const std::string& path) {
  const std::filesystem::path target(path);
  const auto dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return flag + ": directory " + dir.string() + " does not exist";
  if (std::filesystem::is_directory(target, ec)) return flag + ": " + path + " is a directory";
  if (::access(dir.c_str(), W_OK) != 0) return flag + ": cannot write into " + dir.string();
  return std::nullopt;
}

}  // namespace locklab::harness
