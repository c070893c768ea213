#include "token.h"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <stdexcept>

namespace locklab {

std::string random_token_128() {
  std::array<std::uint8_t, 16> bytes{};
  std::size_t filled = 0;
  while (filled < bytes.size()) {
    const ssize_t got = ::getrandom(bytes.data() + filled, bytes.size() - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      // getrandom cannot fail on Linux >= 3.17 once the pool is seeded; there is no safe fallback.
      throw std::runtime_error("getrandom failed");
    }
    filled += static_cast<std::size_t>(got);
  }
  std::string hex(32, '0');
  static constexpr char digits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    hex[2 * i] = digits[bytes[i] >> 4];
    hex[2 * i + 1] = digits[bytes[i] & 0x0f];
  }
  return hex;
}

std::string acquisition_token(const std::string& owner) {
  if (owner.empty()) return random_token_128();
  return owner + ":" + random_token_128();
}

}  // namespace locklab
